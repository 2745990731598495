/**
 * A workspace wired as a Gitea toolchain target, through the API as an admin would do it: webhook
 * secret and Gitea token stored as secrets, the `toolchain` config section, and the test cast of
 * agents. Plus `deliver()`, which signs and posts a webhook like Gitea does, and `deliverOk()`, which
 * also waits for the delivery's outcome (a delivery is processed after its 202: docs/toolchain.md).
 */
import { expect } from "vitest";
import { env } from "cloudflare:workers";
import { getDelivery, deliveryView } from "../../src/domains/toolchain/delivery-store.ts";
import { call, json, newWorkspace, type TestWorkspace } from "./api.ts";
import { hmacSha256Hex } from "../../src/kernel/hash.ts";
import { randomToken } from "../../src/kernel/ids.ts";
import { CAST_BODIES } from "./toolchain-cast.ts";

export const WEBHOOK_SECRET = "whsec-0123456789";
export const GITEA_URL = "http://gitea.test";

export async function toolchainWorkspace(
  toolchain: Record<string, unknown> = {},
  workspaceConfig: Record<string, unknown> = {},
): Promise<TestWorkspace> {
  const ws = await newWorkspace();
  for (const [name, value] of [
    ["GITEA_WEBHOOK_SECRET", WEBHOOK_SECRET],
    ["GITEA_TOKEN", "beaver-bot-token"],
  ]) {
    expect((await call("PUT", `/api/secrets/${name}`, { token: ws.admin, body: { value } })).status).toBe(200);
  }
  const config = {
    ...workspaceConfig,
    toolchain: {
      gitea_base_url: GITEA_URL,
      webhook_secret: "GITEA_WEBHOOK_SECRET",
      gitea_token_secret: "GITEA_TOKEN",
      concurrency: { dispatch_on_intake: false },
      retry: { backoff_ms: 0 },
      ...toolchain,
    },
  };
  const put = await call("PUT", "/api/config", { token: ws.admin, body: config });
  expect(put.status, await put.clone().text()).toBe(200);
  for (const body of CAST_BODIES) expect((await call("POST", "/api/agents", { token: ws.admin, body })).status).toBe(201);
  return ws;
}

/**
 * The same payload as a later, distinct event would send it. Real events never share a byte-identical
 * body (each carries its own ids and timestamps), and intake answers an identical signed body under a
 * new delivery id as a replay (docs/toolchain.md, "Webhook intake"); trailing whitespace changes the
 * bytes and nothing the parser sees.
 */
export function anotherEvent(body: string, n: number): string {
  return body + " ".repeat(n);
}

export interface DeliverOptions {
  id?: string;
  sign?: "gitea" | "hub" | "none" | "wrong";
  secret?: string;
  headers?: Record<string, string>;
}

export async function deliver(workspaceId: string, eventType: string | null, body: string, opts: DeliverOptions = {}): Promise<Response> {
  const headers: Record<string, string> = { "Content-Type": "application/json", ...opts.headers };
  const id = opts.id ?? `dlv-${randomToken(12)}`;
  if (id) headers["X-Gitea-Delivery"] = id;
  if (eventType) headers["X-Gitea-Event-Type"] = eventType;
  const hex = await hmacSha256Hex(opts.secret ?? WEBHOOK_SECRET, body);
  switch (opts.sign ?? "gitea") {
    case "gitea":
      headers["X-Gitea-Signature"] = hex;
      break;
    case "hub":
      headers["X-Hub-Signature-256"] = `sha256=${hex}`;
      break;
    case "wrong":
      headers["X-Gitea-Signature"] = hex.replace(/^./, (c) => (c === "0" ? "1" : "0"));
      break;
    case "none":
      break;
  }
  return call("POST", `/webhooks/gitea/${workspaceId}`, { token: null, rawBody: body, headers });
}

export interface DeliveryAnswer {
  delivery_id: string;
  outcome: "received" | "processing" | "tasks_created" | "ignored" | "rejected" | "failed";
  reason: string | null;
  task_ids: string[];
  duplicate: boolean;
  event_type: string;
}

/**
 * Posts a delivery, expects 202 — `received`, or already its outcome when intake settled it before the
 * answer — and answers its outcome once processed.
 */
export async function deliverOk(workspaceId: string, eventType: string, body: string, opts: DeliverOptions = {}): Promise<DeliveryAnswer> {
  const res = await deliver(workspaceId, eventType, body, opts);
  const text = await res.text();
  expect(res.status, text).toBe(202);
  const answer = JSON.parse(text) as DeliveryAnswer;
  expect(["received", "tasks_created", "ignored"]).toContain(answer.outcome);
  const done = await processed(workspaceId, answer.delivery_id);
  if (answer.outcome !== "received") expect({ ...done, duplicate: false }).toMatchObject(answer);
  return done;
}

/**
 * The delivery once its processing after the answer wrote an outcome (polled in D1 every 5 ms, for at
 * most ~10 s: the processing runs in the Worker's `waitUntil`).
 */
export async function processed(workspaceId: string, deliveryId: string): Promise<DeliveryAnswer> {
  for (let i = 0; i < 2000; i++) {
    const d = await getDelivery(env, workspaceId, deliveryId);
    if (d && d.outcome !== "received" && d.outcome !== "processing") return { ...deliveryView(d), duplicate: false };
    await new Promise((r) => setTimeout(r, 5));
  }
  throw new Error(`delivery ${deliveryId} was not processed`);
}

export interface TaskJson {
  id: string;
  agent_id: string;
  action_type: string;
  status: string;
  repo: string | null;
  number: number | null;
  attempts: number;
  business_failures: number;
  failure_kind: string | null;
  last_error: string | null;
  must_haves: { steps: string[]; context: Record<string, unknown>; event_type: string; action_type: string; from: string; source: string };
  title: string;
  description: string;
  origin_task_id: string | null;
}

export interface TaskDetail {
  task: TaskJson;
  comments: { author: string; comment_type: string; body: string }[];
  outputs: { type: string; content: string }[];
  history: { event: string; from_status: string | null; to_status: string | null; detail: Record<string, unknown> }[];
}

export async function getTask(token: string, id: string): Promise<TaskDetail> {
  const res = await call("GET", `/api/toolchain/tasks/${id}`, { token });
  expect(res.status).toBe(200);
  return json<TaskDetail>(res);
}

export async function listTasks(token: string, query = ""): Promise<TaskJson[]> {
  const res = await call("GET", `/api/toolchain/tasks${query}`, { token });
  expect(res.status).toBe(200);
  return (await json<{ tasks: TaskJson[] }>(res)).tasks;
}
