/**
 * Feedback on a run (docs/learning.md, "Feedback"): the request shape and its limits, and the service
 * that records a rating for a run the caller's workspace owns. The session and run are checked by the
 * route against the SessionDO (the source of truth), so another workspace's run is 404 before this runs.
 */
import { z } from "zod";
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { AppError } from "../../../kernel/errors.ts";
import { and, eq } from "drizzle-orm";
import { runFeedback } from "../../../storage/db/schema.ts";
import { putFeedback, readReceipt, type ReceiptView } from "./store.ts";

/** A comment is a note for reviewers, not a transcript: 2,000 characters (docs/limits.md). */
export const FEEDBACK_COMMENT_CHARS = 2_000;

export const FeedbackInput = z.strictObject({
  rating: z.enum(["up", "down"]),
  comment: z.string().trim().min(1).max(FEEDBACK_COMMENT_CHARS).optional(),
});

export interface FeedbackRequest {
  workspaceId: string;
  sessionId: string;
  run: { id: string; status: string };
  input: z.infer<typeof FeedbackInput>;
  givenBy: string;
  now: number;
}

export async function recordFeedback(
  env: Env,
  r: FeedbackRequest,
): Promise<{ run_id: string; rating: "up" | "down"; comment: string | null; receipt: ReceiptView | null }> {
  if (r.run.status === "queued" || r.run.status === "running")
    throw new AppError("conflict", `Run '${r.run.id}' is ${r.run.status}; rate it when it has ended`);
  const db = makeDb(env.DB);
  const comment = r.input.comment ?? null;
  await putFeedback(db, {
    workspaceId: r.workspaceId,
    sessionId: r.sessionId,
    runId: r.run.id,
    rating: r.input.rating,
    comment,
    givenBy: r.givenBy,
    now: r.now,
  });
  return { run_id: r.run.id, rating: r.input.rating, comment, receipt: await readReceipt(db, r.workspaceId, r.run.id) };
}

/** A session's person-given ratings, one per rated run (the chat's thumbs show them; bounded by the session's runs). */
export async function sessionFeedback(
  env: Env,
  workspaceId: string,
  sessionId: string,
): Promise<{ run_id: string; rating: "up" | "down"; comment: string | null }[]> {
  const rows = await makeDb(env.DB)
    .select({ run_id: runFeedback.runId, rating: runFeedback.rating, comment: runFeedback.comment })
    .from(runFeedback)
    .where(and(eq(runFeedback.workspaceId, workspaceId), eq(runFeedback.sessionId, sessionId)));
  return rows.map((r) => ({ ...r, rating: r.rating as "up" | "down" }));
}
