/**
 * Webhook intake, in two halves (docs/toolchain.md, "Webhook intake"). Before the answer
 * (`intakeWebhook`): signature, dedupe on `X-Gitea-Delivery` and on the signed body (a replay under
 * a new delivery id), and one durable write — the delivery with its outcome and tasks when working
 * them out needs no I/O (`settleWithoutIo`), else the delivery, `received`, with its body. After the
 * answer (`processDelivery`, exactly once per delivery): classification, PR
 * resolution (`resolve-pull.ts`), routing and drafting, and one D1 batch that writes the outcome,
 * the tasks, their history and the PR index together, so a task is never half-created. Returns what
 * happened as data; the edge decides the HTTP answer.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb, preparedOf } from "../../storage/db/client.ts";
import {
  configAndRevisionOf,
  configAndRevisionStatement,
  loadConfigAndRevision,
  type ConfigAndRevision,
  type ConfigAndRevisionRow,
} from "../../storage/config/store.ts";
import { resolveSecretAt } from "../../storage/secrets/store.ts";
import { sha256Hex } from "../../kernel/hash.ts";
import { randomToken } from "../../kernel/ids.ts";
import { AppError } from "../../kernel/errors.ts";
import { signatureHeaders, verifySignature } from "../gitea/signature.ts";
import { toolchainConfigOf, type ToolchainConfig } from "./config.ts";
import { agentsStatement, cachedAgentsAt, listAgentsAt, rememberAgentsAt, type AgentRow } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { classify, PayloadError, UnsupportedEventError, type Classified, type PullFacts, type Scenario } from "./scenarios.ts";
import { routeScenario } from "./routing.ts";
import { draftTask, type TaskDraft } from "./task-drafts.ts";
import { commentInsertQuery, newTaskId, openDedupeKeys, taskInsertStatements, type NewComment } from "./task-store.ts";
import {
  claimDelivery,
  claimGuardStatement,
  deliveryView,
  findPrior,
  holdsClaim,
  outcomeUpdateStatement,
  priorOf,
  priorStatement,
  recordDelivery,
  recordSettledDelivery,
  type Claimed,
  type DeliveryRow,
  type Delivery,
} from "./delivery-store.ts";
import { setBounded } from "../../kernel/memo.ts";
import { pullUpsertStatements } from "./pr-index.ts";
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
  /** Recorded as rejected (a missing or malformed event type header). */
  | { kind: "rejected"; delivery: DeliveryView; reason: string }
  /** Recorded as `received` with its body: `processDelivery` takes it from here, after the answer, with `recorded`. */
  | { kind: "accepted"; delivery: DeliveryView; recorded: Recorded }
  /** Recorded with its outcome and tasks in the one write (`settleWithoutIo`): only the follow-ups (dispatch, plugin sources) remain. */
  | { kind: "settled"; delivery: DeliveryView; processed: Processed };

/**
 * What the answer's own processing starts from, in memory: the delivery as written, its body, and
 * the config at the revision the write was checked against. It spares that processing a claim and
 * a second read of both (docs/performance.md, "Webhook intake").
 */
export interface Recorded {
  delivery: Delivery;
  body: string;
  at: ConfigAndRevision;
}

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

/** The answer to a delivery id or signed body seen before: the first delivery as it stands. */
function duplicateOf(first: Delivery): IntakeResult {
  return { kind: "duplicate", delivery: { ...deliveryView(first), duplicate: true } };
}

/**
 * The one durable write before the answer: the delivery with its body (or, for a rejected one,
 * without), guarding its body, checked against the workspace revision `at` was read at. `stale` when
 * the revision moved on (nothing written). Refused by the delivery id or the body guard when the same
 * delivery or body was answered before or raced in at once: then the first one is the answer.
 */
async function record(
  env: Env,
  workspaceId: string,
  d: Delivery,
  body: string | null,
  at: ConfigAndRevision,
): Promise<IntakeResult | "stale"> {
  const since = d.receivedAt - REPLAY_WINDOW_MS;
  try {
    if (!(await recordDelivery(env, workspaceId, d, body, since, at.revision))) return "stale";
    const delivery = { ...deliveryView(d), duplicate: false };
    if (d.outcome === "rejected" || body === null) return { kind: "rejected", delivery, reason: d.reason ?? "Rejected delivery" };
    return { kind: "accepted", delivery, recorded: { delivery: d, body, at } };
  } catch (err) {
    // Nothing was written. Which constraint refused it is read from the data, not the error text.
    const prior = await findPrior(env, workspaceId, d.deliveryId, d.bodySha256, since);
    const first = prior.first ?? prior.replayed;
    if (first) return duplicateOf(first);
    throw err;
  }
}

interface Routed {
  drafts: TaskDraft[];
  ignored: string[];
  pulls: PullFacts[];
  /** Outages added to the open infrastructure task, written with the delivery. */
  observations: { taskId: string; comment: NewComment }[];
}

/** Whether routing a scenario needs Gitea: the pull request behind a CI or deploy failure (`resolve-pull.ts`). */
function needsGitea(s: Scenario): s is Extract<Scenario, { kind: "ci_failure" | "deploy_failure" }> {
  return s.kind === "ci_failure" || s.kind === "deploy_failure";
}

function unrouted(c: Classified): Routed {
  return { drafts: [], ignored: c.ignored ? [c.ignored] : [], pulls: [...c.pulls], observations: [] };
}

/** Routes one scenario to its agents, without I/O: a task per agent not yet `taken`, or the reason it is ignored. */
function routeInto(into: Routed, taken: Set<string>, s: Scenario, config: ToolchainConfig, agents: Agent[], actor: string | null): void {
  const route = routeScenario(s, { agents, routing: config.routing, actor });
  if (route.ignored !== null) {
    into.ignored.push(`${s.kind}: ${route.ignored}`);
    return;
  }
  for (const agent of route.agents) {
    // One task per agent per delivery: a review that also @mentions its PR's author is one piece of work.
    if (taken.has(agent.id)) continue;
    taken.add(agent.id);
    into.drafts.push(draftTask(newTaskId(), s, agent));
  }
}

async function routeAll(
  env: Env,
  workspaceId: string,
  config: ToolchainConfig,
  agents: Agent[],
  c: Classified,
  deliveryId: string,
): Promise<Routed> {
  const routed = unrouted(c);
  const taken = new Set<string>();
  for (let s of c.scenarios) {
    if (needsGitea(s)) {
      const r = await resolvePull(env, workspaceId, config, s);
      if (r.fromGitea && r.pr) routed.pulls.push(r.pr);
      s = { ...s, pr: r.pr };
      if (r.outage) {
        const infra = await routeInfraFailure(env, workspaceId, config, agents, {
          operation: r.outage.operation,
          error: r.outage.message,
          originTaskId: null,
          originTitle: `delivery ${deliveryId} (${s.kind} on ${s.repo}@${s.sha.slice(0, 12)})`,
        });
        if (infra.kind === "new") routed.drafts.push(infra.draft);
        if (infra.kind === "add") routed.observations.push({ taskId: infra.taskId, comment: infra.observation });
        if (infra.kind === "none") routed.ignored.push(`infrastructure_failure: ${infra.reason}`);
        routed.ignored.push(`${s.kind}: Gitea unreachable while looking up the pull request of ${s.sha.slice(0, 12)}`);
        continue;
      }
    }
    routeInto(routed, taken, s, config, agents, c.actor);
  }
  return routed;
}

/** A delivery's outcome, tasks and PR facts, worked out before its answer (`settleWithoutIo`). */
interface Settled {
  delivery: Delivery;
  routed: Routed;
  dispatch: boolean;
}

/**
 * Settles a delivery before its answer when that needs no I/O (docs/toolchain.md, "Webhook intake"):
 * the body parses and classifies, no scenario needs Gitea, and the isolate holds the workspace's
 * agents at the revision the signature was checked at (`agents`: read with the config on the reading
 * path, kept by earlier deliveries on the remembered one; an event that asks nothing of an agent needs
 * none). Null otherwise: the delivery is recorded `received` and processed after the answer,
 * where a body that does not parse is rejected with its reason as before.
 */
function settleWithoutIo(base: Delivery, body: string, { config }: ConfigAndRevision, agents: Agent[] | null): Settled | null {
  const toolchain = toolchainConfigOf(config);
  const ignored = { ...base, outcome: "ignored" as const };
  let classified: Classified;
  try {
    classified = classify(base.eventType, JSON.parse(body), { deployPattern: new RegExp(toolchain.deploy_pattern, "i") });
  } catch (err) {
    if (!(err instanceof UnsupportedEventError)) return null;
    const routed: Routed = { drafts: [], ignored: [err.message], pulls: [], observations: [] };
    return { delivery: deliveryOf(ignored, routed), routed, dispatch: false };
  }
  if (classified.scenarios.some(needsGitea)) return null;
  const routed = unrouted(classified);
  const taken = new Set<string>();
  for (const s of classified.scenarios) {
    if (!agents) return null;
    routeInto(routed, taken, s, toolchain, agents, classified.actor);
  }
  const delivery = deliveryOf({ ...ignored, action: classified.action, repo: classified.repo || null }, routed);
  return { delivery, routed, dispatch: toolchain.concurrency.dispatch_on_intake && delivery.outcome === "tasks_created" };
}

/**
 * The one durable write of a settled delivery: the delivery with its outcome, its tasks and their
 * history and the PR facts, in one batch. `unsettled` when it was refused for a reason the recording
 * path sorts out (the revision moved on, or the same work is already an open task): nothing was
 * written then.
 */
async function recordSettled(
  env: Env,
  workspaceId: string,
  s: Settled,
  body: string,
  revision: string,
): Promise<IntakeResult | "unsettled"> {
  const { delivery: d, routed } = s;
  const since = d.receivedAt - REPLAY_WINDOW_MS;
  try {
    await recordSettledDelivery(env, workspaceId, d, since, revision, [
      ...taskInsertStatements(env, workspaceId, routed.drafts, d.deliveryId, d.receivedAt),
      ...pullUpsertStatements(env, workspaceId, routed.pulls, d.receivedAt),
    ]);
  } catch {
    // Which constraint refused it is read from the data, not the error text: the same delivery or body
    // answered before is the answer; anything else goes down the recording path.
    const prior = await findPrior(env, workspaceId, d.deliveryId, d.bodySha256, since);
    const first = prior.first ?? prior.replayed;
    return first ? duplicateOf(first) : "unsettled";
  }
  return { kind: "settled", delivery: { ...deliveryView(d), duplicate: false }, processed: { delivery: d, body, dispatch: s.dispatch } };
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
 * Write the outcome with its tasks, history and PR facts in one batch (one transaction), first
 * checking that this processor still holds the claim (`claimGuardStatement`: a processor overtaken by
 * the sweep writes nothing). The open-task dedupe index can refuse it too: another delivery about
 * the same work won — drop that work and write again, so this delivery records its own outcome
 * instead of failing. The open work is read only then (docs/performance.md, "Webhook intake").
 */
async function persist(
  env: Env,
  workspaceId: string,
  base: Delivery,
  routed: Routed,
  claim: string | null,
  now: number,
): Promise<Delivery | null> {
  const db = makeDb(env.DB);
  let r = routed;
  // Each refusal by the dedupe index drops at least one draft, so this ends.
  for (;;) {
    const d = deliveryOf(base, r);
    try {
      await env.DB.batch([
        claimGuardStatement(env, workspaceId, d.deliveryId, claim),
        outcomeUpdateStatement(env, workspaceId, d, claim),
        ...taskInsertStatements(env, workspaceId, r.drafts, d.deliveryId, now),
        ...pullUpsertStatements(env, workspaceId, r.pulls, now),
        ...r.observations.map((o) => preparedOf(env.DB, commentInsertQuery(db, workspaceId, o.taskId, o.comment, now))),
      ]);
      return d;
    } catch (err) {
      if (!(await holdsClaim(env, workspaceId, d.deliveryId, claim))) return null;
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

/**
 * The config and revision each workspace's last accepted delivery was checked against, per isolate
 * (docs/performance.md, "Webhook intake"). A delivery whose signature verifies with the remembered
 * secret is written at once, its insert guarded by that revision (`recordDelivery`): one D1 round
 * trip before the answer. A changed revision (any config or secret change) writes nothing and sends
 * the delivery down the reading path, as does a signature the remembered secret does not verify.
 * Read only for signed deliveries, so a stranger's requests cannot fill it.
 */
const intakeKeys = new Map<string, ConfigAndRevision>();
const MAX_INTAKE_KEYS = 256;
/** Reads before a delivery gives up on a revision that changes under every write (a config being rewritten in a loop). */
const MAX_READS = 3;

export async function intakeWebhook(env: Env, req: WebhookInput, now = Date.now()): Promise<IntakeResult> {
  const deliveryId = req.headers.get("X-Gitea-Delivery")?.trim() ?? "";
  const bodySha256 = await sha256Hex(req.body);
  const known = intakeKeys.get(req.workspaceId);
  if (known && (await signedWith(env, req, known))) {
    const answer = await admit(env, req, known, [], deliveryId, bodySha256, now);
    if (answer !== "stale") return answer;
    intakeKeys.delete(req.workspaceId);
  }
  for (let reads = 1; ; reads++) {
    // One D1 round trip before the signature check: the config, the workspace revision (the secret and
    // the agents are reused while it is unchanged), the dedupe lookups and the agents; the rows are used
    // only once the signature verifies.
    const [configRead, priorRead, agentsRead] = await env.DB.batch([
      configAndRevisionStatement(env, req.workspaceId),
      priorStatement(env, req.workspaceId, deliveryId, bodySha256, now - REPLAY_WINDOW_MS),
      // The agents at the same revision, so this delivery can be settled in its one write too.
      agentsStatement(env, req.workspaceId),
    ]);
    const at = configAndRevisionOf(configRead?.results[0] as ConfigAndRevisionRow | undefined);
    if (!(await signedWith(env, req, at))) return UNAUTHORIZED;
    setBounded(intakeKeys, req.workspaceId, at, MAX_INTAKE_KEYS);
    rememberAgentsAt(req.workspaceId, at.revision, (agentsRead?.results ?? []) as AgentRow[]);
    const answer = await admit(env, req, at, (priorRead?.results ?? []) as DeliveryRow[], deliveryId, bodySha256, now);
    if (answer !== "stale") return answer;
    if (reads === MAX_READS) {
      throw new AppError("conflict", "The workspace's configuration changed while the delivery was being recorded; redeliver it");
    }
  }
}

/** Whether the request is signed with the webhook secret of the workspace's config at `at`. */
async function signedWith(env: Env, req: WebhookInput, at: ConfigAndRevision): Promise<boolean> {
  const toolchain = toolchainConfigOf(at.config);
  if (!toolchain.webhook_secret) return false;
  const secret = await resolveSecretAt(env, req.workspaceId, toolchain.webhook_secret, at.revision);
  return !!secret && (await verifySignature(secret, req.body, signatureHeaders(req.headers)));
}

/** A new delivery as first recorded: `received`, nothing known of it but its headers and body hash. */
export function receivedDelivery(deliveryId: string, eventType: string, bodySha256: string, receivedAt: number): Delivery {
  return {
    deliveryId,
    eventType,
    action: null,
    repo: null,
    outcome: "received",
    reason: null,
    taskIds: [],
    statusCode: 202,
    bodySha256,
    receivedAt,
  };
}

/** A signed delivery: refused, answered from the first of its kind (`priorRows`, when read), or recorded. */
async function admit(
  env: Env,
  req: WebhookInput,
  at: ConfigAndRevision,
  priorRows: DeliveryRow[],
  deliveryId: string,
  bodySha256: string,
  now: number,
): Promise<IntakeResult | "stale"> {
  if (!DELIVERY_ID.test(deliveryId)) {
    return { kind: "malformed", reason: "X-Gitea-Delivery header missing or malformed" };
  }
  // The signature covers the body only: the same body under a new delivery id (and perhaps another,
  // unsigned, event type) is a replay, answered with the first outcome and recorded nowhere. Without
  // the rows (a remembered key), the write's unique indexes find them instead.
  const { first, replayed } = priorOf(priorRows, deliveryId, bodySha256, now - REPLAY_WINDOW_MS);
  if (first) return duplicateOf(first);
  if (replayed) return duplicateOf(replayed);
  const eventType = req.headers.get("X-Gitea-Event-Type")?.trim() ?? "";
  const base = receivedDelivery(deliveryId, eventType || "(missing)", bodySha256, now);
  if (!EVENT_TYPE.test(eventType)) {
    const reason = "X-Gitea-Event-Type header missing or malformed";
    return record(env, req.workspaceId, { ...base, outcome: "rejected", reason, statusCode: 400 }, null, at);
  }
  // The processing parses the body as text, as it always did; kept until the outcome is written.
  const text = new TextDecoder().decode(req.body);
  const settled = settleWithoutIo(base, text, at, cachedAgentsAt(req.workspaceId, at.revision));
  if (settled) {
    const answer = await recordSettled(env, req.workspaceId, settled, text, at.revision);
    if (answer !== "unsettled") return answer;
  }
  return record(env, req.workspaceId, base, text, at);
}

/** How long a delivery may stay `received` before the sweep processes it (the answer's own processing normally has). */
export const RECEIVED_GRACE_MS = 30_000;
/** How long a claim lasts before the sweep presumes its processor dead (past the 30 s a Worker may run after its answer). */
export const CLAIM_STALE_MS = 120_000;

/** What processing a delivery came to: `null` when another processor holds it or it is done already. */
export interface Processed {
  delivery: Delivery;
  body: string;
  /** Start the created tasks now (the workspace dispatches on intake). */
  dispatch: boolean;
}

/**
 * Processes a recorded delivery, after its answer, exactly once: the answer's own processing starts
 * from what intake wrote (`recorded`, in memory) and claims nothing, so its outcome lands only while
 * the delivery is still `received`; any other processor (the sweep) claims it first. Then it
 * classifies, routes and writes the outcome. An error becomes the outcome `failed` with its reason.
 */
export async function processDelivery(
  env: Env,
  workspaceId: string,
  deliveryId: string,
  now = Date.now(),
  recorded?: Recorded,
): Promise<Processed | null> {
  let claim: string | null = null;
  let source: Claimed | null = recorded ? { ...recorded.delivery, body: recorded.body } : null;
  if (!source) {
    claim = randomToken(16);
    source = await claimDelivery(env, workspaceId, deliveryId, claim, now, now - CLAIM_STALE_MS);
    if (!source) return null;
  }
  const base: Delivery = {
    deliveryId,
    eventType: source.eventType,
    action: null,
    repo: null,
    outcome: "ignored",
    reason: null,
    taskIds: [],
    statusCode: source.statusCode,
    bodySha256: source.bodySha256,
    receivedAt: source.receivedAt,
  };
  try {
    const at = recorded?.at ?? (await loadConfigAndRevision(env, workspaceId));
    const done = await classifyAndPersist(env, workspaceId, base, source.body, at, claim, now);
    return done && { delivery: done.delivery, body: source.body, dispatch: done.dispatch };
  } catch (err) {
    const failed: Delivery = { ...base, outcome: "failed", reason: `Processing failed: ${String(err)}`.slice(0, 2000) };
    await env.DB.batch([
      claimGuardStatement(env, workspaceId, deliveryId, claim),
      outcomeUpdateStatement(env, workspaceId, failed, claim),
    ]).catch(() => {});
    throw err;
  }
}

async function classifyAndPersist(
  env: Env,
  workspaceId: string,
  base: Delivery,
  body: string,
  { config, revision }: ConfigAndRevision,
  claim: string | null,
  now: number,
): Promise<{ delivery: Delivery; dispatch: boolean } | null> {
  const toolchain = toolchainConfigOf(config);
  const nothing: Routed = { drafts: [], ignored: [], pulls: [], observations: [] };
  const settle = async (d: Delivery, r: Routed) => {
    const written = await persist(env, workspaceId, d, r, claim, now);
    return written && { delivery: written, dispatch: toolchain.concurrency.dispatch_on_intake && written.outcome === "tasks_created" };
  };
  const reject = (reason: string) => settle({ ...base, outcome: "rejected" }, { ...nothing, ignored: [reason] });
  let payload: unknown;
  try {
    payload = JSON.parse(body);
  } catch {
    return reject("Body is not valid JSON");
  }
  let classified: Classified;
  try {
    classified = classify(base.eventType, payload, { deployPattern: new RegExp(toolchain.deploy_pattern, "i") });
  } catch (err) {
    if (err instanceof UnsupportedEventError) return settle(base, { ...nothing, ignored: [err.message] });
    if (err instanceof PayloadError) return reject(err.message);
    throw err;
  }
  const agents = await listAgentsAt(env, workspaceId, revision);
  const routed = await routeAll(env, workspaceId, toolchain, agents, classified, base.deliveryId);
  return settle({ ...base, action: classified.action, repo: classified.repo || null }, routed);
}
