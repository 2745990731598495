/**
 * Plugin sync under the workspace lock: reconcile state from the published versions' provenance,
 * then classify every linked skill (B = accepted upstream, L = current version, U = package) and
 * record idempotent `plugin_skill_update` candidates — a `fast_forward` draft containing U, or a
 * `three_way` candidate with its supporting-file merge plan waiting for synthesis. All writes of one
 * plugin are one D1 batch, plugin row last. Sync itself never writes to R2.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb, type Db } from "../../storage/db/client.ts";
import { learningCandidates, skillDrafts } from "../../storage/db/schema.ts";
import { notFound } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { timerYielder } from "../../kernel/yield-timers.ts";
import { requireManifest } from "../../storage/blob/store.ts";
import { runBatch, type Statement } from "../skills/batch.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import { getCandidate, otherActiveDraft, supersedeDraftsOf, updateCandidate, type CandidateRow } from "../skills/candidate-store.ts";
import { isOpen, type MergeMode, type PluginUpdateEvidence, type PluginUpdateProvenance } from "../skills/candidates.ts";
import { classifyUpgrade, pluginUpdateCandidateId, type UpgradeAction } from "./classify.ts";
import { planSupportingFileMerge, type MergePlan } from "./merge-plan.ts";
import {
  discoveredSkillsOf,
  getPlugin,
  listPluginRows,
  listPluginSkillRows,
  snapshotExists,
  updatePlugin,
  updatePluginSkill,
  type PluginRow,
  type PluginSkillRow,
} from "./state.ts";
import type { PackageSkillRecord } from "./ingest.ts";

export type SkipReason = "not_enabled" | "paused" | "missing" | "invalid";

export interface SkillSyncOutcome {
  skill: string;
  action: UpgradeAction | "removed_upstream" | "adopted";
  candidateId: string | null;
  candidateStatus: string | null;
  status: string;
}

export interface PluginSyncOutcome {
  pluginId: string;
  skipped: SkipReason | null;
  reconciled: string[];
  skills: SkillSyncOutcome[];
  /** Declared by the package but not linked yet: enabling the plugin again mirrors them. */
  newSkills: string[];
}

export interface SyncResult {
  plugins: PluginSyncOutcome[];
}

export async function syncPlugins(env: Env, workspaceId: string, pluginId: string | undefined): Promise<SyncResult> {
  const db = makeDb(env.DB);
  let rows: PluginRow[];
  if (pluginId !== undefined) {
    const row = await getPlugin(db, workspaceId, pluginId);
    if (!row) throw notFound(`Plugin '${pluginId}'`);
    rows = [row];
  } else rows = await listPluginRows(db, workspaceId);
  const out: PluginSyncOutcome[] = [];
  for (const row of rows) out.push(await syncOne(env, db, workspaceId, row));
  return { plugins: out };
}

function skipReason(p: PluginRow): SkipReason | null {
  if (!p.enabled) return "not_enabled";
  if (p.updatesPaused) return "paused";
  if (p.packageStatus === "missing") return "missing";
  if (p.packageStatus === "invalid") return "invalid";
  return null;
}

async function syncOne(env: Env, db: Db, workspaceId: string, plugin: PluginRow): Promise<PluginSyncOutcome> {
  const outcome: PluginSyncOutcome = { pluginId: plugin.id, skipped: null, reconciled: [], skills: [], newSkills: [] };
  if (!plugin.enabled) return { ...outcome, skipped: "not_enabled" };
  const now = Date.now();
  const statements: Statement[] = [];
  const links = await listPluginSkillRows(db, workspaceId, plugin.id);
  // Thousands of D1 reads in a row would keep every timer of the isolate from firing (kernel/yield-timers.ts).
  const letTimersRun = timerYielder();
  for (const link of links) {
    await letTimersRun();
    if (await reconcile(db, workspaceId, plugin.id, link, statements, now)) outcome.reconciled.push(link.skillName);
  }
  const skip = skipReason(plugin);
  if (skip) {
    await runBatch(db, statements);
    return { ...outcome, skipped: skip };
  }
  const declared = new Map(discoveredSkillsOf(plugin).map((s) => [s.name, s]));
  for (const link of links) {
    await letTimersRun();
    outcome.skills.push(await syncSkill(env, db, workspaceId, plugin, link, declared.get(link.skillName), statements, now));
  }
  outcome.newSkills = [...declared.keys()].filter((n) => !links.some((l) => l.skillName === n));
  statements.push(updatePlugin(db, workspaceId, plugin.id, { lastSyncAt: now, syncedDigest: plugin.packageDigest }, now));
  await runBatch(db, statements);
  return outcome;
}

/**
 * Repair plugin state from the current version's provenance (an observer that failed after a
 * publish). Mutates `link` in memory and queues the writes; never moves the accepted version back.
 */
async function reconcile(
  db: Db,
  workspaceId: string,
  pluginId: string,
  link: PluginSkillRow,
  statements: Statement[],
  now: number,
): Promise<boolean> {
  if (link.status === "adopted") return false;
  const skill = await getSkill(db, workspaceId, link.skillName);
  if (!skill || skill.currentVersionNo <= link.acceptedBeaverVersionNo) return false;
  const current = await getVersion(db, workspaceId, link.skillName, skill.currentVersionNo);
  if (!current) return false;
  const prov = JSON.parse(current.provenance) as Partial<PluginUpdateProvenance>;
  if (prov.kind !== "plugin_skill_update" || prov.plugin_id !== pluginId || !prov.new_upstream_tree_hash) return false;
  if (!(await snapshotExists(db, workspaceId, pluginId, link.skillName, prov.new_upstream_tree_hash))) return false;
  link.acceptedUpstreamTreeHash = prov.new_upstream_tree_hash;
  link.acceptedBeaverVersionNo = current.versionNo;
  if (link.pendingCandidateId) {
    const pending = await getCandidate(db, workspaceId, link.pendingCandidateId);
    const evidence = pending ? (JSON.parse(pending.evidence) as PluginUpdateEvidence) : null;
    if (pending && (pending.id === prov.candidate_id || evidence?.new_upstream_tree_hash === prov.new_upstream_tree_hash)) {
      statements.push(updateCandidate(db, workspaceId, pending.id, { status: "published" }, now));
      link.pendingCandidateId = null;
    }
  }
  link.status = link.pendingCandidateId ? "update_pending" : "synced";
  statements.push(
    updatePluginSkill(
      db,
      workspaceId,
      pluginId,
      link.skillName,
      {
        acceptedUpstreamTreeHash: link.acceptedUpstreamTreeHash,
        acceptedBeaverVersionNo: link.acceptedBeaverVersionNo,
        pendingCandidateId: link.pendingCandidateId,
        status: link.status,
      },
      now,
    ),
  );
  return true;
}

async function syncSkill(
  env: Env,
  db: Db,
  workspaceId: string,
  plugin: PluginRow,
  link: PluginSkillRow,
  upstream: PackageSkillRecord | undefined,
  statements: Statement[],
  now: number,
): Promise<SkillSyncOutcome> {
  const result = (
    action: SkillSyncOutcome["action"],
    status: string,
    candidate: { id: string; status: string } | null,
  ): SkillSyncOutcome => ({
    skill: link.skillName,
    action,
    candidateId: candidate?.id ?? null,
    candidateStatus: candidate?.status ?? null,
    status,
  });
  if (link.status === "adopted") return result("adopted", "adopted", null);
  if (!upstream) {
    statements.push(updatePluginSkill(db, workspaceId, plugin.id, link.skillName, { status: "removed_upstream" }, now));
    return result("removed_upstream", "removed_upstream", null);
  }
  const skill = await getSkill(db, workspaceId, link.skillName);
  const current = skill ? await getVersion(db, workspaceId, link.skillName, skill.currentVersionNo) : undefined;
  if (!skill || !current) return result("none", link.status, null);
  const B = link.acceptedUpstreamTreeHash;
  const L = current.treeHash;
  const U = upstream.treeHash;
  const action = classifyUpgrade({ base: B, local: L, upstream: U });
  const pending = link.pendingCandidateId ? await getCandidate(db, workspaceId, link.pendingCandidateId) : undefined;

  if (action === "none" || action === "acknowledge") {
    if (pending && isOpen(pending.status)) supersede(db, workspaceId, pending, null, statements, now);
    const set =
      action === "acknowledge"
        ? {
            acceptedUpstreamTreeHash: U,
            acceptedBeaverVersionNo: current.versionNo,
            observedUpstreamTreeHash: U,
            pendingCandidateId: null,
            status: "synced",
          }
        : { observedUpstreamTreeHash: U, pendingCandidateId: null, status: "synced" };
    statements.push(updatePluginSkill(db, workspaceId, plugin.id, link.skillName, set, now));
    return result(action, set.status, null);
  }

  const mode: MergeMode = action;
  const candidateId = pluginUpdateCandidateId(plugin.id, link.skillName, U);
  const superseding = pending && pending.id !== candidateId && isOpen(pending.status) ? pending : undefined;
  if (superseding) supersede(db, workspaceId, superseding, candidateId, statements, now);
  const evidence: PluginUpdateEvidence = {
    plugin_id: plugin.id,
    plugin_version: plugin.discoveredVersion,
    skill_name: link.skillName,
    merge_mode: mode,
    base_upstream_tree_hash: B,
    new_upstream_tree_hash: U,
    local_version: versionLabel(current.versionNo),
    local_tree_hash: L,
  };
  const existing = await getCandidate(db, workspaceId, candidateId);
  // The id names U only. A candidate planned from the same B, L and mode stands as recorded (or as
  // decided); any other — superseded, waiting for a busy skill, or planned against another B or L (a
  // local edit, a rollback, an upstream gone back to an earlier version) — is planned again under the
  // same id, its draft under review retired in this batch.
  const stands =
    existing !== undefined &&
    existing.status !== "superseded" &&
    existing.status !== "pending" &&
    sameInputs(JSON.parse(existing.evidence) as PluginUpdateEvidence, evidence);
  let candidateStatus: string;
  if (existing && stands) {
    candidateStatus = existing.status;
  } else {
    if (existing) statements.push(supersedeDraftsOf(db, workspaceId, candidateId, now));
    // The superseded candidate's draft is retired in this same batch: it does not hold the skill.
    const blocker = await otherActiveDraft(db, workspaceId, link.skillName, superseding ? [candidateId, superseding.id] : [candidateId]);
    const plan = mode === "three_way" ? await mergePlanFor(env, workspaceId, B, L, U) : null;
    let draftId: string | null = null;
    if (blocker) candidateStatus = "pending";
    else if (mode === "three_way") candidateStatus = "pending_synthesis";
    else {
      candidateStatus = "drafted";
      draftId = newId("drf");
      const provenance: PluginUpdateProvenance = { kind: "plugin_skill_update", ...evidence, candidate_id: candidateId, draft_id: draftId };
      statements.push(
        db.insert(skillDrafts).values({
          workspaceId,
          id: draftId,
          skillName: link.skillName,
          candidateId,
          proposalKind: "plugin_skill_update",
          treeHash: U,
          contentHash: upstream.contentHash,
          frontmatter: JSON.stringify(upstream.frontmatter),
          provenance: JSON.stringify(provenance),
          safety: JSON.stringify(upstream.safety),
          status: "pending_review",
          createdAt: now,
          updatedAt: now,
        }),
      );
    }
    const fields = {
      status: candidateStatus,
      mergeMode: mode,
      evidence: JSON.stringify(evidence),
      mergePlan: plan ? JSON.stringify(plan) : null,
      draftId,
      supersededBy: null,
      blockedByDraftId: blocker?.id ?? null,
    };
    if (existing) statements.push(updateCandidate(db, workspaceId, candidateId, fields, now));
    else
      statements.push(
        db.insert(learningCandidates).values({
          workspaceId,
          id: candidateId,
          kind: "plugin_skill_update",
          skillName: link.skillName,
          pluginId: plugin.id,
          createdAt: now,
          updatedAt: now,
          ...fields,
        }),
      );
  }
  const status = "update_pending";
  statements.push(
    updatePluginSkill(
      db,
      workspaceId,
      plugin.id,
      link.skillName,
      { observedUpstreamTreeHash: U, pendingCandidateId: candidateId, status },
      now,
    ),
  );
  return result(action, status, { id: candidateId, status: candidateStatus });
}

/** Whether a recorded candidate was planned from the same B, L and merge mode (U is in its id). */
function sameInputs(recorded: PluginUpdateEvidence, now: PluginUpdateEvidence): boolean {
  return (
    recorded.base_upstream_tree_hash === now.base_upstream_tree_hash &&
    recorded.local_tree_hash === now.local_tree_hash &&
    recorded.merge_mode === now.merge_mode
  );
}

function supersede(db: Db, workspaceId: string, c: CandidateRow, by: string | null, statements: Statement[], now: number): void {
  statements.push(
    updateCandidate(db, workspaceId, c.id, { status: "superseded", supersededBy: by }, now),
    supersedeDraftsOf(db, workspaceId, c.id, now),
  );
}

async function mergePlanFor(env: Env, workspaceId: string, base: string, local: string, upstream: string): Promise<MergePlan> {
  const [b, l, u] = await Promise.all([
    requireManifest(env, workspaceId, base),
    requireManifest(env, workspaceId, local),
    requireManifest(env, workspaceId, upstream),
  ]);
  return planSupportingFileMerge(b.files, l.files, u.files);
}
