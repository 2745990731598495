/**
 * Learning from run evidence, end to end (docs/learning.md, "From candidate to draft"): the cron job
 * that records improvement and new-skill candidates under the workspace lock in try mode (a busy
 * workspace is skipped this tick), then turns pending evidence candidates into drafts — synthesis by
 * the auxiliary model outside the lock, the recording under it — and starts each new draft's replay
 * evaluation, whose cases are the evidence runs' inputs. Review, publish and rollback are the
 * pipeline's own (learning-drafts.ts, the skills' rollback).
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { loadConfig } from "../../storage/config/store.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { providerModel, resolveModels, type ModelFactory } from "../../runtime/index.ts";
import { getCandidate, otherActiveDraft } from "../skills/candidate-store.ts";
import { modelSkillAuthor, type SkillAuthor } from "../learning/improvement/author.ts";
import { workspacesWithReceipts } from "../learning/improvement/job.ts";
import { synthesizeEvidenceDraft } from "../learning/improvement/synthesize.ts";
import type { RecordedEvidenceDraft } from "../learning/improvement/record.ts";
import { startEvaluation } from "../learning/evaluation/client.ts";
import { runLocked, storeEpoch } from "./client.ts";
import type { LockMode } from "./lock.ts";

/** Workspaces looked at per tick, and evidence candidates drafted per workspace per tick. */
const WORKSPACES_PER_TICK = 50;
const DRAFTS_PER_TICK = 2;
export const EVIDENCE_KINDS = ["skill_improvement", "new_skill"] as const;

export interface EvidenceOptions {
  factory?: ModelFactory;
  /** The author to use instead of the workspace's auxiliary model (tests). */
  author?: SkillAuthor;
  lock?: LockMode;
  actor?: string;
}

/** The workspace's auxiliary model (else its main model) as a skill author, built on first use. */
export function workspaceAuthor(
  env: Env,
  workspaceId: string,
  config: WorkspaceConfig,
  factory: ModelFactory = providerModel,
): SkillAuthor {
  let inner: Promise<SkillAuthor> | undefined;
  const get = () =>
    (inner ??= resolveModels(env, workspaceId, config, { factory, override: config.auxiliary_model }).then((m) =>
      modelSkillAuthor(m.main),
    ));
  const entry = config.auxiliary_model ?? config.model;
  return {
    label: entry ? `${config.auxiliary_model ? "auxiliary" : "main"}:${entry.id}` : "main:default",
    async write(request, signal) {
      return (await get()).write(request, signal);
    },
  };
}

export interface EvidenceDraftOutcome extends RecordedEvidenceDraft {
  /** The replay evaluation started for the draft, or why it could not start. */
  evaluation: { id: string; concurrency: number; cases: number } | { error: string } | null;
}

/** Synthesize one pending evidence candidate, record it under the lock, and start its evaluation. */
export async function draftEvidenceCandidate(
  env: Env,
  workspaceId: string,
  candidateId: string,
  opts: EvidenceOptions = {},
): Promise<EvidenceDraftOutcome> {
  const db = makeDb(env.DB);
  const candidate = await getCandidate(db, workspaceId, candidateId);
  if (!candidate || !(EVIDENCE_KINDS as readonly string[]).includes(candidate.kind)) throw notFound(`Candidate '${candidateId}'`);
  if (candidate.status !== "pending") throw new AppError("conflict", `Candidate '${candidateId}' is ${candidate.status}, not pending`);
  if (candidate.kind === "skill_improvement") {
    // Checked again under the lock; checked here first so a held skill costs no model call.
    const blocker = await otherActiveDraft(db, workspaceId, candidate.skillName, [candidate.id]);
    if (blocker) throw new AppError("conflict", `Skill '${candidate.skillName}' has another draft under review ('${blocker.id}')`);
  }
  const author = opts.author ?? workspaceAuthor(env, workspaceId, await loadConfig(env, workspaceId), opts.factory);
  const epoch = await storeEpoch(env, workspaceId);
  const drafted = await synthesizeEvidenceDraft(env, workspaceId, candidate, author);
  const recorded = await runLocked(
    env,
    workspaceId,
    { kind: "record_evidence_draft", drafted, actor: opts.actor ?? "learning", epoch },
    opts.lock ?? "wait",
  );
  let evaluation: EvidenceDraftOutcome["evaluation"] = null;
  if (recorded.status === "pending_review" && recorded.draftId) {
    try {
      // Concurrency: the workspace's `evaluation.concurrency` (3 by default, docs/evaluation.md).
      const started = await startEvaluation(env, workspaceId, recorded.draftId);
      evaluation = { id: started.id, concurrency: started.concurrency, cases: started.progress.total };
    } catch (e) {
      // The draft stays under review: a reviewer can start the evaluation again (POST /api/drafts/:id/evaluate).
      log.warn("learning: the evaluation of an evidence draft did not start", {
        workspace_id: workspaceId,
        draft_id: recorded.draftId,
        ...errorFields(e),
      });
      evaluation = { error: e instanceof Error ? e.message : String(e) };
    }
  }
  return { ...recorded, evaluation };
}

export interface EvidencePassReport {
  /** Candidates recorded this pass. */
  candidates: string[];
  drafts: EvidenceDraftOutcome[];
  /** Why a step was skipped or failed (a busy workspace, a held skill, a model error). */
  skipped: { step: string; candidate_id?: string; reason: string }[];
}

/**
 * One workspace's pass: record candidates under the lock (`lock` mode: the cron only tries), then draft
 * up to `limit` pending evidence candidates, oldest first.
 */
export async function runEvidencePass(
  env: Env,
  workspaceId: string,
  now: number,
  opts: EvidenceOptions & { limit?: number; skipDetection?: boolean } = {},
): Promise<EvidencePassReport> {
  const lock = opts.lock ?? "try";
  const report: EvidencePassReport = { candidates: [], drafts: [], skipped: [] };
  if (!opts.skipDetection) {
    try {
      report.candidates.push(...(await runLocked(env, workspaceId, { kind: "propose_improvements", now }, lock)));
      report.candidates.push(...(await runLocked(env, workspaceId, { kind: "propose_new_skills", now }, lock)));
    } catch (e) {
      report.skipped.push({ step: "propose", reason: e instanceof Error ? e.message : String(e) });
      if (!(e instanceof AppError && e.code === "busy")) throw e;
      return report;
    }
  }
  const { results } = await env.DB.prepare(
    `SELECT id FROM learning_candidates WHERE workspace_id = ? AND status = 'pending' AND kind IN ('skill_improvement', 'new_skill')
      ORDER BY created_at, id LIMIT ?`,
  )
    .bind(workspaceId, opts.limit ?? DRAFTS_PER_TICK)
    .all<{ id: string }>();
  for (const { id } of results) {
    try {
      report.drafts.push(await draftEvidenceCandidate(env, workspaceId, id, { ...opts, lock }));
    } catch (e) {
      report.skipped.push({ step: "draft", candidate_id: id, reason: e instanceof Error ? e.message : String(e) });
      if (!(e instanceof AppError))
        log.warn("learning: drafting an evidence candidate failed", { workspace_id: workspaceId, candidate_id: id, ...errorFields(e) });
    }
  }
  return report;
}

/** The cron job: every workspace with skill runs, or with evidence candidates waiting for their draft. */
export async function runEvidenceTick(env: Env, now: number): Promise<void> {
  const waiting = await env.DB.prepare(
    "SELECT DISTINCT workspace_id AS w FROM learning_candidates WHERE status = 'pending' AND kind IN ('skill_improvement', 'new_skill')",
  ).all<{ w: string }>();
  const workspaces = new Set([...(await workspacesWithReceipts(env, WORKSPACES_PER_TICK)), ...waiting.results.map((r) => r.w)]);
  for (const w of workspaces) {
    try {
      const r = await runEvidencePass(env, w, now, { actor: "learning-cron", lock: "try" });
      if (r.skipped.length > 0) log.info("learning: evidence steps left for the next tick", { workspace_id: w, skipped: r.skipped });
    } catch (e) {
      log.warn("learning: a workspace's evidence pass failed", { workspace_id: w, ...errorFields(e) });
    }
  }
}
