/**
 * Enabling a plugin, under the workspace lock: all declared skills or none (docs/skills-and-plugins.md,
 * "Plugins"). Conflicts (a name owned by another plugin or by a non-plugin skill) and safety failures
 * are found before any change; then one D1 batch writes every mirror version, the `current` pointers,
 * the linked-skill state and — last — the plugin row. Re-enabling a disabled plugin restores its linked
 * skills and syncs.
 */
import { timerYielder } from "../../kernel/yield-timers.ts";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { pluginSkills } from "../../storage/db/schema.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { runBatch, type Statement } from "../skills/batch.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import type { EnsureStored } from "../skills/publish.ts";
import { blocksPublication } from "../skills/safety.ts";
import { getSkill, insertAudit, insertVersion, nextVersionNo, updateSkill, upsertCurrent } from "../skills/store.ts";
import { discoveredSkillsOf, getPlugin, listPluginSkillRows, packageErrorsOf, updatePlugin, updatePluginSkill } from "./state.ts";
import { describeProblems } from "../../kernel/content-tree/problems.ts";

export interface EnableResult {
  pluginId: string;
  changed: boolean;
  mirrored: { skill: string; version: string }[];
  restored: string[];
}

/** Provenance of an exact initial mirror. */
export interface PluginMirrorProvenance {
  kind: "plugin_mirror";
  mirror_mode: "exact";
  plugin_id: string;
  plugin_version: string | null;
  source_path: string;
  upstream_tree_hash: string;
  upstream_content_hash: string;
}

export async function enablePlugin(
  env: Env,
  workspaceId: string,
  pluginId: string,
  actor: string,
  ensureStored: EnsureStored,
): Promise<EnableResult> {
  const db = makeDb(env.DB);
  const plugin = await getPlugin(db, workspaceId, pluginId);
  if (!plugin) throw notFound(`Plugin '${pluginId}'`);
  if (plugin.packageStatus === "missing")
    throw new AppError("conflict", `Plugin '${pluginId}' has no package (missing); upload it again first`);
  if (plugin.packageStatus === "invalid") {
    const problems = packageErrorsOf(plugin);
    throw new AppError("unprocessable", `Plugin '${pluginId}' is invalid: ${describeProblems(problems)}`, { details: { problems } });
  }
  const declared = discoveredSkillsOf(plugin);
  const links = new Map((await listPluginSkillRows(db, workspaceId, pluginId)).map((l) => [l.skillName, l]));
  const fresh = declared.filter((s) => !links.has(s.name));

  const conflicts: { skill: string; owner: string }[] = [];
  // Thousands of D1 reads in a row would keep every timer of the isolate from firing (kernel/yield-timers.ts).
  const letTimersRun = timerYielder();
  for (const s of fresh) {
    await letTimersRun();
    const existing = await getSkill(db, workspaceId, s.name);
    if (existing)
      conflicts.push({
        skill: s.name,
        owner: existing.sourceKind === "plugin" && existing.pluginId ? `plugin '${existing.pluginId}'` : `${existing.sourceKind} skill`,
      });
  }
  if (conflicts.length > 0) {
    throw new AppError(
      "conflict",
      `Skill '${conflicts[0]!.skill}' already exists as a ${conflicts[0]!.owner}; no skill of plugin '${pluginId}' was changed`,
      { details: { conflicts } },
    );
  }
  const unsafe = fresh.flatMap((s) =>
    blocksPublication(s.safety.level) ? s.safety.findings.filter((f) => f.level === "fail" || f.level === "critical") : [],
  );
  if (unsafe.length > 0) {
    throw new AppError(
      "unprocessable",
      `Safety check failed: ${unsafe[0]!.path}: ${unsafe[0]!.message} (${unsafe[0]!.level}); no skill was changed`,
      { details: { findings: unsafe } },
    );
  }

  const restore = [...links.values()].filter((l) => l.status === "disabled");
  if (plugin.enabled && fresh.length === 0 && restore.length === 0) return { pluginId, changed: false, mirrored: [], restored: [] };

  const now = Date.now();
  const statements: Statement[] = [];
  const mirrored: EnableResult["mirrored"] = [];
  for (const s of fresh) {
    await letTimersRun();
    await ensureStored(s.treeHash);
    const versionNo = await nextVersionNo(db, workspaceId, s.name);
    const provenance: PluginMirrorProvenance = {
      kind: "plugin_mirror",
      mirror_mode: "exact",
      plugin_id: pluginId,
      plugin_version: plugin.discoveredVersion,
      source_path: s.path,
      upstream_tree_hash: s.treeHash,
      upstream_content_hash: s.contentHash,
    };
    statements.push(
      insertVersion(
        db,
        workspaceId,
        versionNo,
        {
          skillName: s.name,
          treeHash: s.treeHash,
          contentHash: s.contentHash,
          frontmatter: s.frontmatter,
          provenance: { ...provenance },
          safety: s.safety,
          fileCount: s.fileCount,
          totalBytes: s.totalBytes,
          actor,
        },
        now,
      ),
      upsertCurrent(db, workspaceId, s.name, versionNo, s.frontmatter.description, now, {
        sourceKind: "plugin",
        pluginId,
        status: "active",
      }),
      db.insert(pluginSkills).values({
        workspaceId,
        pluginId,
        skillName: s.name,
        status: "synced",
        acceptedUpstreamTreeHash: s.treeHash,
        observedUpstreamTreeHash: s.treeHash,
        acceptedBeaverVersionNo: versionNo,
        pendingCandidateId: null,
        updatedAt: now,
      }),
    );
    mirrored.push({ skill: s.name, version: versionLabel(versionNo) });
  }
  for (const l of restore) {
    statements.push(
      updateSkill(db, workspaceId, l.skillName, { status: "active" }, now),
      insertAudit(db, workspaceId, l.skillName, "enable", { reason: "plugin re-enabled", plugin_id: pluginId }, actor, now),
      updatePluginSkill(db, workspaceId, pluginId, l.skillName, { status: l.pendingCandidateId ? "update_pending" : "synced" }, now),
    );
  }
  // Plugin state last: it claims what the statements above made true.
  statements.push(
    updatePlugin(
      db,
      workspaceId,
      pluginId,
      // A first enable mirrors the package as it is, so it counts as synced with it; a re-enable syncs right after.
      {
        enabled: true,
        updatesPaused: false,
        installedVersion: plugin.installedVersion ?? plugin.discoveredVersion,
        enabledAt: plugin.enabledAt ?? now,
        ...(restore.length === 0 ? { syncedDigest: plugin.packageDigest } : {}),
      },
      now,
    ),
  );
  await runBatch(db, statements);
  return { pluginId, changed: true, mirrored, restored: restore.map((l) => l.skillName) };
}
