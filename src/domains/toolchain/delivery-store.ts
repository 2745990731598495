/**
 * Webhook deliveries in D1: the dedupe record of each `X-Gitea-Delivery` with its first outcome,
 * listed by `GET /api/toolchain/deliveries`. Each new delivery also guards its signed body against
 * replay under another delivery id (docs/toolchain.md, "Webhook intake").
 */
import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { webhookDeliveries } from "../../storage/db/schema.ts";
import { afterCursor, type PageCursor } from "../tasks/page-cursor.ts";

/**
 * `received` and `processing` are the states before the outcome: a delivery is answered 202 once
 * recorded and processed after the answer (docs/toolchain.md, "Webhook intake"); `failed` is a
 * processing that threw, with its reason.
 */
export const DELIVERY_OUTCOMES = ["received", "processing", "tasks_created", "ignored", "rejected", "failed"] as const;
export type DeliveryOutcome = (typeof DELIVERY_OUTCOMES)[number];

export interface Delivery {
  deliveryId: string;
  eventType: string;
  action: string | null;
  repo: string | null;
  outcome: DeliveryOutcome;
  reason: string | null;
  taskIds: string[];
  statusCode: number;
  bodySha256: string;
  receivedAt: number;
}

function fromRow(row: typeof webhookDeliveries.$inferSelect): Delivery {
  return {
    deliveryId: row.deliveryId,
    eventType: row.eventType,
    action: row.action,
    repo: row.repo,
    outcome: row.outcome as DeliveryOutcome,
    reason: row.reason,
    taskIds: JSON.parse(row.taskIds) as string[],
    statusCode: row.statusCode,
    bodySha256: row.bodySha256,
    receivedAt: row.receivedAt,
  };
}

export function deliveryView(d: Delivery) {
  return {
    delivery_id: d.deliveryId,
    event_type: d.eventType,
    action: d.action,
    repo: d.repo,
    outcome: d.outcome,
    reason: d.reason,
    task_ids: d.taskIds,
    status_code: d.statusCode,
    body_sha256: d.bodySha256,
    received_at: d.receivedAt,
  };
}

/**
 * Both lookups a new delivery needs, in one D1 query: the delivery with this id (`first`) and the one
 * guarding this body since `since` (`replayed`); at most one row each, as delivery ids and body guards
 * are unique per workspace (the unique indexes of schema/toolchain.ts).
 */
export async function findPrior(env: Env, workspaceId: string, deliveryId: string, bodySha256: string, since: number): Promise<Prior> {
  const { results } = await priorStatement(env, workspaceId, deliveryId, bodySha256, since).all<DeliveryRow>();
  return priorOf(results, deliveryId, bodySha256, since);
}

export interface Prior {
  first: Delivery | null;
  replayed: Delivery | null;
}

/** `findPrior`'s query as a builder, for a caller that batches it with other reads (webhook intake). */
export function priorStatement(env: Env, workspaceId: string, deliveryId: string, bodySha256: string, since: number): D1PreparedStatement {
  // A prepared statement, not the query builder: every delivery runs it (docs/performance.md, "Webhook intake").
  return env.DB.prepare(
    `SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries
      WHERE workspace_id = ?1
        AND (delivery_id = ?2 OR (body_sha256 = ?3 AND body_guard IS NOT NULL AND received_at > ?4))
      LIMIT 2`,
  ).bind(workspaceId, deliveryId, bodySha256, since);
}

/** The columns of `webhook_deliveries` under the names of the drizzle row (schema/toolchain.ts), for raw reads. */
const DELIVERY_COLUMNS = `workspace_id AS workspaceId, delivery_id AS deliveryId, event_type AS eventType, action, repo, outcome,
  reason, task_ids AS taskIds, status_code AS statusCode, body_sha256 AS bodySha256, body_guard AS bodyGuard,
  received_at AS receivedAt`;

export type DeliveryRow = typeof webhookDeliveries.$inferSelect;

/** What `priorStatement`'s rows say: the delivery with this id, and the one guarding this body. */
export function priorOf(rows: readonly DeliveryRow[], deliveryId: string, bodySha256: string, since: number): Prior {
  const first = rows.find((r) => r.deliveryId === deliveryId);
  const replayed = rows.find((r) => r.bodySha256 === bodySha256 && r.bodyGuard !== null && r.receivedAt > since);
  return { first: first ? fromRow(first) : null, replayed: replayed ? fromRow(replayed) : null };
}

/**
 * The one durable write before a delivery's answer, as one D1 batch: first end a body guard older than
 * the replay window (`receivedAt <= since`), so this delivery can take it over; then insert the
 * delivery, guarding its body (`body` is kept for a delivery still to be processed). A guard inside
 * the window, or the same delivery id, makes the insert fail on its unique index.
 *
 * The insert lands only while the workspace's revision is still `revision`: intake checked the
 * signature with the secret of that revision, possibly remembered from an earlier delivery
 * (docs/toolchain.md, "Webhook intake"), and any change to the config or secrets changes the
 * revision. False when it did not land (nothing was written); a unique index refusing it throws.
 */
export async function recordDelivery(
  env: Env,
  workspaceId: string,
  d: Delivery,
  body: string | null,
  since: number,
  revision: string,
): Promise<boolean> {
  const [, insert] = await env.DB.batch([
    bodyGuardReleaseStatement(env, workspaceId, d.bodySha256, since),
    deliveryInsertStatement(env, workspaceId, d, body, revision),
  ]);
  // Skipped, not refused, when the revision moved on.
  return (insert?.meta.changes ?? 0) > 0;
}

/**
 * A delivery settled before its answer, with its outcome, in the batch that also writes its tasks
 * (`rest`, one transaction; src/domains/toolchain/intake.ts). The delivery's insert fails the whole
 * batch when the workspace's revision moved on (a skipped insert would leave the tasks without their
 * delivery), so nothing lands; as does a unique index refusing the delivery or a task. Throws then.
 */
export async function recordSettledDelivery(
  env: Env,
  workspaceId: string,
  d: Delivery,
  since: number,
  revision: string,
  rest: D1PreparedStatement[],
): Promise<void> {
  await env.DB.batch([
    bodyGuardReleaseStatement(env, workspaceId, d.bodySha256, since),
    deliveryInsertStatement(env, workspaceId, d, null, revision, "fail"),
    ...rest,
  ]);
}

/** Ends a body guard older than the replay window (`receivedAt <= since`), so a new delivery can take it over. */
function bodyGuardReleaseStatement(env: Env, workspaceId: string, bodySha256: string, since: number): D1PreparedStatement {
  // Prepared statements, not the query builder: every delivery runs them (docs/performance.md, "Webhook intake").
  return env.DB.prepare(
    `UPDATE webhook_deliveries SET body_guard = NULL
      WHERE workspace_id = ?1 AND body_sha256 = ?2 AND body_guard IS NOT NULL AND received_at <= ?3`,
  ).bind(workspaceId, bodySha256, since);
}

/**
 * The delivery, guarding its body, inserted only while the workspace's revision is `revision`; when it
 * moved on, the insert is skipped (`skip`) or fails, and with it its batch (`fail`).
 */
function deliveryInsertStatement(
  env: Env,
  workspaceId: string,
  d: Delivery,
  body: string | null,
  revision: string,
  stale: "skip" | "fail" = "skip",
): D1PreparedStatement {
  const current = `COALESCE((SELECT revision FROM workspace_revisions WHERE workspace_id = ?1), '') = ?13`;
  // SQLite evaluates a CASE branch only when it is taken: json() of a text that is not JSON fails the statement.
  const guard = stale === "skip" ? current : `CASE WHEN ${current} THEN 1 ELSE json('revision moved on') END`;
  return env.DB.prepare(
    `INSERT INTO webhook_deliveries (workspace_id, delivery_id, event_type, action, repo, outcome, reason, task_ids,
       status_code, body_sha256, body_guard, received_at, body)
     SELECT ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, 1, ?11, ?12
      WHERE ${guard}`,
  ).bind(
    workspaceId,
    d.deliveryId,
    d.eventType,
    d.action,
    d.repo,
    d.outcome,
    d.reason,
    JSON.stringify(d.taskIds),
    d.statusCode,
    d.bodySha256,
    d.receivedAt,
    body,
    revision,
  );
}

/** One delivery as recorded, or null (another workspace's delivery is null too). */
export async function getDelivery(env: Env, workspaceId: string, deliveryId: string): Promise<Delivery | null> {
  const row = await env.DB.prepare(`SELECT ${DELIVERY_COLUMNS} FROM webhook_deliveries WHERE workspace_id = ?1 AND delivery_id = ?2`)
    .bind(workspaceId, deliveryId)
    .first<DeliveryRow>();
  return row ? fromRow(row) : null;
}

export async function listDeliveries(
  env: Env,
  workspaceId: string,
  f: PageCursor & { outcome?: DeliveryOutcome; eventType?: string; limit: number },
): Promise<Delivery[]> {
  const where: SQL[] = [eq(webhookDeliveries.workspaceId, workspaceId)];
  if (f.outcome) where.push(eq(webhookDeliveries.outcome, f.outcome));
  if (f.eventType) where.push(eq(webhookDeliveries.eventType, f.eventType));
  const page = afterCursor(webhookDeliveries.receivedAt, webhookDeliveries.deliveryId, f);
  if (page) where.push(page);
  const rows = await makeDb(env.DB)
    .select()
    .from(webhookDeliveries)
    .where(and(...where))
    .orderBy(desc(webhookDeliveries.receivedAt), desc(webhookDeliveries.deliveryId))
    .limit(f.limit)
    .all();
  return rows.map(fromRow);
}

/** What a processor needs of the delivery it claimed. */
export interface Claimed {
  eventType: string;
  body: string;
  bodySha256: string;
  receivedAt: number;
  statusCode: number;
}

/**
 * Claims a delivery for processing: one conditional update, so of a fast path and a sweep (or two
 * sweeps) exactly one gets the row back. A `processing` row whose claim is older than `staleBefore`
 * is taken over: its processor died (docs/toolchain.md, "Webhook intake").
 */
export async function claimDelivery(
  env: Env,
  workspaceId: string,
  deliveryId: string,
  claim: string,
  now: number,
  staleBefore: number,
): Promise<Claimed | null> {
  const row = await env.DB.prepare(
    `UPDATE webhook_deliveries SET outcome = 'processing', claim = ?3, claimed_at = ?4
      WHERE workspace_id = ?1 AND delivery_id = ?2 AND body IS NOT NULL
        AND (outcome = 'received' OR (outcome = 'processing' AND claimed_at <= ?5))
      RETURNING event_type AS eventType, body, body_sha256 AS bodySha256, received_at AS receivedAt, status_code AS statusCode`,
  )
    .bind(workspaceId, deliveryId, claim, now, staleBefore)
    .first<Claimed>();
  return row ?? null;
}

/**
 * Who may write a delivery's outcome, as SQL over `webhook_deliveries` with the claim bound as `?3`:
 * the processor holding that claim, or (`null`) the processing that the delivery's own answer
 * started, which claims nothing and may write only while the delivery is still `received` and
 * unclaimed (docs/toolchain.md, "Webhook intake"). Whoever writes first wins.
 */
function holder(claim: string | null): string {
  // `?3 IS NULL` names the parameter when the claim is null too, so every statement binds the same values.
  return claim === null ? `(claim IS NULL AND outcome = 'received' AND ?3 IS NULL)` : `claim = ?3`;
}

/**
 * First statement of a processor's batch: fails the whole batch (a primary-key conflict, by
 * re-inserting the row) unless this processor still holds the delivery (`holder`). So a processor
 * that was presumed dead and overtaken writes nothing: its tasks never land beside the new holder's.
 */
export function claimGuardStatement(env: Env, workspaceId: string, deliveryId: string, claim: string | null): D1PreparedStatement {
  // Prepared statements, not the query builder: every delivery runs these (docs/performance.md, "Webhook intake").
  return env.DB.prepare(
    `INSERT INTO webhook_deliveries SELECT * FROM webhook_deliveries
      WHERE workspace_id = ?1 AND delivery_id = ?2 AND NOT ${holder(claim)}`,
  ).bind(workspaceId, deliveryId, claim);
}

/** The outcome of a delivery its processor holds; it lets go of the body and the claim. */
export function outcomeUpdateStatement(env: Env, workspaceId: string, d: Delivery, claim: string | null): D1PreparedStatement {
  return env.DB.prepare(
    `UPDATE webhook_deliveries SET action = ?4, repo = ?5, outcome = ?6, reason = ?7, task_ids = ?8, body = NULL, claim = NULL,
       claimed_at = NULL
      WHERE workspace_id = ?1 AND delivery_id = ?2 AND ${holder(claim)}`,
  ).bind(workspaceId, d.deliveryId, claim, d.action, d.repo, d.outcome, d.reason, JSON.stringify(d.taskIds));
}

/** Whether `claim` (`null`: the answer's own processing) still holds the delivery (read after a refused batch). */
export async function holdsClaim(env: Env, workspaceId: string, deliveryId: string, claim: string | null): Promise<boolean> {
  const row = await env.DB.prepare(
    `SELECT 1 AS held FROM webhook_deliveries WHERE workspace_id = ?1 AND delivery_id = ?2 AND ${holder(claim)}`,
  )
    .bind(workspaceId, deliveryId, claim)
    .first();
  return row !== null;
}

/** Deliveries the recovery sweep should try: received before `receivedBefore`, or claimed before `staleBefore`. */
export async function pendingDeliveries(
  env: Env,
  receivedBefore: number,
  staleBefore: number,
  limit: number,
): Promise<{ workspaceId: string; deliveryId: string }[]> {
  const { results } = await env.DB.prepare(
    `SELECT workspace_id AS workspaceId, delivery_id AS deliveryId FROM webhook_deliveries
      WHERE (outcome = 'received' AND received_at <= ?1) OR (outcome = 'processing' AND claimed_at <= ?2)
      ORDER BY received_at LIMIT ?3`,
  )
    .bind(receivedBefore, staleBefore, limit)
    .all<{ workspaceId: string; deliveryId: string }>();
  return results;
}
