/**
 * The learning pipeline's application services (docs/learning.md): synthesizing three-way plugin
 * updates into merged drafts, proposing drafts (agents, uploads), and the review decisions — approve
 * (through the gates, then publish under the lock), reject, regenerate — plus `onEvaluationFinished`,
 * where an evaluation verdict may auto-publish a draft. Slow work (reading trees, the merge model,
 * storing the merged tree) runs before the lock; only the recording and publishing run under it.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { loadConfig } from "../../storage/config/store.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { storeTree } from "../../storage/blob/store.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { errorFields, log } from "../../kernel/log.ts";
import type { TreeFile } from "../../kernel/content-tree/hashing.ts";
import { describeProblems } from "../../kernel/content-tree/problems.ts";
import { providerModel, resolveModels, type ModelFactory } from "../../runtime/index.ts";
import { getCandidate, getDraft, listCandidates, type DraftRow } from "../skills/candidate-store.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import { prepareSkill } from "../skills/prepare.ts";
import { blocksPublication, type SafetyReport } from "../skills/safety.ts";
import type { MergePlan } from "../plugins/merge-plan.ts";
import { modelHunkResolver, type HunkResolver } from "../learning/hunk-resolver.ts";
import { synthesizeCandidate } from "../learning/synthesize.ts";
import type { RecordedDraft } from "../learning/record-draft.ts";
import { decideGates, type EvaluationVerdict, type GateDecision } from "../learning/gates.ts";
import { learningConfigOf } from "../learning/config.ts";
import { draftSensitiveItems } from "../learning/draft-sensitive.ts";
import type { PublishDraftResult } from "../learning/publish-draft.ts";
import { beforeDeadline, runLocked, startLockBudget, storeEpoch } from "./client.ts";
import type { LockBudget } from "./lock-budget.ts";
import type { LockMode } from "./lock.ts";

export interface SynthesisOptions {
  /** How model objects are built (the provider packages by default). */
  factory?: ModelFactory;
  actor?: string;
  /** How recording waits for the workspace lock: the cron only tries (docs/skills-and-plugins.md). */
  lock?: LockMode;
}

/**
 * The merge resolver of a workspace: its auxiliary model, else its main model — built on the first
 * conflict only, so a merge without conflicts needs no model at all.
 */
export function workspaceResolver(
  env: Env,
  workspaceId: string,
  config: WorkspaceConfig,
  factory: ModelFactory = providerModel,
): HunkResolver {
  let inner: Promise<HunkResolver> | undefined;
  // The auxiliary entry stands in for the main model, so a workspace with only an auxiliary model works too.
  const get = () =>
    (inner ??= resolveModels(env, workspaceId, config, { factory, override: config.auxiliary_model }).then((models) =>
      modelHunkResolver(models.main),
    ));
  const entry = config.auxiliary_model ?? config.model;
  return {
    label: entry ? `${config.auxiliary_model ? "auxiliary" : "main"}:${entry.id}` : "main:default",
    async resolve(request, signal) {
      return (await get()).resolve(request, signal);
    },
  };
}

/** Merge one three-way candidate and record its draft (merged, or failed with the reason). */
export async function synthesizeCandidateDraft(
  env: Env,
  workspaceId: string,
  candidateId: string,
  opts: SynthesisOptions & { supersedes?: string | null; resolver?: HunkResolver } = {},
): Promise<RecordedDraft> {
  const db = makeDb(env.DB);
  const candidate = await getCandidate(db, workspaceId, candidateId);
  if (!candidate) throw notFound(`Candidate '${candidateId}'`);
  const resolver = opts.resolver ?? workspaceResolver(env, workspaceId, await loadConfig(env, workspaceId), opts.factory);
  const epoch = await storeEpoch(env, workspaceId);
  const merged = await synthesizeCandidate(env, workspaceId, candidate, resolver);
  return runLocked(
    env,
    workspaceId,
    { kind: "record_merge_draft", merged, supersedes: opts.supersedes ?? null, actor: opts.actor ?? "learning", epoch },
    opts.lock ?? "wait",
  );
}

export interface SynthesisOutcome {
  candidate_id: string;
  draft_id: string | null;
  status: string;
  error?: string;
}

/** Synthesize every `pending_synthesis` candidate of the workspace (at most `limit`); failures are reported, not thrown. */
export async function synthesizePendingMerges(
  env: Env,
  workspaceId: string,
  opts: SynthesisOptions & { limit?: number } = {},
): Promise<SynthesisOutcome[]> {
  const pending = (await listCandidates(makeDb(env.DB), workspaceId)).filter((c) => c.status === "pending_synthesis");
  const out: SynthesisOutcome[] = [];
  for (const c of pending.slice(0, opts.limit ?? 4)) {
    try {
      const r = await synthesizeCandidateDraft(env, workspaceId, c.id, opts);
      out.push({ candidate_id: c.id, draft_id: r.draftId, status: r.status });
    } catch (e) {
      log.warn("learning: synthesis of a plugin update failed", { workspace_id: workspaceId, candidate_id: c.id, ...errorFields(e) });
      out.push({ candidate_id: c.id, draft_id: null, status: "error", error: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/**
 * The cron job: synthesize waiting three-way candidates in every workspace (a few per tick). It only
 * tries the lock; a candidate that met a busy workspace stays `pending_synthesis` for the next tick.
 */
export async function runLearningTick(env: Env): Promise<void> {
  const rows = await env.DB.prepare("SELECT DISTINCT workspace_id AS w FROM learning_candidates WHERE status = 'pending_synthesis'").all<{
    w: string;
  }>();
  for (const { w } of rows.results) {
    const outcomes = await synthesizePendingMerges(env, w, { limit: 2, actor: "learning-cron", lock: "try" });
    const left = outcomes.filter((o) => o.status === "error");
    if (left.length > 0)
      log.info("learning: syntheses left for the next tick", { workspace_id: w, candidates: left.map((b) => b.candidate_id) });
  }
}

/** A new merge attempt for a plugin-update draft: a new draft that supersedes this one. */
export async function regenerateDraft(env: Env, workspaceId: string, draftId: string, opts: SynthesisOptions = {}): Promise<RecordedDraft> {
  const draft = await requireDraft(env, workspaceId, draftId);
  if (!draft.candidateId || draft.proposalKind !== "plugin_skill_update")
    throw new AppError("conflict", `Draft '${draftId}' was not made by a merge; only plugin-update drafts can be regenerated`);
  if (!["pending_review", "merge_failed", "rejected"].includes(draft.status))
    throw new AppError("conflict", `Draft '${draftId}' is ${draft.status}; it cannot be regenerated`);
  const candidate = await getCandidate(makeDb(env.DB), workspaceId, draft.candidateId);
  if (!candidate || candidate.mergeMode !== "three_way")
    throw new AppError("conflict", `Draft '${draftId}' is a fast-forward update: there is nothing to merge again`);
  if (candidate.status === "superseded" || candidate.status === "published")
    throw new AppError("conflict", `The plugin update of draft '${draftId}' is ${candidate.status}`);
  return synthesizeCandidateDraft(env, workspaceId, candidate.id, { ...opts, supersedes: draft.id });
}

export async function requireDraft(env: Env, workspaceId: string, draftId: string): Promise<DraftRow> {
  const draft = await getDraft(makeDb(env.DB), workspaceId, draftId);
  if (!draft) throw notFound(`Draft '${draftId}'`);
  return draft;
}

/** The gates of a draft for a manual approval or for automatic publishing. */
export async function draftGates(
  env: Env,
  workspaceId: string,
  draft: DraftRow,
  mode: "manual" | "auto",
  evaluation: EvaluationVerdict,
  skipEvaluation: { reason: string } | null,
  review: { acknowledged?: readonly string[]; overrideRegression?: { reason: string } | null; isAdmin?: boolean } = {},
): Promise<GateDecision> {
  const candidate = draft.candidateId ? await getCandidate(makeDb(env.DB), workspaceId, draft.candidateId) : undefined;
  const plan = candidate?.mergePlan ? (JSON.parse(candidate.mergePlan) as MergePlan) : null;
  const report = draft.mergeReport ? (JSON.parse(draft.mergeReport) as { preservation?: { lost_local?: number } | null }) : null;
  const config = learningConfigOf(await loadConfig(env, workspaceId));
  return decideGates({
    mode,
    draftStatus: draft.status,
    safetyLevel: (JSON.parse(draft.safety) as SafetyReport).level,
    blockedConflicts: plan?.blocked ?? false,
    evaluation,
    confidence: draft.confidence,
    lostLocal: report?.preservation?.lost_local ?? 0,
    skipEvaluation,
    autoPublish: config.auto_publish,
    proposalKind: draft.proposalKind,
    sensitive: await draftSensitiveItems(env, workspaceId, draft),
    acknowledged: review.acknowledged ?? [],
    overrideRegression: review.overrideRegression ?? null,
    isAdmin: review.isAdmin ?? false,
  });
}

export interface ApproveInput {
  actor: string;
  skipEvaluation: boolean;
  reason?: string | undefined;
  /** Ids of the sensitive changes the reviewer acknowledges (docs/learning.md, "Gates"). */
  acknowledge?: readonly string[];
  /** Approve over a failed evaluation: needs `isAdmin` and `reason`; recorded in the review. */
  overrideRegression?: boolean;
  isAdmin?: boolean;
}

/**
 * Approve a draft: the gates with this evaluation verdict, then publish under the lock. The lock's
 * publish re-checks the draft's status, so two concurrent approvals publish once (the second is 409).
 */
export async function approveDraft(
  env: Env,
  workspaceId: string,
  draftId: string,
  input: ApproveInput,
  evaluation: EvaluationVerdict,
): Promise<PublishDraftResult & { gates: GateDecision["steps"] }> {
  const draft = await requireDraft(env, workspaceId, draftId);
  const skip = input.skipEvaluation ? { reason: input.reason ?? "" } : null;
  const override = input.overrideRegression ? { reason: input.reason ?? "" } : null;
  const gates = await draftGates(env, workspaceId, draft, "manual", evaluation, skip, {
    acknowledged: input.acknowledge ?? [],
    overrideRegression: override,
    isAdmin: input.isAdmin ?? false,
  });
  if (gates.refusal)
    throw new AppError(gates.refusal.code, `Draft '${draftId}' cannot be approved: ${gates.refusal.message}`, {
      details: { gate: gates.refusal.gate, gates: gates.steps },
    });
  const published = await runLocked(env, workspaceId, {
    kind: "publish_draft",
    draftId,
    actor: input.actor,
    review: {
      approved_by: input.actor,
      mode: "manual",
      evaluation,
      ...(skip ? { skip_evaluation: true, skip_reason: skip.reason } : {}),
      ...(override && evaluation === "failed" ? { override_regression: { by: input.actor, reason: override.reason } } : {}),
      ...(input.acknowledge && input.acknowledge.length > 0 ? { acknowledged: [...input.acknowledge] } : {}),
      confidence: draft.confidence,
      gates: gates.steps,
    },
  });
  return { ...published, gates: gates.steps };
}

export async function rejectDraftService(env: Env, workspaceId: string, draftId: string, reason: string, actor: string) {
  return runLocked(env, workspaceId, { kind: "reject_draft", draftId, reason, actor });
}

/**
 * Where an evaluation verdict arrives (the evaluation's completion calls this): when the workspace
 * auto-publishes and every gate passes, the draft is published. Returns what was decided; never
 * throws for a gate that blocks (the draft simply waits for review).
 */
export async function onEvaluationFinished(
  env: Env,
  workspaceId: string,
  draftId: string,
  verdict: EvaluationVerdict,
): Promise<{ published: PublishDraftResult | null; gates: GateDecision }> {
  const draft = await requireDraft(env, workspaceId, draftId);
  const gates = await draftGates(env, workspaceId, draft, "auto", verdict, null);
  if (!gates.publish) return { published: null, gates };
  const published = await runLocked(env, workspaceId, {
    kind: "publish_draft",
    draftId,
    actor: "learning:auto_publish",
    review: { approved_by: "learning:auto_publish", mode: "auto", evaluation: verdict, confidence: draft.confidence, gates: gates.steps },
  });
  return { published, gates };
}

export interface ProposeInput {
  skillName: string;
  files: readonly TreeFile[];
  proposalKind: "agent_proposal" | "upload_draft";
  actor: string;
  /** What is recorded about where it came from (session, run, rationale, upload source). */
  provenance: Record<string, unknown>;
  /** The request's lock budget when it started earlier (the route's quota check); else it starts here. */
  budget?: LockBudget;
}

/** A draft of a skill edit (agent proposal or upload): prepared, safety-checked and stored outside the lock; never published. */
export async function proposeSkillDraft(
  env: Env,
  workspaceId: string,
  input: ProposeInput,
): Promise<RecordedDraft & { safety: SafetyReport; tree_hash: string }> {
  const prepared = await prepareSkill(input.skillName, input.files);
  if (!prepared.ok)
    throw new AppError("unprocessable", `Draft rejected: ${describeProblems(prepared.problems)}`, {
      details: { problems: prepared.problems },
    });
  const skill = prepared.skill;
  if (blocksPublication(skill.safety.level)) {
    const first = skill.safety.findings.find((f) => f.level === "fail" || f.level === "critical");
    throw new AppError("unprocessable", `Safety check failed: ${first?.path}: ${first?.message} (${skill.safety.level})`, {
      details: { safety: skill.safety },
    });
  }
  const db = makeDb(env.DB);
  const current = await getSkill(db, workspaceId, input.skillName);
  const version = current ? await getVersion(db, workspaceId, input.skillName, current.currentVersionNo) : undefined;
  // One budget for the epoch (an RPC to the lock's own object), storing and the lock (lock-budget.ts).
  const budget = input.budget ?? startLockBudget(env);
  const epoch = await storeEpoch(env, workspaceId, budget);
  const stored = await beforeDeadline(budget, "store", () => storeTree(env, workspaceId, skill.files));
  const recorded = await runLocked(
    env,
    workspaceId,
    {
      kind: "record_proposal_draft",
      epoch,
      input: {
        skillName: input.skillName,
        proposalKind: input.proposalKind,
        treeHash: stored.treeHash,
        contentHash: skill.contentHash,
        frontmatter: skill.frontmatter,
        safety: skill.safety,
        localTreeHash: version?.treeHash ?? null,
        provenance: input.provenance,
        actor: input.actor,
      },
    },
    "wait",
    budget,
  );
  return { ...recorded, safety: skill.safety, tree_hash: stored.treeHash };
}
