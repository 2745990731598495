/**
 * Webhook intake on a real `wrangler dev`: a burst of 500 signed Gitea deliveries (10% of them
 * redeliveries of earlier ones, some still in flight) sent 16 at a time. Prints p50/p99 latency
 * against two baselines measured the same way in the same run — `GET /api/ping` (no storage) and an
 * unsigned delivery rejected with 401 (config and secret lookups, no writes) — and then counts, from
 * the task store, the tasks created, duplicates (a delivery with more than one task; must be 0) and
 * lost deliveries (accepted but without its task; must be 0).
 */
import { createHmac } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { benchClient, benchWorkspace, startBenchWorker, type BenchCall } from "./support.ts";
import type { DevServer } from "../test/support/wrangler-dev.ts";

const BURST = 500;
const REDELIVERY_SHARE = 0.1;
const IN_FLIGHT = 16;
/** The webhook secret of the intake workspace (and of the peer's minimal receiver in `bench:peers`). */
export const WEBHOOK_SECRET = "bench-webhook-secret";
const SECRET = WEBHOOK_SECRET;
const ROOT = resolve(import.meta.dirname, "..");

interface Delivery {
  id: string;
  eventType: string;
  body: string;
  redelivery: boolean;
}

function fixture<T extends Record<string, unknown>>(path: string): T {
  return JSON.parse(readFileSync(resolve(ROOT, path), "utf8")) as T;
}
type WithIssue = Record<string, unknown> & { issue: Record<string, unknown> };
type WithPull = Record<string, unknown> & { pull_request: Record<string, unknown> };

/** Unique deliveries that each create exactly one task (numbers differ, so no two are the same work). */
export function uniqueDelivery(i: number): Omit<Delivery, "redelivery"> {
  const id = `bench-${i}`;
  switch (i % 3) {
    case 0: {
      const p = fixture<WithIssue>("test/fixtures/gitea/issue_assign.json");
      p.issue = { ...p.issue, number: 1000 + i, title: `Bench issue ${i}` };
      return { id, eventType: "issue_assign", body: JSON.stringify(p) };
    }
    case 1: {
      const p = fixture<WithPull>("test/fixtures/upstream/gitea/webhooks/HookPullRequestReviewAck.json");
      p.number = 1000 + i;
      p.pull_request = { ...p.pull_request, number: 1000 + i };
      return { id, eventType: "pull_request_review_approved", body: JSON.stringify(p) };
    }
    default: {
      const p = fixture<WithIssue>("test/fixtures/gitea/issue_comment_mention.json");
      p.issue = { ...p.issue, number: 1000 + i };
      return { id, eventType: "issue_comment", body: JSON.stringify(p) };
    }
  }
}

function burst(): Delivery[] {
  const redeliveries = Math.round(BURST * REDELIVERY_SHARE);
  const out: Delivery[] = [];
  for (let i = 0; i < BURST - redeliveries; i++) out.push({ ...uniqueDelivery(i), redelivery: false });
  // Each redelivery goes in some time after its original (deterministic spread), often while it is in flight.
  for (let k = 0; k < redeliveries; k++) {
    const original = out[(k * 37) % (BURST - redeliveries)]!;
    const at = Math.min(out.length, out.indexOf(original) + 1 + ((k * 13) % 40));
    out.splice(at, 0, { ...original, redelivery: true });
  }
  return out;
}

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))] ?? NaN;
}

async function timed<T>(
  items: T[],
  send: (item: T) => Promise<Response>,
): Promise<{ ms: number[]; statuses: number[]; bodies: unknown[]; wallMs: number }> {
  const ms: number[] = new Array(items.length);
  const statuses: number[] = new Array(items.length);
  const bodies: unknown[] = new Array(items.length);
  let next = 0;
  const start = performance.now();
  await Promise.all(
    Array.from({ length: IN_FLIGHT }, async () => {
      for (;;) {
        const i = next++;
        if (i >= items.length) return;
        const t0 = performance.now();
        const res = await send(items[i]!);
        const text = await res.text();
        ms[i] = performance.now() - t0;
        statuses[i] = res.status;
        bodies[i] = text ? (JSON.parse(text) as unknown) : null;
      }
    }),
  );
  return { ms, statuses, bodies, wallMs: performance.now() - start };
}

/**
 * A workspace ready for webhook intake alone: the webhook secret, a toolchain section with no dispatch
 * after intake (runs would need models and compete for the same CPU), and the two agents the deliveries
 * route to. Shared by this bench and `bench:peers`.
 */
export async function intakeWorkspace(dev: DevServer, call: BenchCall): Promise<{ id: string; token: string }> {
  const workspace = await benchWorkspace(dev, call);
  await call("PUT", "/api/secrets/GITEA_WEBHOOK_SECRET", workspace.token, { value: SECRET });
  await call("PUT", "/api/config", workspace.token, {
    toolchain: {
      gitea_base_url: "http://127.0.0.1:9",
      webhook_secret: "GITEA_WEBHOOK_SECRET",
      concurrency: { dispatch_on_intake: false },
    },
  });
  for (const a of [
    { id: "jony", gitea_username: "jony", roles: ["developer"] },
    { id: "nice", gitea_username: "a_nice_user", roles: ["reviewer"] },
  ]) {
    await call("POST", "/api/agents", workspace.token, a);
  }
  return workspace;
}

/** Posts one delivery to the workspace's Gitea webhook target, signed with the intake workspace's secret unless `signed` is false. */
export function postDelivery(
  dev: DevServer,
  workspaceId: string,
  d: Pick<Delivery, "id" | "eventType" | "body">,
  signed = true,
): Promise<Response> {
  return fetch(`${dev.url}/webhooks/gitea/${workspaceId}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Gitea-Event-Type": d.eventType,
      "X-Gitea-Delivery": d.id,
      ...(signed ? { "X-Gitea-Signature": createHmac("sha256", SECRET).update(d.body).digest("hex") } : {}),
    },
    body: d.body,
  });
}

export async function run(): Promise<void> {
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const { id: ws, token } = await intakeWorkspace(dev, call);

    const post = (d: Pick<Delivery, "id" | "eventType" | "body">, signed: boolean) => postDelivery(dev, ws, d, signed);

    // Warm-up (not counted): isolate, D1 and code paths.
    await timed(
      Array.from({ length: 20 }, (_, i) => i),
      () => fetch(`${dev.url}/api/ping`),
    );
    await timed(
      Array.from({ length: 20 }, (_, i) => ({ ...uniqueDelivery(i), id: `warm-${i}` })),
      (d) => post(d, false),
    );

    const deliveries = burst();
    const ping = await timed(deliveries, () => fetch(`${dev.url}/api/ping`));
    const unsigned = await timed(deliveries, (d) => post({ ...d, id: `unsigned-${d.id}` }, false));
    const signed = await timed(deliveries, (d) => post(d, true));

    // What the task store holds afterwards, per delivery.
    const tasksByDelivery = new Map<string, number>();
    let cursor = "";
    let total = 0;
    for (;;) {
      const page = (await (await call("GET", `/api/toolchain/tasks?limit=200${cursor}`, token)).json()) as {
        tasks: { delivery_id: string | null }[];
        next_before: number | null;
        next_before_id: string | null;
      };
      for (const t of page.tasks) tasksByDelivery.set(t.delivery_id ?? "", (tasksByDelivery.get(t.delivery_id ?? "") ?? 0) + 1);
      total += page.tasks.length;
      if (page.next_before === null || page.next_before_id === null) break;
      cursor = `&before=${page.next_before}&before_id=${encodeURIComponent(page.next_before_id)}`;
    }
    const unique = deliveries.filter((d) => !d.redelivery);
    const duplicates = [...tasksByDelivery.values()].reduce((n, c) => n + Math.max(0, c - 1), 0);
    const lost = unique.filter((d) => !tasksByDelivery.get(d.id)).length;
    const statusCount = (xs: number[]) =>
      Object.entries(xs.reduce<Record<number, number>>((m, s) => ({ ...m, [s]: (m[s] ?? 0) + 1 }), {}))
        .map(([s, n]) => `${s}×${n}`)
        .join(" ");
    // Every answer for one delivery id names that delivery, and exactly one of them is not a duplicate (the tasks
    // are made after the answer: docs/toolchain.md, "Webhook intake"; the task count above checks them).
    const answers = new Map<string, { duplicate: boolean; task_ids: string }[]>();
    deliveries.forEach((d, i) => {
      const b = signed.bodies[i] as { delivery_id?: string; duplicate?: boolean } | null;
      answers.set(d.id, [...(answers.get(d.id) ?? []), { duplicate: b?.duplicate === true, task_ids: b?.delivery_id ?? "" }]);
    });
    const consistent = [...answers.values()].filter(
      (a) => a.filter((x) => !x.duplicate).length === 1 && new Set(a.map((x) => x.task_ids)).size === 1,
    ).length;
    const row = (name: string, r: { ms: number[]; wallMs: number; statuses: number[] }, base?: { ms: number[] }) => {
      const s = [...r.ms].sort((a, b) => a - b);
      const b = base ? [...base.ms].sort((x, y) => x - y) : null;
      const ratio = b
        ? `  (×${(quantile(s, 0.5) / quantile(b, 0.5)).toFixed(1)} p50, ×${(quantile(s, 0.99) / quantile(b, 0.99)).toFixed(1)} p99 vs ping)`
        : "";
      console.log(
        `${name.padEnd(40)} p50 ${quantile(s, 0.5).toFixed(1).padStart(6)} ms  p99 ${quantile(s, 0.99).toFixed(1).padStart(6)} ms  ${((r.ms.length / r.wallMs) * 1000).toFixed(0).padStart(4)}/s  [${statusCount(r.statuses)}]${ratio}`,
      );
    };
    console.log(
      `${BURST} requests each, ${IN_FLIGHT} in flight; ${unique.length} unique deliveries + ${BURST - unique.length} redeliveries`,
    );
    row("baseline: GET /api/ping", ping);
    row("baseline: unsigned delivery (401)", unsigned, ping);
    row("signed deliveries (intake + D1 batch)", signed, ping);
    const u = [...unsigned.ms].sort((a, b) => a - b);
    const s = [...signed.ms].sort((a, b) => a - b);
    console.log(
      `signed vs unsigned-401: ×${(quantile(s, 0.5) / quantile(u, 0.5)).toFixed(1)} p50, ×${(quantile(s, 0.99) / quantile(u, 0.99)).toFixed(1)} p99`,
    );
    console.log(`tasks created: ${total} (expected ${unique.length})  duplicates: ${duplicates} (must be 0)  lost: ${lost} (must be 0)`);
    console.log(`delivery ids answered consistently (one first outcome, redeliveries repeat it): ${consistent}/${answers.size}`);
  } finally {
    await dev.stop();
  }
}
