/**
 * The workspace's learning candidates as the API shows them (docs/learning.md, "Candidates API"):
 * every kind — plugin updates, improvements, new skills — newest first, with the evidence (references
 * only: run ids, hashes, versions) and the draft each became; an evidence candidate's runs also come
 * with their sessions (`evidence_runs`), so the console links each one to its conversation. A new-skill candidate has no skill name
 * until its draft names one (`skill: null`).
 */
import { and, desc, eq, inArray, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { learningCandidates, runReceipts } from "../../storage/db/schema.ts";
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
): Promise<(ReturnType<typeof candidateSummary> & { evidence_runs: { run_id: string; session_id: string | null }[] })[]> {
  const where: SQL[] = [eq(learningCandidates.workspaceId, workspaceId)];
  if (q.kind) where.push(eq(learningCandidates.kind, q.kind));
  if (q.status) where.push(eq(learningCandidates.status, q.status));
  const rows = await makeDb(env.DB)
    .select()
    .from(learningCandidates)
    .where(and(...where))
    .orderBy(desc(learningCandidates.createdAt), desc(learningCandidates.id))
    .limit(q.limit);
  const views = rows.map(candidateSummary);
  const sessions = await sessionsOfRuns(
    env,
    workspaceId,
    views.flatMap((v) => evidenceRunIds(v.evidence)),
  );
  return views.map((v) => ({
    ...v,
    evidence_runs: evidenceRunIds(v.evidence).map((run_id) => ({ run_id, session_id: sessions.get(run_id) ?? null })),
  }));
}

function evidenceRunIds(evidence: unknown): string[] {
  const runs = (evidence as { runs?: unknown } | null)?.runs;
  return Array.isArray(runs) ? runs.filter((r): r is string => typeof r === "string") : [];
}

/** D1 binds at most 100 parameters per statement: the run ids go in chunks. */
const RUN_CHUNK = 90;

async function sessionsOfRuns(env: Env, workspaceId: string, runIds: readonly string[]): Promise<Map<string, string>> {
  const db = makeDb(env.DB);
  const ids = [...new Set(runIds)];
  const out = new Map<string, string>();
  for (let i = 0; i < ids.length; i += RUN_CHUNK) {
    const rows = await db
      .select({ runId: runReceipts.runId, sessionId: runReceipts.sessionId })
      .from(runReceipts)
      .where(and(eq(runReceipts.workspaceId, workspaceId), inArray(runReceipts.runId, ids.slice(i, i + RUN_CHUNK))));
    for (const r of rows) out.set(r.runId, r.sessionId);
  }
  return out;
}
