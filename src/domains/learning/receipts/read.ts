/**
 * Reading one run's receipt (docs/learning.md, "Run receipts"): the stored one, or — when the cron job
 * has not reached the run yet — derived now from D1's copy of the log, with the same idempotent write.
 */
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { AppError } from "../../../kernel/errors.ts";
import { deriveAndStore, readReceipt, runRow, type ReceiptView } from "./store.ts";

export async function receiptOf(env: Env, workspaceId: string, run: { id: string; status: string }, now: number): Promise<ReceiptView> {
  if (run.status === "queued" || run.status === "running")
    throw new AppError("conflict", `Run '${run.id}' is ${run.status}; its receipt is written when it ends`);
  const db = makeDb(env.DB);
  const stored = await readReceipt(db, workspaceId, run.id);
  if (stored) return stored;
  const row = await runRow(db, workspaceId, run.id);
  if (row && (await deriveAndStore(db, row, now))) {
    const derived = await readReceipt(db, workspaceId, run.id);
    if (derived) return derived;
  }
  throw new AppError("conflict", `Run '${run.id}' has ended but its log is still being copied; ask again in a moment`, { retryAfter: 1 });
}
