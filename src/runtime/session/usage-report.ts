/**
 * Token usage of a workspace's runs over recent days (docs/console.md, "Usage"), from data Beaver
 * already has: each ended run's result in D1's `session_runs` (its model and usage) and its session's
 * list row (title; the `agent_id` in its metadata, set for toolchain sessions). Grouped in SQL, so the
 * answer stays small however many runs there were: by day, by model, by agent, and the top sessions.
 */
import type { Env } from "../../storage/env.ts";

export interface UsageRow {
  key: string;
  label?: string;
  runs: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface UsageReport {
  since: number;
  days: UsageRow[];
  models: UsageRow[];
  agents: UsageRow[];
  sessions: UsageRow[];
}

const SUMS = `count(*) AS runs,
  coalesce(sum(json_extract(r.result, '$.usage.input_tokens')), 0) AS input_tokens,
  coalesce(sum(json_extract(r.result, '$.usage.output_tokens')), 0) AS output_tokens,
  coalesce(sum(json_extract(r.result, '$.usage.total_tokens')), 0) AS total_tokens`;
const FROM = `FROM session_runs r LEFT JOIN sessions s ON s.id = r.session_id
  WHERE r.workspace_id = ?1 AND r.created_at >= ?2 AND r.result IS NOT NULL`;

/** Usage of the runs created in the last `days` days (UTC days), the `topSessions` heaviest sessions. */
export async function usageReport(
  env: Env,
  workspaceId: string,
  days: number,
  topSessions: number,
  now = Date.now(),
): Promise<UsageReport> {
  const since = Date.UTC(new Date(now).getUTCFullYear(), new Date(now).getUTCMonth(), new Date(now).getUTCDate()) - (days - 1) * 86_400_000;
  const d1 = env.DB;
  const [byDay, byModel, byAgent, bySession] = await d1.batch<UsageRow>([
    d1.prepare(`SELECT date(r.created_at / 1000, 'unixepoch') AS key, ${SUMS} ${FROM} GROUP BY key ORDER BY key`).bind(workspaceId, since),
    d1
      .prepare(
        `SELECT coalesce(json_extract(r.result, '$.model'), 'unknown') AS key, ${SUMS} ${FROM} GROUP BY key ORDER BY total_tokens DESC LIMIT 50`,
      )
      .bind(workspaceId, since),
    d1
      .prepare(
        `SELECT coalesce(json_extract(s.metadata, '$.agent_id'), 'chat') AS key, ${SUMS} ${FROM} GROUP BY key ORDER BY total_tokens DESC LIMIT 50`,
      )
      .bind(workspaceId, since),
    d1
      .prepare(`SELECT r.session_id AS key, max(s.title) AS label, ${SUMS} ${FROM} GROUP BY key ORDER BY total_tokens DESC LIMIT ?3`)
      .bind(workspaceId, since, topSessions),
  ]);
  const rows = (r: D1Result<UsageRow> | undefined) => (r?.results ?? []).map((x) => ({ ...x, key: String(x.key) }));
  return { since, days: rows(byDay), models: rows(byModel), agents: rows(byAgent), sessions: rows(bySession) };
}
