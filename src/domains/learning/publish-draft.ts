/**
 * Publishing a draft as the skill's next version (under the workspace lock), then telling the
 * plugin state about it. The gates of the learning pipeline (gates.ts, docs/learning.md) sit in front
 * of this; what is enforced here is what must never be bypassed: static safety and unresolved
 * supporting-file conflicts block publication. The plugin-state update is an observer: if it fails,
 * the publish still stands and the next sync's reconciliation repairs the state from provenance.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb, type Db } from "../../storage/db/client.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { runBatch } from "../skills/batch.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import type { EnsureStored } from "../skills/publish.ts";
import { blocksPublication, type SafetyReport } from "../skills/safety.ts";
import type { Frontmatter } from "../skills/frontmatter.ts";
import { getSkill, getVersion, insertVersion, nextVersionNo, upsertCurrent } from "../skills/store.ts";
import { requireManifest } from "../../storage/blob/store.ts";
import type { MergePlan } from "../plugins/merge-plan.ts";
import { getPlugin, listPluginSkillRows, updatePlugin, updatePluginSkill } from "../plugins/state.ts";
import type { PluginUpdateProvenance } from "../skills/candidates.ts";
import { getCandidate, getDraft, updateCandidate, updateDraft } from "../skills/candidate-store.ts";
import { errorFields, log } from "../../kernel/log.ts";

/** What the approval recorded in the published version's provenance (docs/learning.md, "Gates"). */
export type DraftReview = Record<string, unknown> & { approved_by: string };

export interface PublishDraftResult {
  skill: string;
  version: string;
  pluginStateUpdated: boolean;
}

export async function publishDraft(
  env: Env,
  workspaceId: string,
  draftId: string,
  actor: string,
  ensureStored: EnsureStored,
  review?: DraftReview,
): Promise<PublishDraftResult> {
  const db = makeDb(env.DB);
  const draft = await getDraft(db, workspaceId, draftId);
  if (!draft) throw notFound(`Draft '${draftId}'`);
  if (draft.status !== "pending_review") throw new AppError("conflict", `Draft '${draftId}' is ${draft.status}, not pending_review`);
  const safety = JSON.parse(draft.safety) as SafetyReport;
  if (blocksPublication(safety.level))
    throw new AppError("unprocessable", `Draft '${draftId}' failed the safety check (${safety.level})`, {
      details: { findings: safety.findings },
    });
  const candidate = draft.candidateId ? await getCandidate(db, workspaceId, draft.candidateId) : undefined;
  const plan = candidate?.mergePlan ? (JSON.parse(candidate.mergePlan) as MergePlan) : null;
  if (plan?.blocked)
    throw new AppError("unprocessable", `Draft '${draftId}' has unresolved supporting-file conflicts`, {
      details: { conflicts: plan.conflicts },
    });
  const prov = JSON.parse(draft.provenance) as Partial<PluginUpdateProvenance>;
  // Every draft names the local tree it was made against (a proposal over a skill that did not exist: null).
  if (prov.local_tree_hash !== undefined) await requireUnchangedLocal(db, workspaceId, draftId, draft.skillName, prov);
  await ensureStored(draft.treeHash);
  const manifest = await requireManifest(env, workspaceId, draft.treeHash);
  const frontmatter = JSON.parse(draft.frontmatter) as Frontmatter;
  const versionNo = await nextVersionNo(db, workspaceId, draft.skillName);
  const now = Date.now();
  await runBatch(db, [
    insertVersion(
      db,
      workspaceId,
      versionNo,
      {
        skillName: draft.skillName,
        treeHash: draft.treeHash,
        contentHash: draft.contentHash,
        frontmatter,
        provenance: { ...(JSON.parse(draft.provenance) as Record<string, unknown>), ...(review ? { review } : {}) },
        safety,
        fileCount: manifest.files.length,
        totalBytes: manifest.files.reduce((n, f) => n + f.size, 0),
        actor,
      },
      now,
    ),
    updateDraft(
      db,
      workspaceId,
      draft.id,
      { status: "published", publishedVersionNo: versionNo, reviewedBy: review?.approved_by ?? actor },
      now,
    ),
    ...(candidate ? [updateCandidate(db, workspaceId, candidate.id, { status: "published" }, now)] : []),
    upsertCurrent(db, workspaceId, draft.skillName, versionNo, frontmatter.description, now, {
      sourceKind: "managed",
      pluginId: null,
      status: "active",
    }),
  ]);
  let pluginStateUpdated = false;
  if (prov.kind === "plugin_skill_update") {
    try {
      pluginStateUpdated = await onPluginUpdatePublished(env, workspaceId, prov as PluginUpdateProvenance, versionNo);
    } catch (e) {
      // Audited, not fatal: the version is published; reconciliation repairs the state on the next sync.
      log.error("plugin state observer failed after publish", { workspace_id: workspaceId, draft_id: draftId, ...errorFields(e) });
    }
  }
  return { skill: draft.skillName, version: versionLabel(versionNo), pluginStateUpdated };
}

/**
 * A plugin update was drafted against the local version L; publishing it over a later L would
 * silently drop that local change. The next sync re-plans the candidate against the new L.
 */
async function requireUnchangedLocal(
  db: Db,
  workspaceId: string,
  draftId: string,
  skillName: string,
  prov: Partial<PluginUpdateProvenance>,
): Promise<void> {
  const skill = await getSkill(db, workspaceId, skillName);
  const current = skill ? await getVersion(db, workspaceId, skillName, skill.currentVersionNo) : undefined;
  if ((current?.treeHash ?? null) !== (prov.local_tree_hash ?? null)) {
    throw new AppError(
      "conflict",
      `Draft '${draftId}' was made against ${prov.local_version ?? "another version"} of '${skillName}', which is now at ${current ? versionLabel(current.versionNo) : "no version"}; ${prov.kind === "plugin_skill_update" ? "sync the plugin again" : "propose it again"}`,
      {
        details: {
          draft_local_version: prov.local_version ?? null,
          current_version: current ? versionLabel(current.versionNo) : null,
        },
      },
    );
  }
}

/** The PluginManager observer: advance accepted upstream and version, clear the pending candidate. */
export async function onPluginUpdatePublished(
  env: Env,
  workspaceId: string,
  prov: PluginUpdateProvenance,
  versionNo: number,
): Promise<boolean> {
  const db = makeDb(env.DB);
  const link = (await listPluginSkillRows(db, workspaceId, prov.plugin_id)).find((l) => l.skillName === prov.skill_name);
  if (!link || link.status === "adopted" || versionNo <= link.acceptedBeaverVersionNo) return false;
  const plugin = await getPlugin(db, workspaceId, prov.plugin_id);
  const now = Date.now();
  const clear = link.pendingCandidateId === prov.candidate_id;
  await runBatch(db, [
    updatePluginSkill(
      db,
      workspaceId,
      prov.plugin_id,
      prov.skill_name,
      {
        acceptedUpstreamTreeHash: prov.new_upstream_tree_hash,
        acceptedBeaverVersionNo: versionNo,
        pendingCandidateId: clear ? null : link.pendingCandidateId,
        status: clear || !link.pendingCandidateId ? "synced" : "update_pending",
      },
      now,
    ),
    ...(plugin
      ? [updatePlugin(db, workspaceId, prov.plugin_id, { installedVersion: prov.plugin_version ?? plugin.installedVersion }, now)]
      : []),
  ]);
  return true;
}
