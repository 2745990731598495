/**
 * The mutations that pass through the workspace write lock, as one tagged union, and their
 * dispatch. Each op is a plain function of (env, workspace, input); the WorkspaceDO only adds the
 * lock and the GC-epoch check around it.
 */
import type { Env } from "../../storage/env.ts";
import { publishSkillVersion, rollbackSkill, setSkillStatus, type EnsureStored, type PublishSkillInput } from "../skills/publish.ts";
import { recordPackage, removePackage, type RecordPackageInput } from "../plugins/record.ts";
import { enablePlugin } from "../plugins/enable.ts";
import { syncPlugins } from "../plugins/sync.ts";
import { adoptSkill, disablePlugin, pausePlugin, resumePlugin } from "../plugins/lifecycle.ts";
import { publishDraft, type DraftReview } from "../learning/publish-draft.ts";
import { recordMergeDraft, recordProposalDraft, rejectDraft, type ProposalDraftInput } from "../learning/record-draft.ts";
import type { MergedDraft } from "../learning/synthesize.ts";
import { collectOrphans } from "../../storage/blob/gc.ts";
import { makeDb } from "../../storage/db/client.ts";
import { proposeImprovements } from "../learning/improvement/job.ts";
import { recordEvidenceDraft } from "../learning/improvement/record.ts";
import { proposeNewSkills } from "../learning/improvement/new-skill.ts";
import type { EvidenceDraft } from "../learning/improvement/synthesize.ts";

export type WorkspaceOp =
  | { kind: "publish_skill"; input: PublishSkillInput; epoch: number }
  | { kind: "rollback_skill"; name: string; version: string; actor: string }
  | { kind: "set_skill_status"; name: string; status: "active" | "disabled"; actor: string }
  | { kind: "record_package"; input: RecordPackageInput; epoch: number }
  | { kind: "remove_package"; pluginId: string }
  | { kind: "enable_plugin"; pluginId: string; actor: string }
  | { kind: "sync_plugins"; pluginId?: string }
  | { kind: "pause_plugin"; pluginId: string }
  | { kind: "resume_plugin"; pluginId: string }
  | { kind: "disable_plugin"; pluginId: string; actor: string }
  | { kind: "adopt_skill"; pluginId: string; skillName: string; actor: string }
  | { kind: "publish_draft"; draftId: string; actor: string; review?: DraftReview }
  | { kind: "record_merge_draft"; merged: MergedDraft; supersedes: string | null; actor: string; epoch: number }
  | { kind: "record_proposal_draft"; input: ProposalDraftInput; epoch: number }
  | { kind: "reject_draft"; draftId: string; reason: string; actor: string }
  | { kind: "collect_garbage"; now: number; graceMs: number }
  | { kind: "propose_improvements"; now: number }
  | { kind: "propose_new_skills"; now: number }
  | { kind: "record_evidence_draft"; drafted: EvidenceDraft; actor: string; epoch: number };

export type OpKind = WorkspaceOp["kind"];

export interface OpResults {
  publish_skill: Awaited<ReturnType<typeof publishSkillVersion>>;
  rollback_skill: Awaited<ReturnType<typeof rollbackSkill>>;
  set_skill_status: Awaited<ReturnType<typeof setSkillStatus>>;
  record_package: Awaited<ReturnType<typeof recordPackage>>;
  remove_package: Awaited<ReturnType<typeof removePackage>>;
  enable_plugin: Awaited<ReturnType<typeof enablePlugin>> & { sync: Awaited<ReturnType<typeof syncPlugins>> | null };
  sync_plugins: Awaited<ReturnType<typeof syncPlugins>>;
  pause_plugin: Awaited<ReturnType<typeof pausePlugin>>;
  resume_plugin: Awaited<ReturnType<typeof resumePlugin>>;
  disable_plugin: Awaited<ReturnType<typeof disablePlugin>>;
  adopt_skill: Awaited<ReturnType<typeof adoptSkill>>;
  publish_draft: Awaited<ReturnType<typeof publishDraft>>;
  record_merge_draft: Awaited<ReturnType<typeof recordMergeDraft>>;
  record_proposal_draft: Awaited<ReturnType<typeof recordProposalDraft>>;
  reject_draft: Awaited<ReturnType<typeof rejectDraft>>;
  collect_garbage: Awaited<ReturnType<typeof collectOrphans>>;
  propose_improvements: Awaited<ReturnType<typeof proposeImprovements>>;
  propose_new_skills: Awaited<ReturnType<typeof proposeNewSkills>>;
  record_evidence_draft: Awaited<ReturnType<typeof recordEvidenceDraft>>;
}

/** Run one op. `ensureStoredFor(epoch)` gives the tree check for content stored before the lock. */
export async function executeOp(
  env: Env,
  workspaceId: string,
  op: WorkspaceOp,
  ensureStoredFor: (epoch?: number) => EnsureStored,
): Promise<OpResults[OpKind]> {
  switch (op.kind) {
    case "publish_skill":
      return publishSkillVersion(env, workspaceId, op.input, ensureStoredFor(op.epoch));
    case "rollback_skill":
      return rollbackSkill(env, workspaceId, op.name, op.version, op.actor);
    case "set_skill_status":
      return setSkillStatus(env, workspaceId, op.name, op.status, op.actor);
    case "record_package":
      return recordPackage(env, workspaceId, op.input, ensureStoredFor(op.epoch));
    case "remove_package":
      return removePackage(env, workspaceId, op.pluginId);
    case "enable_plugin": {
      const enabled = await enablePlugin(env, workspaceId, op.pluginId, op.actor, ensureStoredFor());
      // Re-enabling restores linked skills and syncs (docs/skills-and-plugins.md, "Plugins");
      // a first enable has nothing to sync.
      const sync = enabled.restored.length > 0 ? await syncPlugins(env, workspaceId, op.pluginId) : null;
      return { ...enabled, sync };
    }
    case "sync_plugins":
      return syncPlugins(env, workspaceId, op.pluginId);
    case "pause_plugin":
      return pausePlugin(env, workspaceId, op.pluginId);
    case "resume_plugin":
      return resumePlugin(env, workspaceId, op.pluginId);
    case "disable_plugin":
      return disablePlugin(env, workspaceId, op.pluginId, op.actor);
    case "adopt_skill":
      return adoptSkill(env, workspaceId, op.pluginId, op.skillName, op.actor);
    case "publish_draft":
      return publishDraft(env, workspaceId, op.draftId, op.actor, ensureStoredFor(), op.review);
    case "record_merge_draft":
      // The merged tree was stored before the lock: re-checked if a collection ran since (GC epoch).
      if (op.merged.status === "pending_review") await ensureStoredFor(op.epoch)(op.merged.treeHash);
      return recordMergeDraft(env, workspaceId, op.merged, op.supersedes, op.actor);
    case "record_proposal_draft":
      await ensureStoredFor(op.epoch)(op.input.treeHash);
      return recordProposalDraft(env, workspaceId, op.input);
    case "reject_draft":
      return rejectDraft(env, workspaceId, op.draftId, op.reason, op.actor);
    case "collect_garbage":
      return collectOrphans(env, workspaceId, op.now, op.graceMs);
    case "propose_improvements":
      // Under the lock so two overlapping ticks never record two candidates for one version (docs/learning.md).
      return proposeImprovements(env, makeDb(env.DB), workspaceId, op.now);
    case "propose_new_skills":
      return proposeNewSkills(env, workspaceId, op.now);
    case "record_evidence_draft":
      if (op.drafted.status === "pending_review" && op.drafted.treeHash) await ensureStoredFor(op.epoch)(op.drafted.treeHash);
      return recordEvidenceDraft(env, workspaceId, op.drafted, op.actor);
  }
}
