/**
 * Composition root, cron: the jobs each area registers for the every-minute tick. The edge runs them
 * isolated from each other (src/edge/scheduled.ts).
 */
import type { Env } from "../storage/env.ts";
import { dispatchTaskTypes } from "../domains/tasks/task-type.ts";
import { runPluginSyncTick } from "../domains/governance/plugin-cron.ts";
import { runLearningTick } from "../domains/governance/learning-drafts.ts";
import { runReceiptTick } from "../domains/learning/receipts/job.ts";
import { runEvidenceTick } from "../domains/governance/evidence-cron.ts";
import { TASK_TYPES } from "./tasks.ts";
import { sweepWebhookDeliveries } from "./webhook-deliveries.ts";

export interface CronJob {
  name: string;
  run(env: Env, now: number): Promise<void>;
}

export const CRON_JOBS: readonly CronJob[] = [
  // Webhook deliveries whose processing after the answer never finished (docs/toolchain.md, "Webhook intake").
  { name: "webhooks", run: async (env, now) => void (await sweepWebhookDeliveries(env, now)) },
  { name: "tasks", run: (env, now) => dispatchTaskTypes(env, now, TASK_TYPES) },
  { name: "plugins", run: runPluginSyncTick },
  // Three-way plugin updates waiting for their merge (docs/learning.md): a few per workspace per tick.
  { name: "learning", run: (env) => runLearningTick(env) },
  // Receipts of finished runs, derived from the replicated log in bounded batches (docs/learning.md, "Run receipts").
  { name: "receipts", run: async (env, now) => void (await runReceiptTick(env, now)) },
  // Candidates from run evidence, their drafts and evaluations (docs/learning.md, "Improvement candidates", "From candidate to draft").
  { name: "improvement", run: runEvidenceTick },
];
