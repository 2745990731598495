/**
 * The `improvement` cron job (docs/learning.md, "Improvement candidates"): for each skill's current
 * version, the receipts of its most recent runs decide whether to record an improvement candidate
 * (kind `skill_improvement`, status `pending`) with the failed and down-rated runs as evidence. The
 * id is deterministic and the insert does nothing on conflict, so the same evidence never makes two
 * candidates; while one is open for a version, no other is made for it.
 */
import { and, desc, eq } from "drizzle-orm";
import type { Env } from "../../../storage/env.ts";
import { makeDb, type Db } from "../../../storage/db/client.ts";
import { learningCandidates, runFeedback, runReceipts, runReceiptSkills, skills } from "../../../storage/db/schema.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { versionLabel } from "../../../kernel/content-tree/hashing.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { learningConfigOf } from "../config.ts";
import { effectiveRating } from "../receipts/store.ts";
import { improvementCandidateId, improvementEvidence, type ImprovementEvidence } from "./detect.ts";

export const IMPROVEMENT_KIND = "skill_improvement";
/** Workspaces looked at per tick. */
const WORKSPACES_PER_TICK = 50;

export async function runImprovementTick(env: Env, now: number): Promise<{ recorded: string[] }> {
  const db = makeDb(env.DB);
  const workspaces = await db.selectDistinct({ id: runReceiptSkills.workspaceId }).from(runReceiptSkills).limit(WORKSPACES_PER_TICK);
  const recorded: string[] = [];
  for (const { id } of workspaces) {
    try {
      recorded.push(...(await proposeImprovements(env, db, id, now)));
    } catch (err) {
      log.warn("improvement: a workspace's pass failed", { workspace_id: id, ...errorFields(err) });
    }
  }
  return { recorded };
}

/** One workspace's pass; returns the ids of the candidates it recorded. */
export async function proposeImprovements(env: Env, db: Db, workspaceId: string, now: number): Promise<string[]> {
  const config = learningConfigOf(await loadConfig(env, workspaceId)).improvement;
  if (!config.enabled) return [];
  const current = await db
    .select({ name: skills.name, versionNo: skills.currentVersionNo })
    .from(skills)
    .where(and(eq(skills.workspaceId, workspaceId), eq(skills.status, "active")));
  const open = await db
    .select({ evidence: learningCandidates.evidence })
    .from(learningCandidates)
    .where(
      and(
        eq(learningCandidates.workspaceId, workspaceId),
        eq(learningCandidates.kind, IMPROVEMENT_KIND),
        eq(learningCandidates.status, "pending"),
      ),
    );
  const openFor = new Set(
    open.map((o) => {
      const e = JSON.parse(o.evidence) as ImprovementEvidence;
      return `${e.skill}@${e.version}`;
    }),
  );
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
    const id = await improvementCandidateId(evidence);
    const inserted = await db
      .insert(learningCandidates)
      .values({
        workspaceId,
        id,
        kind: IMPROVEMENT_KIND,
        skillName: s.name,
        pluginId: null,
        status: "pending",
        mergeMode: null,
        evidence: JSON.stringify(evidence),
        mergePlan: null,
        draftId: null,
        supersededBy: null,
        blockedByDraftId: null,
        createdAt: now,
        updatedAt: now,
      })
      .onConflictDoNothing()
      .returning({ id: learningCandidates.id });
    if (inserted.length > 0) recorded.push(id);
  }
  return recorded;
}
