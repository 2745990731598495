/**
 * Webhook intake: signature first, then dedupe on `X-Gitea-Delivery` and on the signed body (a
 * replay under a new delivery id), then classification, PR resolution (`resolve-pull.ts`), routing
 * and drafting — and finally one D1 batch that writes the delivery, its tasks, their history and the
 * PR index together, so a task is never half-created and a redelivery or replay finds the first
 * outcome. Returns what happened as data (`IntakeResult`); the edge decides the HTTP answer.
 */
import type { BatchItem } from "drizzle-orm/batch";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { configAndRevisionOf, configAndRevisionStatement, type ConfigAndRevisionRow } from "../../storage/config/store.ts";
import { resolveSecretAt } from "../../storage/secrets/store.ts";
import { sha256Hex } from "../../kernel/hash.ts";
import { signatureHeaders, verifySignature } from "../gitea/signature.ts";
import { toolchainConfigOf, type ToolchainConfig } from "./config.ts";
import { listAgentsAt } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { classify, PayloadError, UnsupportedEventError, type Classified, type PullFacts } from "./scenarios.ts";
import { routeScenario } from "./routing.ts";
import { draftTask, type TaskDraft } from "./task-drafts.ts";
import { commentInsertQuery, newTaskId, openDedupeKeys, taskInsertQueries, type NewComment } from "./task-store.ts";
import {
  bodyGuardReleaseQuery,
  deliveryInsertQuery,
  deliveryView,
  findPrior,
  priorOf,
  priorStatement,
  type DeliveryRow,
  type Delivery,
} from "./delivery-store.ts";
import { pullUpsertQueries } from "./pr-index.ts";
import { resolvePull } from "./resolve-pull.ts";
import { routeInfraFailure } from "./infra-failures.ts";

export type DeliveryView = ReturnType<typeof deliveryView> & { duplicate: boolean };

/** What intake made of a delivery. */
export type IntakeResult =
  /** No such workspace, no secret configured, or a bad signature: deliberately indistinguishable. */
  | { kind: "unauthorized" }
  /** The delivery id header is missing or malformed: nothing was recorded. */
  | { kind: "malformed"; reason: string }
  /** This delivery id, or this signed body within the replay window, was seen before: the first outcome, unchanged. */
  | { kind: "duplicate"; delivery: DeliveryView }
  /** Recorded as rejected (bad event type or payload). */
  | { kind: "rejected"; delivery: DeliveryView; reason: string }
  /** Recorded; tasks may have been created. `dispatch`: start them now (the workspace dispatches on intake). */
  | { kind: "accepted"; delivery: DeliveryView; dispatch: boolean };

/**
 * How long a signed body, once answered, refuses to be answered again under another delivery id
 * (docs/toolchain.md, "Webhook intake"). The signature covers only the body, so without this a
 * captured body replayed with a fresh `X-Gitea-Delivery` would create new tasks every time. Gitea
 * itself redelivers with the same id, and two real events never share a byte-identical payload
 * (each carries its own ids and timestamps). After the window the same body is accepted again, so
 * the guard costs one index entry per delivery rather than a promise kept forever.
 */
export const REPLAY_WINDOW_MS = 7 * 24 * 60 * 60 * 1000;

const DELIVERY_ID = /^[A-Za-z0-9._:-]{1,200}$/;
const EVENT_TYPE = /^[a-z_]{1,64}$/;

// One answer for "no such workspace", "no secret configured" and "bad signature": the caller learns
// nothing about which workspaces exist.
const UNAUTHORIZED: IntakeResult = { kind: "unauthorized" };

function answerFor(d: Delivery, duplicate: boolean, dispatchOnIntake = false): IntakeResult {
  const delivery = { ...deliveryView(d), duplicate };
  if (duplicate) return { kind: "duplicate", delivery };
  if (d.outcome === "rejected") return { kind: "rejected", delivery, reason: d.reason ?? "Rejected delivery" };
  return { kind: "accepted", delivery, dispatch: dispatchOnIntake && d.outcome === "tasks_created" };
}

interface Routed {
  drafts: TaskDraft[];
  ignored: string[];
  pulls: PullFacts[];
  /** Outages added to the open infrastructure task, written with the delivery. */
  observations: { taskId: string; comment: NewComment }[];
}

async function routeAll(
  env: Env,
  workspaceId: string,
  config: ToolchainConfig,
  agents: Agent[],
  c: Classified,
  deliveryId: string,
): Promise<Routed> {
  const drafts: TaskDraft[] = [];
  const ignored: string[] = c.ignored ? [c.ignored] : [];
  const pulls = [...c.pulls];
  const observations: Routed["observations"] = [];
  const taken = new Set<string>();
  for (let s of c.scenarios) {
    if (s.kind === "ci_failure" || s.kind === "deploy_failure") {
      const r = await resolvePull(env, workspaceId, config, s);
      if (r.fromGitea && r.pr) pulls.push(r.pr);
      s = { ...s, pr: r.pr };
      if (r.outage) {
        const infra = await routeInfraFailure(env, workspaceId, config, agents, {
          operation: r.outage.operation,
          error: r.outage.message,
          originTaskId: null,
          originTitle: `delivery ${deliveryId} (${s.kind} on ${s.repo}@${s.sha.slice(0, 12)})`,
        });
        if (infra.kind === "new") drafts.push(infra.draft);
        if (infra.kind === "add") observations.push({ taskId: infra.taskId, comment: infra.observation });
        if (infra.kind === "none") ignored.push(`infrastructure_failure: ${infra.reason}`);
        ignored.push(`${s.kind}: Gitea unreachable while looking up the pull request of ${s.sha.slice(0, 12)}`);
        continue;
      }
    }
    const route = routeScenario(s, { agents, routing: config.routing, actor: c.actor });
    if (route.ignored !== null) {
      ignored.push(`${s.kind}: ${route.ignored}`);
      continue;
    }
    for (const agent of route.agents) {
      // One task per agent per delivery: a review that also @mentions its PR's author is one piece of work.
      if (taken.has(agent.id)) continue;
      taken.add(agent.id);
      drafts.push(draftTask(newTaskId(), s, agent));
    }
  }
  return { drafts, ignored, pulls, observations };
}

/** Drafts whose work is already an open task are dropped, each with its reason. */
async function withoutOpenWork(env: Env, workspaceId: string, r: Routed): Promise<Routed> {
  const open = await openDedupeKeys(
    env,
    workspaceId,
    r.drafts.map((d) => d.dedupeKey).filter((k): k is string => k !== null),
  );
  if (!open.size) return r;
  const ignored = [...r.ignored];
  const drafts = r.drafts.filter((d) => {
    if (!d.dedupeKey || !open.has(d.dedupeKey)) return true;
    ignored.push(`${d.actionType} for ${d.agentId}: the same work is already an open task`);
    return false;
  });
  return { ...r, drafts, ignored };
}

/** The delivery record for what will be written: tasks created, else the base outcome (ignored or rejected) with the reasons. */
function deliveryOf(base: Delivery, r: Routed): Delivery {
  return {
    ...base,
    outcome: r.drafts.length ? "tasks_created" : base.outcome,
    reason: r.ignored.length ? r.ignored.join("; ").slice(0, 2000) : null,
    taskIds: r.drafts.map((d) => d.id),
  };
}

/**
 * Write the delivery with its tasks, history and PR facts in one batch (one transaction). Three
 * constraints can refuse it: the delivery id (the same delivery arrived twice at once — answer with
 * the first outcome), the body guard (the same signed body arrived under another delivery id at the
 * same moment — answer with that one's outcome) and the open-task dedupe index (another delivery
 * about the same work won — drop that work and write again, so this delivery records its own
 * outcome instead of failing). The batch first ends a body guard older than the replay window.
 */
async function persist(
  env: Env,
  workspaceId: string,
  base: Delivery,
  routed: Routed,
  now: number,
  dispatchOnIntake = false,
): Promise<IntakeResult> {
  const db = makeDb(env.DB);
  // No read of the open work first: the dedupe index refuses the batch when a draft's work is already
  // an open task, and only then is the open work read and dropped (docs/performance.md, "Webhook
  // intake"): one D1 round trip less for every delivery that creates tasks.
  let r = routed;
  // Each refusal by the dedupe index drops at least one draft, so this ends.
  for (;;) {
    const d = deliveryOf(base, r);
    const queries: BatchItem<"sqlite">[] = [
      ...taskInsertQueries(db, workspaceId, r.drafts, d.deliveryId, now),
      ...pullUpsertQueries(db, workspaceId, r.pulls, now),
      ...r.observations.map((o) => commentInsertQuery(db, workspaceId, o.taskId, o.comment, now)),
    ];
    const since = now - REPLAY_WINDOW_MS;
    try {
      await db.batch([bodyGuardReleaseQuery(db, workspaceId, d.bodySha256, since), deliveryInsertQuery(db, workspaceId, d), ...queries]);
      return answerFor(d, false, dispatchOnIntake);
    } catch (err) {
      // Nothing of the batch was written. Which constraint refused it is read from the data, not the error text.
      const prior = await findPrior(env, workspaceId, d.deliveryId, d.bodySha256, since);
      const first = prior.first ?? prior.replayed;
      if (first) return answerFor(first, true);
      const next = await withoutOpenWork(env, workspaceId, r);
      if (next.drafts.length === r.drafts.length) throw err;
      r = next;
    }
  }
}

export interface WebhookInput {
  workspaceId: string;
  headers: Headers;
  body: Uint8Array;
}

export async function intakeWebhook(env: Env, req: WebhookInput, now = Date.now()): Promise<IntakeResult> {
  // One D1 round trip before the signature check: the config, the workspace revision (the secret and
  // the agents are reused while it is unchanged) and the dedupe lookups; the lookups' rows are used
  // only once the signature verifies (docs/performance.md, "Webhook intake").
  const deliveryId = req.headers.get("X-Gitea-Delivery")?.trim() ?? "";
  const bodySha256 = await sha256Hex(req.body);
  const since = now - REPLAY_WINDOW_MS;
  const [configRead, priorRead] = await env.DB.batch([
    configAndRevisionStatement(env, req.workspaceId),
    priorStatement(env, req.workspaceId, deliveryId, bodySha256, since),
  ]);
  const { config, revision } = configAndRevisionOf(configRead?.results[0] as ConfigAndRevisionRow | undefined);
  const priorRows = (priorRead?.results ?? []) as DeliveryRow[];
  const toolchain = toolchainConfigOf(config);
  if (!toolchain.webhook_secret) return UNAUTHORIZED;
  const secret = await resolveSecretAt(env, req.workspaceId, toolchain.webhook_secret, revision);
  if (!secret || !(await verifySignature(secret, req.body, signatureHeaders(req.headers)))) return UNAUTHORIZED;

  if (!DELIVERY_ID.test(deliveryId)) {
    return { kind: "malformed", reason: "X-Gitea-Delivery header missing or malformed" };
  }
  // The signature covers the body only: the same body under a new delivery id (and perhaps another,
  // unsigned, event type) is a replay, answered with the first outcome and recorded nowhere.
  const { first, replayed } = priorOf(priorRows, deliveryId, bodySha256, since);
  if (first) return answerFor(first, true);
  if (replayed) return answerFor(replayed, true);
  const agents = await listAgentsAt(env, req.workspaceId, revision);

  const eventType = req.headers.get("X-Gitea-Event-Type")?.trim() ?? "";
  const base: Delivery = {
    deliveryId,
    eventType: eventType || "(missing)",
    action: null,
    repo: null,
    outcome: "ignored",
    reason: null,
    taskIds: [],
    statusCode: 202,
    bodySha256,
    receivedAt: now,
  };
  const nothing: Routed = { drafts: [], ignored: [], pulls: [], observations: [] };
  const reject = (reason: string) =>
    persist(env, req.workspaceId, { ...base, outcome: "rejected", statusCode: 400 }, { ...nothing, ignored: [reason] }, now);

  if (!EVENT_TYPE.test(eventType)) return reject("X-Gitea-Event-Type header missing or malformed");
  let payload: unknown;
  try {
    payload = JSON.parse(new TextDecoder().decode(req.body));
  } catch {
    return reject("Body is not valid JSON");
  }
  let classified: Classified;
  try {
    classified = classify(eventType, payload, { deployPattern: new RegExp(toolchain.deploy_pattern, "i") });
  } catch (err) {
    if (err instanceof UnsupportedEventError) return persist(env, req.workspaceId, base, { ...nothing, ignored: [err.message] }, now);
    if (err instanceof PayloadError) return reject(err.message);
    throw err;
  }
  const routed = await routeAll(env, req.workspaceId, toolchain, agents, classified, deliveryId);
  const described: Delivery = { ...base, action: classified.action, repo: classified.repo || null };
  return persist(env, req.workspaceId, described, routed, now, toolchain.concurrency.dispatch_on_intake);
}
