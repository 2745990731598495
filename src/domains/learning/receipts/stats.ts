/**
 * A skill's score from its runs' receipts (docs/learning.md, "Skill stats"): success and feedback
 * rates per version of the runs that activated it, against the runs of the same agents that did not,
 * always with the counts behind each rate so a reader sees how much evidence there is. D1 groups the
 * receipts (a few rows per version, agent, outcome and rating); `shapeStats` is pure.
 */
import { and, eq, sql } from "drizzle-orm";
import type { Db } from "../../../storage/db/client.ts";
import { runFeedback, runReceipts, runReceiptSkills } from "../../../storage/db/schema.ts";
import { effectiveRating } from "./store.ts";

export interface StatGroup {
  version?: string;
  agentId: string | null;
  outcome: string;
  rating: string | null;
  runs: number;
}

/** The similar-messages comparison group, grouped like the others (similar.ts computes it). */
export interface SimilarGroups {
  groups: StatGroup[];
  looked_at: { with_skill: number; without_skill: number };
}

export interface Counts {
  runs: number;
  success: number;
  failure: number;
  cancelled: number;
  pending: number;
  /** success / (success + failure); null without a decided run. */
  success_rate: number | null;
  feedback: { up: number; down: number; none: number; up_rate: number | null };
}

export interface SkillStats {
  skill: string;
  runs: number;
  overall: Counts;
  versions: ({ version: string } & Counts)[];
  /** Runs of the same agents (null: chat runs without an agent) that did not activate the skill. */
  baseline: Counts;
  /**
   * Of those, the runs whose first user message is similar to a message of a run with the skill
   * (similar.ts), and how many runs were looked at to find them; absent when not computed.
   */
  similar_baseline?: Counts & { looked_at: { with_skill: number; without_skill: number } };
  by_agent: { agent_id: string | null; with_skill: Counts; without_skill: Counts }[];
}

export async function skillStats(db: Db, workspaceId: string, skill: string, similar?: SimilarGroups): Promise<SkillStats> {
  const withSkill = await db
    .select({
      version: runReceiptSkills.version,
      agentId: runReceipts.agentId,
      outcome: runReceipts.outcome,
      rating: effectiveRating,
      runs: sql<number>`count(*)`,
    })
    .from(runReceiptSkills)
    .innerJoin(runReceipts, eq(runReceipts.runId, runReceiptSkills.runId))
    .leftJoin(runFeedback, eq(runFeedback.runId, runReceipts.runId))
    .where(and(eq(runReceiptSkills.workspaceId, workspaceId), eq(runReceiptSkills.skillName, skill)))
    .groupBy(runReceiptSkills.version, runReceipts.agentId, runReceipts.outcome, effectiveRating);
  const without = await db
    .select({ agentId: runReceipts.agentId, outcome: runReceipts.outcome, rating: effectiveRating, runs: sql<number>`count(*)` })
    .from(runReceipts)
    .leftJoin(runFeedback, eq(runFeedback.runId, runReceipts.runId))
    .where(
      and(
        eq(runReceipts.workspaceId, workspaceId),
        sql`not exists (select 1 from ${runReceiptSkills} where ${runReceiptSkills.runId} = ${runReceipts.runId} and ${runReceiptSkills.skillName} = ${skill})`,
      ),
    )
    .groupBy(runReceipts.agentId, runReceipts.outcome, effectiveRating);
  return shapeStats(skill, withSkill, without, similar);
}

export function shapeStats(skill: string, withSkill: StatGroup[], without: StatGroup[], similar?: SimilarGroups): SkillStats {
  const agents = [...new Set(withSkill.map((g) => g.agentId))].sort(byAgent);
  const comparable = without.filter((g) => agents.includes(g.agentId));
  const versions = [...new Set(withSkill.map((g) => g.version ?? ""))].sort();
  const overall = counts(withSkill);
  return {
    skill,
    runs: overall.runs,
    overall,
    versions: versions.map((version) => ({ version, ...counts(withSkill.filter((g) => g.version === version)) })),
    baseline: counts(comparable),
    ...(similar ? { similar_baseline: { ...counts(similar.groups), looked_at: similar.looked_at } } : {}),
    by_agent: agents.map((agent_id) => ({
      agent_id,
      with_skill: counts(withSkill.filter((g) => g.agentId === agent_id)),
      without_skill: counts(comparable.filter((g) => g.agentId === agent_id)),
    })),
  };
}

function counts(groups: StatGroup[]): Counts {
  const c = { runs: 0, success: 0, failure: 0, cancelled: 0, pending: 0, up: 0, down: 0, none: 0 };
  for (const g of groups) {
    const n = Number(g.runs);
    c.runs += n;
    if (g.outcome === "success" || g.outcome === "failure" || g.outcome === "cancelled" || g.outcome === "pending") c[g.outcome] += n;
    if (g.rating === "up" || g.rating === "down") c[g.rating] += n;
    else c.none += n;
  }
  return {
    runs: c.runs,
    success: c.success,
    failure: c.failure,
    cancelled: c.cancelled,
    pending: c.pending,
    success_rate: rate(c.success, c.success + c.failure),
    feedback: { up: c.up, down: c.down, none: c.none, up_rate: rate(c.up, c.up + c.down) },
  };
}

const rate = (n: number, of: number): number | null => (of === 0 ? null : Math.round((n / of) * 1000) / 1000);

/** Chat runs (no agent) first, then agents by id. */
const byAgent = (a: string | null, b: string | null) => (a === b ? 0 : a === null ? -1 : b === null ? 1 : a.localeCompare(b));
