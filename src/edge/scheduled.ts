/**
 * The cron tick (every minute): each area registers one job here; jobs are isolated so one failing
 * job never stops the others.
 */
import type { Env } from "../storage/env.ts";
import { runToolchainTick } from "../domains/toolchain/tick.ts";
import { runPluginSyncTick } from "../domains/governance/plugin-cron.ts";

export type ScheduledJob = (env: Env, now: number) => Promise<void>;

const jobs: { name: string; run: ScheduledJob }[] = [
  { name: "toolchain", run: runToolchainTick },
  { name: "plugins", run: runPluginSyncTick },
];

export async function runScheduled(env: Env, now: number): Promise<void> {
  const results = await Promise.allSettled(jobs.map((j) => j.run(env, now)));
  results.forEach((r, i) => {
    if (r.status === "rejected") console.error(`scheduled job ${jobs[i]?.name} failed`, r.reason);
  });
}
