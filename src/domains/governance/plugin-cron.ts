/**
 * The plugins' cron job: fetch again what a Gitea push could not record because the workspace was
 * busy, sync every workspace with an enabled plugin whose package changed since its last sync (or
 * with a candidate waiting for a busy skill), and once an hour collect orphaned content. Automatic work never waits for the workspace lock: when it is busy the workspace is
 * deferred to the next tick.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { runLocked } from "./client.ts";
import { fetchSource } from "./plugin-sources.ts";
import { errorFields, log } from "../../kernel/log.ts";

/** Orphans older than this are collected by the hourly pass. */
export const GC_GRACE_MS = 24 * 3_600_000;

export interface PluginTickReport {
  /** Workspaces whose deferred source fetches were recorded this tick. */
  fetched: string[];
  synced: string[];
  deferred: string[];
  collected: string[];
}

async function workspacesNeedingSync(env: Env): Promise<string[]> {
  const rows = await env.DB.prepare(
    `SELECT DISTINCT workspace_id AS w FROM plugins
       WHERE enabled = 1 AND updates_paused = 0 AND package_status = 'present' AND (synced_digest IS NULL OR synced_digest != package_digest)
     UNION SELECT DISTINCT workspace_id AS w FROM learning_candidates WHERE status = 'pending' AND plugin_id IS NOT NULL`,
  ).all<{ w: string }>();
  return rows.results.map((r) => r.w);
}

async function tryOp(env: Env, workspaceId: string, run: () => Promise<unknown>, report: PluginTickReport, done: string[]): Promise<void> {
  try {
    await run();
    done.push(workspaceId);
  } catch (e) {
    if (e instanceof AppError && e.code === "busy") report.deferred.push(workspaceId);
    else log.error("plugin cron failed for workspace", { workspace_id: workspaceId, ...errorFields(e) });
  }
}

/** Gitea sources whose last push or fetch met a busy workspace (and the commit it was about). */
async function deferredSources(env: Env): Promise<{ workspaceId: string; id: string; commit: string | null }[]> {
  const rows = await env.DB.prepare(
    "SELECT workspace_id AS w, id, last_commit AS c FROM plugin_sources WHERE last_status = 'deferred'",
  ).all<{ w: string; id: string; c: string | null }>();
  return rows.results.map((r) => ({ workspaceId: r.w, id: r.id, commit: r.c }));
}

export async function runPluginTick(env: Env, now: number): Promise<PluginTickReport> {
  const report: PluginTickReport = { fetched: [], synced: [], deferred: [], collected: [] };
  for (const s of await deferredSources(env)) {
    await tryOp(
      env,
      s.workspaceId,
      () => fetchSource(env, s.workspaceId, s.id, { ...(s.commit ? { ref: s.commit } : {}), actor: "plugin-cron", lock: "try" }),
      report,
      report.fetched,
    );
  }
  for (const ws of await workspacesNeedingSync(env)) {
    await tryOp(env, ws, () => runLocked(env, ws, { kind: "sync_plugins" }, "try"), report, report.synced);
  }
  if (new Date(now).getUTCMinutes() === 17) {
    const rows = await env.DB.prepare("SELECT DISTINCT workspace_id AS w FROM skill_trees").all<{ w: string }>();
    for (const { w } of rows.results) {
      await tryOp(env, w, () => runLocked(env, w, { kind: "collect_garbage", now, graceMs: GC_GRACE_MS }, "try"), report, report.collected);
    }
  }
  return report;
}

/** The `ScheduledJob` registered in src/scheduled.ts. */
export async function runPluginSyncTick(env: Env, now: number): Promise<void> {
  const r = await runPluginTick(env, now);
  if (r.deferred.length > 0) log.info("plugin sync deferred (workspace busy)", { workspaces: r.deferred });
}
