/**
 * Reading a candidate's evidence runs from D1 (docs/learning.md, "From candidate to draft"): each
 * run's receipt (session, outcome), its effective rating and comment, and its replicated `message`
 * events, turned into bounded transcripts (transcripts.ts). Runs whose receipt is gone are skipped.
 */
import { and, asc, eq, inArray } from "drizzle-orm";
import type { Db } from "../../../storage/db/client.ts";
import { runFeedback, runReceipts, sessionEvents } from "../../../storage/db/schema.ts";
import type { Message } from "../../../runtime/index.ts";
import { effectiveRating } from "../receipts/store.ts";
import { firstPrompt, formatTranscript, TRANSCRIPT_LIMITS, type EvidenceRun } from "./transcripts.ts";

/** Message events read per run (a transcript is cut at `TRANSCRIPT_LIMITS.perRun` characters anyway). */
const MAX_MESSAGES_PER_RUN = 200;

export async function loadEvidenceRuns(db: Db, workspaceId: string, runIds: readonly string[], max = 50): Promise<EvidenceRun[]> {
  if (runIds.length === 0) return [];
  const receipts = await db
    .select({
      runId: runReceipts.runId,
      sessionId: runReceipts.sessionId,
      outcome: runReceipts.outcome,
      rating: effectiveRating,
      comment: runFeedback.comment,
    })
    .from(runReceipts)
    .leftJoin(runFeedback, eq(runFeedback.runId, runReceipts.runId))
    .where(and(eq(runReceipts.workspaceId, workspaceId), inArray(runReceipts.runId, runIds.slice(0, max))))
    .orderBy(asc(runReceipts.runId));
  const out: EvidenceRun[] = [];
  for (const r of receipts) {
    const rows = await db
      .select({ payload: sessionEvents.payload })
      .from(sessionEvents)
      .where(and(eq(sessionEvents.sessionId, r.sessionId), eq(sessionEvents.runId, r.runId), eq(sessionEvents.type, "message")))
      .orderBy(asc(sessionEvents.seq))
      .limit(MAX_MESSAGES_PER_RUN);
    const messages = rows.map((row) => (JSON.parse(row.payload) as { message: Message }).message);
    out.push({
      run_id: r.runId,
      session_id: r.sessionId,
      prompt: firstPrompt(messages),
      outcome: r.outcome,
      rating: r.rating,
      comment: r.comment,
      transcript: formatTranscript(messages, TRANSCRIPT_LIMITS.perRun),
    });
  }
  return out;
}
