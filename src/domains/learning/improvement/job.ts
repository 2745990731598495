/**
 * Detecting improvement candidates (docs/learning.md, "Improvement candidates"): for each skill's
 * current version, the receipts of its most recent runs decide whether to record an improvement
 * candidate (kind `skill_improvement`, status `pending`) with the failed and down-rated runs as
 * evidence. The id is deterministic and the insert does nothing on conflict, so the same evidence
 * never makes two candidates; while one is open (pending or drafted) for a version, no other is made
 * for it, and after one was rejected a new one needs a bad run it did not have. The cron job
 * (src/domains/governance/evidence-cron.ts) runs this under the workspace lock, in try mode.
 */
import { and, desc, eq } from "drizzle-orm";
import type { Env } from "../../../storage/env.ts";
import { makeDb, type Db } from "../../../storage/db/client.ts";
import { learningCandidates, runFeedback, runReceipts, runReceiptSkills, skills } from "../../../storage/db/schema.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { versionLabel } from "../../../kernel/content-tree/hashing.ts";
import { learningConfigOf } from "../config.ts";
import { effectiveRating } from "../receipts/store.ts";
import { improvementCandidateId, improvementEvidence, type ImprovementEvidence } from "./detect.ts";
import { insertEvidenceCandidate } from "./insert-candidate.ts";

export const IMPROVEMENT_KIND = "skill_improvement";
/** Candidate statuses that hold a version: no other improvement candidate is made for it meanwhile. */
const OPEN_STATUSES = ["pending", "drafted"];

/** Workspaces with run receipts (at most `limit`). */
export async function workspacesWithReceipts(env: Env, limit: number): Promise<string[]> {
  const rows = await makeDb(env.DB).selectDistinct({ id: runReceipts.workspaceId }).from(runReceipts).limit(limit);
  return rows.map((r) => r.id);
}

/** One workspace's pass; returns the ids of the candidates it recorded. */
export async function proposeImprovements(env: Env, db: Db, workspaceId: string, now: number): Promise<string[]> {
  const config = learningConfigOf(await loadConfig(env, workspaceId)).improvement;
  if (!config.enabled) return [];
  const current = await db
    .select({ name: skills.name, versionNo: skills.currentVersionNo })
    .from(skills)
    .where(and(eq(skills.workspaceId, workspaceId), eq(skills.status, "active")));
  const earlier = await db
    .select({ evidence: learningCandidates.evidence, status: learningCandidates.status })
    .from(learningCandidates)
    .where(and(eq(learningCandidates.workspaceId, workspaceId), eq(learningCandidates.kind, IMPROVEMENT_KIND)));
  const openFor = new Set<string>();
  const usedRuns = new Map<string, Set<string>>();
  for (const c of earlier) {
    const e = JSON.parse(c.evidence) as ImprovementEvidence;
    const key = `${e.skill}@${e.version}`;
    if (OPEN_STATUSES.includes(c.status)) openFor.add(key);
    const used = usedRuns.get(key) ?? new Set<string>();
    for (const r of e.runs) used.add(r);
    usedRuns.set(key, used);
  }
  const recorded: string[] = [];
  for (const s of current) {
    const version = versionLabel(s.versionNo);
    if (openFor.has(`${s.name}@${version}`)) continue;
    const recent = await db
      .select({ runId: runReceipts.runId, outcome: runReceipts.outcome, rating: effectiveRating })
      .from(runReceiptSkills)
      .innerJoin(runReceipts, eq(runReceipts.runId, runReceiptSkills.runId))
      .leftJoin(runFeedback, eq(runFeedback.runId, runReceipts.runId))
      .where(
        and(eq(runReceiptSkills.workspaceId, workspaceId), eq(runReceiptSkills.skillName, s.name), eq(runReceiptSkills.version, version)),
      )
      .orderBy(desc(runReceipts.endedAt), desc(runReceipts.runId))
      // Undecided runs (pending, cancelled without a rating) are skipped by the pure check; read a margin.
      .limit(config.window_runs * 2);
    const evidence = improvementEvidence(s.name, version, recent, config);
    if (!evidence) continue;
    const used = usedRuns.get(`${s.name}@${version}`);
    if (used && evidence.runs.every((r) => used.has(r))) continue;
    const id = await improvementCandidateId(evidence);
    if (await insertEvidenceCandidate(db, { workspaceId, id, kind: IMPROVEMENT_KIND, skillName: s.name, evidence, now })) recorded.push(id);
  }
  return recorded;
}
