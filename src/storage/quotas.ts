/**
 * Per-workspace quotas (docs/limits.md): how many rows of a kind the workspace holds, counted with one
 * `COUNT(*)` over an index that starts with `workspace_id`, checked at create time against
 * `limitsOf(env)`. The count is not taken under a lock, so requests racing past the same count can
 * overshoot a quota by at most their number; that is accepted instead of serialising every create.
 */
import { count, eq } from "drizzle-orm";
import type { Env } from "./env.ts";
import { makeDb } from "./db/client.ts";
import { pluginSources, plugins, sessions, skills, toolchainAgents } from "./db/schema.ts";
import { assertQuota, type QuotaName } from "./limits.ts";

const WORKSPACE_COLUMN = {
  sessions: sessions.workspaceId,
  skills: skills.workspaceId,
  plugins: plugins.workspaceId,
  plugin_sources: pluginSources.workspaceId,
  agents: toolchainAgents.workspaceId,
} as const;

const TABLE = { sessions, skills, plugins, plugin_sources: pluginSources, agents: toolchainAgents } as const;

/** Quotas counted in D1 (`schedules` is counted by each workspace's ScheduleDO). */
type D1QuotaName = Exclude<QuotaName, "schedules">;

/** Rows of this kind the workspace holds now. */
export async function quotaUsage(env: Env, workspaceId: string, quota: D1QuotaName): Promise<number> {
  const row = await makeDb(env.DB).select({ n: count() }).from(TABLE[quota]).where(eq(WORKSPACE_COLUMN[quota], workspaceId)).get();
  return row?.n ?? 0;
}

/** 429 `quota_exceeded` with `{ quota, limit, used }` when `adding` more would pass the quota. */
export async function enforceQuota(env: Env, workspaceId: string, quota: D1QuotaName, adding = 1): Promise<void> {
  if (adding <= 0) return;
  assertQuota(env, quota, await quotaUsage(env, workspaceId, quota), adding);
}
