/**
 * The "similar messages" comparison group of a skill's stats (docs/learning.md, "Skill stats"): runs
 * of the same agents that did not activate the skill and whose first user message is similar to the
 * first message of at least one run that did — similar as the skill activation's lexical match
 * decides (src/domains/learning/improvement/similarity.ts), so the group is "runs the skill could
 * have served". Bounded: the newest `MAX_WITH` runs with the skill and `MAX_WITHOUT` without are read
 * (one D1 query each, first messages included), and `looked_at` says how many were.
 */
import type { Env } from "../../../storage/env.ts";
import { sharedTerms, termsOf } from "../improvement/similarity.ts";
import type { SimilarGroups, StatGroup } from "./stats.ts";

export const SIMILAR_LIMITS = { withSkill: 200, withoutSkill: 1_000 } as const;

interface Row {
  run_id: string;
  agent_id: string | null;
  outcome: string;
  rating: string | null;
  payload: string | null;
}

const FIRST_MESSAGE = `(SELECT e.payload FROM session_events e
   WHERE e.session_id = r.session_id AND e.run_id = r.run_id AND e.type = 'message' ORDER BY e.seq LIMIT 1)`;
const RATING = `coalesce(f.rating, CASE r.verification WHEN 'verified' THEN 'up' WHEN 'failed' THEN 'down' END)`;

function promptOf(payload: string | null): string | null {
  if (!payload) return null;
  const m = (JSON.parse(payload) as { message?: { role?: unknown; content?: unknown } }).message;
  return m?.role === "user" && typeof m.content === "string" ? m.content : null;
}

export async function similarWithoutSkill(env: Env, workspaceId: string, skill: string): Promise<SimilarGroups> {
  const withSkill = await env.DB.prepare(
    `SELECT r.run_id, r.agent_id, r.outcome, NULL AS rating, ${FIRST_MESSAGE} AS payload
       FROM run_receipt_skills k JOIN run_receipts r ON r.run_id = k.run_id
      WHERE k.workspace_id = ?1 AND k.skill_name = ?2
      ORDER BY r.ended_at DESC LIMIT ?3`,
  )
    .bind(workspaceId, skill, SIMILAR_LIMITS.withSkill)
    .all<Row>();
  const without = await env.DB.prepare(
    `SELECT r.run_id, r.agent_id, r.outcome, ${RATING} AS rating, ${FIRST_MESSAGE} AS payload
       FROM run_receipts r LEFT JOIN run_feedback f ON f.run_id = r.run_id
      WHERE r.workspace_id = ?1
        AND NOT EXISTS (SELECT 1 FROM run_receipt_skills k WHERE k.run_id = r.run_id AND k.skill_name = ?2)
      ORDER BY r.ended_at DESC LIMIT ?3`,
  )
    .bind(workspaceId, skill, SIMILAR_LIMITS.withoutSkill)
    .all<Row>();
  return {
    groups: similarGroups(withSkill.results, without.results),
    looked_at: { with_skill: withSkill.results.length, without_skill: without.results.length },
  };
}

/** Pure: the runs without the skill, of the skill runs' agents, similar to at least one skill run's message; grouped for `counts`. */
export function similarGroups(withSkill: readonly Row[], without: readonly Row[]): StatGroup[] {
  const byAgent = new Map<string | null, Set<string>[]>();
  for (const r of withSkill) {
    const prompt = promptOf(r.payload);
    if (prompt === null) continue;
    const list = byAgent.get(r.agent_id) ?? [];
    list.push(termsOf(prompt));
    byAgent.set(r.agent_id, list);
  }
  const groups = new Map<string, StatGroup>();
  for (const r of without) {
    const seeds = byAgent.get(r.agent_id);
    const prompt = seeds ? promptOf(r.payload) : null;
    if (!seeds || prompt === null) continue;
    const terms = termsOf(prompt);
    if (!seeds.some((s) => sharedTerms(s, terms) !== null)) continue;
    const key = `${r.agent_id}\u0000${r.outcome}\u0000${r.rating}`;
    const g = groups.get(key) ?? { agentId: r.agent_id, outcome: r.outcome, rating: r.rating, runs: 0 };
    g.runs++;
    groups.set(key, g);
  }
  return [...groups.values()];
}
