/**
 * Receipts in D1 (docs/learning.md, "Run receipts"): which finished runs still need one, the facts a
 * receipt is derived from (the replicated run row and events, the session's metadata, a toolchain
 * run's task), and the idempotent write — an upsert of the receipt and a replacement of its skill rows
 * in one batch, so a receipt is never seen without its skills and deriving twice changes nothing.
 */
import { and, asc, eq, inArray, isNull, isNotNull, sql } from "drizzle-orm";
import type { Db } from "../../../storage/db/client.ts";
import {
  runFeedback,
  runReceipts,
  runReceiptSkills,
  sessionEvents,
  sessionRuns,
  sessions,
  toolchainTasks,
} from "../../../storage/db/schema.ts";
import type { PersistentEvent } from "../../../runtime/index.ts";
import { deriveReceipt, verificationRating, type Receipt, type ReceiptBody, type RunEndStatus, type Verification } from "./derive.ts";

const ENDED = ["completed", "failed", "cancelled"] as const;
/**
 * A run's row can reach D1 a batch before its last events (docs/sessions.md, "Storage first, D1
 * second"): a receipt waits for the run's terminal event, but no longer than this after the run ended
 * (a run cancelled while queued has no events at all).
 */
export const TERMINAL_EVENT_GRACE_MS = 10 * 60_000;
/** Events read per run: a run longer than this gets a receipt of its first events (the log has the rest). */
const MAX_EVENTS_PER_RUN = 5_000;

type RunRow = typeof sessionRuns.$inferSelect;

/** Finished runs without a receipt, oldest end first. */
export function runsWithoutReceipt(db: Db, limit: number): Promise<RunRow[]> {
  return db
    .select({
      id: sessionRuns.id,
      sessionId: sessionRuns.sessionId,
      workspaceId: sessionRuns.workspaceId,
      status: sessionRuns.status,
      idempotencyKey: sessionRuns.idempotencyKey,
      createdAt: sessionRuns.createdAt,
      startedAt: sessionRuns.startedAt,
      endedAt: sessionRuns.endedAt,
      result: sessionRuns.result,
    })
    .from(sessionRuns)
    .leftJoin(runReceipts, eq(runReceipts.runId, sessionRuns.id))
    .where(and(isNull(runReceipts.runId), inArray(sessionRuns.status, [...ENDED]), isNotNull(sessionRuns.endedAt)))
    .orderBy(asc(sessionRuns.endedAt))
    .limit(limit);
}

/** Runs whose receipt waits for its toolchain task's verdict. */
export async function runsWithPendingVerification(db: Db, limit: number): Promise<RunRow[]> {
  const pending = await db
    .select({ runId: runReceipts.runId })
    .from(runReceipts)
    .where(eq(runReceipts.verification, "pending"))
    .orderBy(asc(runReceipts.derivedAt))
    .limit(limit);
  if (pending.length === 0) return [];
  return db
    .select()
    .from(sessionRuns)
    .where(
      inArray(
        sessionRuns.id,
        pending.map((p) => p.runId),
      ),
    );
}

export async function runRow(db: Db, workspaceId: string, runId: string): Promise<RunRow | null> {
  const [row] = await db
    .select()
    .from(sessionRuns)
    .where(and(eq(sessionRuns.id, runId), eq(sessionRuns.workspaceId, workspaceId)));
  return row ?? null;
}

/**
 * Derives and stores the receipt of one finished run; null when its events are not all in D1 yet
 * (the next pass tries again).
 */
export async function deriveAndStore(db: Db, run: RunRow, now: number): Promise<Receipt | null> {
  if (!(ENDED as readonly string[]).includes(run.status) || run.endedAt === null) return null;
  const rows = await db
    .select({ payload: sessionEvents.payload })
    .from(sessionEvents)
    .where(and(eq(sessionEvents.sessionId, run.sessionId), eq(sessionEvents.runId, run.id)))
    .orderBy(asc(sessionEvents.seq))
    .limit(MAX_EVENTS_PER_RUN);
  const events = rows.map((r) => JSON.parse(r.payload) as PersistentEvent);
  const ended = events.some((e) => e.type === "run_completed" || e.type === "run_failed");
  if (!ended && now - run.endedAt < TERMINAL_EVENT_GRACE_MS) return null;

  const [session] = await db.select({ metadata: sessions.metadata }).from(sessions).where(eq(sessions.id, run.sessionId));
  const metadata = parseObject(session?.metadata ?? null) ?? {};
  let task: { id: string; status: string; runId: string | null } | null = null;
  if (metadata.task_type === "toolchain" && typeof metadata.task_id === "string") {
    const [t] = await db
      .select({ id: toolchainTasks.id, status: toolchainTasks.status, runId: toolchainTasks.runId })
      .from(toolchainTasks)
      .where(and(eq(toolchainTasks.id, metadata.task_id), eq(toolchainTasks.workspaceId, run.workspaceId)));
    task = t ?? null;
  }
  const receipt = deriveReceipt({
    run: {
      id: run.id,
      sessionId: run.sessionId,
      status: run.status as RunEndStatus,
      endedAt: run.endedAt,
      result: parseObject(run.result),
    },
    events,
    sessionMetadata: metadata,
    task,
  });
  const values = {
    runId: receipt.run_id,
    workspaceId: run.workspaceId,
    sessionId: receipt.session_id,
    agentId: receipt.agent_id,
    status: receipt.status,
    verification: receipt.verification,
    outcome: receipt.outcome,
    body: JSON.stringify(receipt.body),
    endedAt: receipt.ended_at,
    derivedAt: now,
  };
  const { runId: _runId, ...changes } = values;
  await db.batch([
    db.insert(runReceipts).values(values).onConflictDoUpdate({ target: runReceipts.runId, set: changes }),
    db.delete(runReceiptSkills).where(eq(runReceiptSkills.runId, run.id)),
    ...receipt.body.skills.map((s) =>
      db.insert(runReceiptSkills).values({ runId: run.id, workspaceId: run.workspaceId, skillName: s.name, version: s.version }),
    ),
  ]);
  return receipt;
}

export interface FeedbackView {
  rating: "up" | "down";
  /** `person`: given over the API; `verification`: a toolchain task's verified / failed outcome. */
  source: "person" | "verification";
  comment: string | null;
  given_by: string | null;
  at: number | null;
}

/** A stored receipt as the API shows it, with its feedback (a person's rating wins over the verification's). */
export interface ReceiptView extends Omit<Receipt, "body">, ReceiptBody {
  feedback: FeedbackView | null;
  derived_at: number;
}

export async function readReceipt(db: Db, workspaceId: string, runId: string): Promise<ReceiptView | null> {
  const [row] = await db
    .select({ r: runReceipts, f: runFeedback })
    .from(runReceipts)
    .leftJoin(runFeedback, eq(runFeedback.runId, runReceipts.runId))
    .where(and(eq(runReceipts.runId, runId), eq(runReceipts.workspaceId, workspaceId)));
  if (!row) return null;
  const { r, f } = row;
  const verification = r.verification as Verification | null;
  const fromVerification = verificationRating(verification);
  const feedback: FeedbackView | null = f
    ? { rating: f.rating as "up" | "down", source: "person", comment: f.comment, given_by: f.givenBy, at: f.createdAt }
    : fromVerification
      ? { rating: fromVerification, source: "verification", comment: null, given_by: null, at: null }
      : null;
  return {
    run_id: r.runId,
    session_id: r.sessionId,
    agent_id: r.agentId,
    status: r.status as RunEndStatus,
    verification,
    outcome: r.outcome as Receipt["outcome"],
    ended_at: r.endedAt,
    ...(JSON.parse(r.body) as ReceiptBody),
    feedback,
    derived_at: r.derivedAt,
  };
}

/** One rating per run: a second one replaces the first (a person changed their mind). */
export async function putFeedback(
  db: Db,
  f: { workspaceId: string; sessionId: string; runId: string; rating: "up" | "down"; comment: string | null; givenBy: string; now: number },
): Promise<void> {
  const values = {
    runId: f.runId,
    workspaceId: f.workspaceId,
    sessionId: f.sessionId,
    rating: f.rating,
    comment: f.comment,
    givenBy: f.givenBy,
    createdAt: f.now,
  };
  await db
    .insert(runFeedback)
    .values(values)
    .onConflictDoUpdate({
      target: runFeedback.runId,
      set: { rating: f.rating, comment: f.comment, givenBy: f.givenBy, createdAt: f.now },
      // A run id is globally unique; the workspace check keeps a forged id from touching another tenant's row.
      setWhere: eq(runFeedback.workspaceId, f.workspaceId),
    });
}

/** The SQL of a run's effective rating: the person's, else the verification's (docs/learning.md, "Feedback"). */
export const effectiveRating = sql<
  string | null
>`coalesce(${runFeedback.rating}, case ${runReceipts.verification} when 'verified' then 'up' when 'failed' then 'down' end)`;

function parseObject(text: string | null): Record<string, unknown> | null {
  if (!text) return null;
  try {
    const v: unknown = JSON.parse(text);
    return typeof v === "object" && v !== null && !Array.isArray(v) ? (v as Record<string, unknown>) : null;
  } catch {
    return null;
  }
}
