/**
 * The workspace's learning candidates as the API shows them (docs/learning.md, "Candidates API"):
 * every kind — plugin updates, improvements, new skills — newest first, with the evidence (references
 * only: run ids, hashes, versions) and the draft each became. A new-skill candidate has no skill name
 * until its draft names one (`skill: null`).
 */
import { and, desc, eq, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { learningCandidates } from "../../storage/db/schema.ts";
import type { CandidateRow } from "../skills/candidate-store.ts";

export const CANDIDATE_KINDS = ["plugin_skill_update", "skill_improvement", "new_skill"] as const;
export const CANDIDATE_STATUSES = [
  "pending",
  "pending_synthesis",
  "drafted",
  "synthesis_failed",
  "superseded",
  "published",
  "rejected",
] as const;

export function candidateSummary(c: CandidateRow) {
  return {
    id: c.id,
    kind: c.kind,
    skill: c.skillName === "" ? null : c.skillName,
    status: c.status,
    plugin_id: c.pluginId,
    merge_mode: c.mergeMode,
    evidence: JSON.parse(c.evidence) as unknown,
    draft_id: c.draftId,
    created_at: c.createdAt,
    updated_at: c.updatedAt,
  };
}

export async function listCandidatePage(
  env: Env,
  workspaceId: string,
  q: { kind?: string | undefined; status?: string | undefined; limit: number },
): Promise<ReturnType<typeof candidateSummary>[]> {
  const where: SQL[] = [eq(learningCandidates.workspaceId, workspaceId)];
  if (q.kind) where.push(eq(learningCandidates.kind, q.kind));
  if (q.status) where.push(eq(learningCandidates.status, q.status));
  const rows = await makeDb(env.DB)
    .select()
    .from(learningCandidates)
    .where(and(...where))
    .orderBy(desc(learningCandidates.createdAt), desc(learningCandidates.id))
    .limit(q.limit);
  return rows.map(candidateSummary);
}
