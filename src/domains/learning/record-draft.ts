/**
 * Draft writes that run under the workspace lock (docs/learning.md): recording a merged (or failed)
 * plugin-update draft after synthesis, recording a proposed draft (an agent's `skill_propose`, an
 * upload marked as a draft), and rejecting a draft. Each re-checks what it was prepared against —
 * the candidate's status and inputs, the skill's current version — and writes in one D1 batch, so a
 * draft is wholly recorded or not at all.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { skillDrafts } from "../../storage/db/schema.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import { runBatch, type Statement } from "../skills/batch.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import { getCandidate, getDraft, otherActiveDraft, updateCandidate, updateDraft } from "../skills/candidate-store.ts";
import type { PluginUpdateEvidence } from "../skills/candidates.ts";
import type { Frontmatter } from "../skills/frontmatter.ts";
import type { SafetyReport } from "../skills/safety.ts";
import type { MergedDraft } from "./synthesize.ts";

export interface RecordedDraft {
  draftId: string;
  status: string;
  candidateId: string | null;
  supersedes: string | null;
}

/** Write a synthesized draft; `supersedes` is the draft a regeneration replaces. */
export async function recordMergeDraft(
  env: Env,
  workspaceId: string,
  merged: MergedDraft,
  supersedes: string | null,
  actor: string,
): Promise<RecordedDraft> {
  const db = makeDb(env.DB);
  const candidate = await getCandidate(db, workspaceId, merged.candidateId);
  if (!candidate) throw notFound(`Candidate '${merged.candidateId}'`);
  const evidence = JSON.parse(candidate.evidence) as PluginUpdateEvidence;
  const unchanged =
    candidate.status === merged.expectedStatus &&
    evidence.base_upstream_tree_hash === merged.evidence.base_upstream_tree_hash &&
    evidence.local_tree_hash === merged.evidence.local_tree_hash &&
    evidence.new_upstream_tree_hash === merged.evidence.new_upstream_tree_hash;
  if (!unchanged)
    throw new AppError("conflict", `Candidate '${candidate.id}' changed while it was being merged (now ${candidate.status}); sync again`);
  // A first merge needs a candidate still waiting; a regeneration needs the draft it replaces to still be
  // the candidate's latest, so two concurrent merges of one candidate record one draft.
  if (supersedes === null ? candidate.status !== "pending_synthesis" : candidate.draftId !== supersedes)
    throw new AppError("conflict", `Candidate '${candidate.id}' was merged meanwhile (draft '${candidate.draftId ?? "none"}')`);
  const blocker = await otherActiveDraft(db, workspaceId, candidate.skillName, [candidate.id]);
  if (blocker) throw new AppError("conflict", `Skill '${candidate.skillName}' has another draft under review ('${blocker.id}')`);
  const now = Date.now();
  const draftId = newId("drf");
  const statements: Statement[] = [];
  if (supersedes) {
    const old = await getDraft(db, workspaceId, supersedes);
    if (old && (old.status === "pending_review" || old.status === "merge_failed"))
      statements.push(updateDraft(db, workspaceId, old.id, { status: "superseded", supersededBy: draftId }, now));
  }
  statements.push(
    db.insert(skillDrafts).values({
      workspaceId,
      id: draftId,
      skillName: candidate.skillName,
      candidateId: candidate.id,
      proposalKind: "plugin_skill_update",
      treeHash: merged.treeHash,
      contentHash: merged.contentHash,
      frontmatter: JSON.stringify(merged.frontmatter),
      provenance: JSON.stringify({ ...merged.provenance, draft_id: draftId, actor }),
      safety: JSON.stringify(merged.safety),
      status: merged.status,
      mergeReport: JSON.stringify(merged.report),
      confidence: merged.report.confidence,
      failure: merged.report.failure,
      createdAt: now,
      updatedAt: now,
    }),
    updateCandidate(
      db,
      workspaceId,
      candidate.id,
      {
        status: merged.status === "pending_review" ? "drafted" : "synthesis_failed",
        draftId,
        mergePlan: JSON.stringify(merged.plan),
        blockedByDraftId: null,
      },
      now,
    ),
  );
  await runBatch(db, statements);
  return { draftId, status: merged.status, candidateId: candidate.id, supersedes };
}

/** A draft proposed against the skill's current version (an agent's proposal, an upload marked as a draft). */
export interface ProposalDraftInput {
  skillName: string;
  proposalKind: "agent_proposal" | "upload_draft";
  treeHash: string;
  contentHash: string;
  frontmatter: Frontmatter;
  safety: SafetyReport;
  /** The current version's tree the proposal was made against (null when the skill does not exist yet). */
  localTreeHash: string | null;
  provenance: Record<string, unknown>;
  actor: string;
}

export async function recordProposalDraft(env: Env, workspaceId: string, input: ProposalDraftInput): Promise<RecordedDraft> {
  const db = makeDb(env.DB);
  const skill = await getSkill(db, workspaceId, input.skillName);
  const current = skill ? await getVersion(db, workspaceId, input.skillName, skill.currentVersionNo) : undefined;
  if ((current?.treeHash ?? null) !== input.localTreeHash)
    throw new AppError("conflict", `Skill '${input.skillName}' changed while the draft was prepared; propose again`);
  const now = Date.now();
  const draftId = newId("drf");
  await runBatch(db, [
    db.insert(skillDrafts).values({
      workspaceId,
      id: draftId,
      skillName: input.skillName,
      candidateId: null,
      proposalKind: input.proposalKind,
      treeHash: input.treeHash,
      contentHash: input.contentHash,
      frontmatter: JSON.stringify(input.frontmatter),
      provenance: JSON.stringify({
        kind: input.proposalKind,
        ...input.provenance,
        local_version: current ? versionLabel(current.versionNo) : null,
        local_tree_hash: input.localTreeHash,
        draft_id: draftId,
        actor: input.actor,
      }),
      safety: JSON.stringify(input.safety),
      status: "pending_review",
      createdAt: now,
      updatedAt: now,
    }),
  ]);
  return { draftId, status: "pending_review", candidateId: null, supersedes: null };
}

/** Reject a draft under review (or a failed merge); its candidate is rejected too, the plugin state and history stay. */
export async function rejectDraft(
  env: Env,
  workspaceId: string,
  draftId: string,
  reason: string,
  actor: string,
): Promise<{ status: string }> {
  const db = makeDb(env.DB);
  const draft = await getDraft(db, workspaceId, draftId);
  if (!draft) throw notFound(`Draft '${draftId}'`);
  if (draft.status !== "pending_review" && draft.status !== "merge_failed")
    throw new AppError("conflict", `Draft '${draftId}' is ${draft.status}; only drafts under review can be rejected`);
  const now = Date.now();
  await runBatch(db, [
    updateDraft(db, workspaceId, draftId, { status: "rejected", reviewedBy: actor, reviewReason: reason }, now),
    ...(draft.candidateId ? [updateCandidate(db, workspaceId, draft.candidateId, { status: "rejected" }, now)] : []),
  ]);
  return { status: "rejected" };
}
