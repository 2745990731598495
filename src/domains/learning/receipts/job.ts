/**
 * The `receipts` cron job (docs/learning.md, "Run receipts"): each tick derives the receipts of a
 * bounded batch of finished runs that have none, oldest first, and re-derives a few whose toolchain
 * task had not decided yet. Every write is an upsert keyed by the run id, so an overlapping tick or a
 * retry never makes a second receipt. Reads go to D1's replica of the logs; the Durable Objects are
 * never woken.
 */
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { deriveAndStore, runsWithoutReceipt, runsWithPendingVerification } from "./store.ts";

/** Runs per tick (a tick is one minute): new receipts, then re-derived pending verifications. */
export const RECEIPT_BATCH = { fresh: 100, pending: 20 } as const;

export interface ReceiptTickReport {
  derived: number;
  waiting: number;
  failed: number;
}

export async function runReceiptTick(
  env: Env,
  now: number,
  batch: { fresh: number; pending: number } = RECEIPT_BATCH,
): Promise<ReceiptTickReport> {
  const db = makeDb(env.DB);
  const runs = [...(await runsWithoutReceipt(db, batch.fresh)), ...(await runsWithPendingVerification(db, batch.pending))];
  const report: ReceiptTickReport = { derived: 0, waiting: 0, failed: 0 };
  for (const run of runs) {
    try {
      if (await deriveAndStore(db, run, now)) report.derived++;
      else report.waiting++;
    } catch (err) {
      // One bad run never stops the batch; it is tried again next tick.
      report.failed++;
      log.warn("receipts: deriving a run's receipt failed", { run_id: run.id, session_id: run.sessionId, ...errorFields(err) });
    }
  }
  return report;
}
