/**
 * The cron tick (every minute): runs the jobs registered at the composition root (src/app/cron.ts),
 * isolated so one failing job never stops the others.
 */
import type { Env } from "../storage/env.ts";
import { CRON_JOBS, type CronJob } from "../app/cron.ts";
import { errorFields, log, withLogContext } from "../kernel/log.ts";

export async function runScheduled(env: Env, now: number, jobs: readonly CronJob[] = CRON_JOBS): Promise<void> {
  const results = await Promise.allSettled(jobs.map((j) => withLogContext({ job: j.name }, () => j.run(env, now))));
  results.forEach((r, i) => {
    if (r.status === "rejected") log.error("scheduled job failed", { job: jobs[i]?.name, ...errorFields(r.reason) });
  });
}
