/**
 * A webhook delivery is answered 202 once recorded and processed after the answer
 * (docs/toolchain.md, "Webhook intake"): e2e tests that need its tasks wait for its outcome here,
 * through `GET /api/toolchain/deliveries` as a client would.
 */
import { api } from "./client.ts";

export interface DeliveryOutcome {
  delivery_id: string;
  outcome: string;
  reason: string | null;
  task_ids: string[];
}

/** The delivery once its outcome is written (polled every 50 ms, for at most 30 s). */
export async function outcomeOf(token: string, deliveryId: string): Promise<DeliveryOutcome> {
  const deadline = Date.now() + 30_000;
  for (;;) {
    const res = await api("GET", "/api/toolchain/deliveries?limit=200", { token });
    const { deliveries } = (await res.json()) as { deliveries: DeliveryOutcome[] };
    const d = deliveries.find((x) => x.delivery_id === deliveryId);
    if (d && d.outcome !== "received" && d.outcome !== "processing") return d;
    if (Date.now() > deadline) throw new Error(`delivery ${deliveryId} was not processed: ${JSON.stringify(d)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** The outcome of a delivery just answered 202. */
export async function outcomeAfter(token: string, res: Response): Promise<DeliveryOutcome> {
  const { delivery_id } = (await res.json()) as { delivery_id: string };
  return outcomeOf(token, delivery_id);
}
