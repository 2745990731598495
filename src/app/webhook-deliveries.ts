/**
 * Composition root, webhook deliveries after their answer (docs/toolchain.md, "Webhook intake"): a
 * recorded delivery is processed by the toolchain (exactly once, through its claim), then the
 * processor that won starts a dispatch pass and hands a push to the plugin sources; a delivery intake
 * settled before its answer gets only those follow-ups. Run by the
 * webhook route in `waitUntil` (the fast path) and by the cron sweep for deliveries whose fast path
 * never finished (a crash after the answer).
 */
import type { Env } from "../storage/env.ts";
import { errorFields, log } from "../kernel/log.ts";
import { CLAIM_STALE_MS, processDelivery, RECEIVED_GRACE_MS, type Processed, type Recorded } from "../domains/toolchain/intake.ts";
import { pendingDeliveries } from "../domains/toolchain/delivery-store.ts";
import { dispatchWorkspace } from "../domains/toolchain/dispatcher.ts";
import { handleGiteaPushDelivery } from "../domains/governance/plugin-sources.ts";

/** Deliveries one sweep tries at most (the cron ticks every minute). */
const SWEEP_BATCH = 25;

/** `recorded`: what intake wrote, for the processing its answer starts (src/domains/toolchain/intake.ts). */
export async function processWebhookDelivery(
  env: Env,
  workspaceId: string,
  deliveryId: string,
  now = Date.now(),
  recorded?: Recorded,
): Promise<void> {
  const done = await processDelivery(env, workspaceId, deliveryId, now, recorded);
  if (done) await followUpDelivery(env, workspaceId, done);
}

/**
 * What follows a delivery's outcome, once, from the processor that wrote it (or from intake, for a
 * delivery settled before its answer): a dispatch pass, and a push handed to the plugin sources.
 */
export async function followUpDelivery(env: Env, workspaceId: string, done: Processed): Promise<void> {
  const deliveryId = done.delivery.deliveryId;
  const follow: Promise<unknown>[] = [];
  if (done.dispatch) follow.push(dispatchWorkspace(env, workspaceId));
  // Plugin sources watching the pushed repository record the new commit (src/domains/governance/plugin-sources.ts).
  if (done.delivery.eventType === "push" && done.delivery.outcome !== "rejected") {
    follow.push(handleGiteaPushDelivery(env, workspaceId, new TextEncoder().encode(done.body)));
  }
  for (const r of await Promise.allSettled(follow)) {
    if (r.status === "rejected")
      log.error("webhook follow-up failed", { workspace_id: workspaceId, delivery_id: deliveryId, ...errorFields(r.reason) });
  }
}

/** The cron sweep: deliveries still `received` after the grace period, or whose claim went stale. */
export async function sweepWebhookDeliveries(env: Env, now: number): Promise<number> {
  const pending = await pendingDeliveries(env, now - RECEIVED_GRACE_MS, now - CLAIM_STALE_MS, SWEEP_BATCH);
  for (const p of pending) {
    await processWebhookDelivery(env, p.workspaceId, p.deliveryId, now).catch((err: unknown) =>
      log.error("webhook delivery processing failed", { workspace_id: p.workspaceId, delivery_id: p.deliveryId, ...errorFields(err) }),
    );
  }
  return pending.length;
}
