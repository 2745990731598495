/**
 * Pause, resume, disable and adopt, under the workspace lock (docs/skills-and-plugins.md,
 * "Plugins"). None of them deletes a version or an upstream snapshot.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { runBatch, type Statement } from "../skills/batch.ts";
import { getSkill, insertAudit, updateSkill } from "../skills/store.ts";
import { getCandidate, supersedeDraftsOf, updateCandidate } from "../skills/candidate-store.ts";
import { isOpen } from "../skills/candidates.ts";
import { getPlugin, listPluginSkillRows, updatePlugin, updatePluginSkill, type PluginRow } from "./state.ts";
import { syncPlugins, type PluginSyncOutcome } from "./sync.ts";

async function requirePlugin(env: Env, workspaceId: string, pluginId: string): Promise<PluginRow> {
  const row = await getPlugin(makeDb(env.DB), workspaceId, pluginId);
  if (!row) throw notFound(`Plugin '${pluginId}'`);
  return row;
}

/** Suspend discovery-to-candidate sync; linked skills stay active. */
export async function pausePlugin(env: Env, workspaceId: string, pluginId: string): Promise<{ pluginId: string; changed: boolean }> {
  const plugin = await requirePlugin(env, workspaceId, pluginId);
  if (!plugin.enabled) throw new AppError("conflict", `Plugin '${pluginId}' is not enabled`);
  if (plugin.updatesPaused) return { pluginId, changed: false };
  await updatePlugin(makeDb(env.DB), workspaceId, pluginId, { updatesPaused: true }, Date.now()).run();
  return { pluginId, changed: true };
}

/** Resume updates: reconcile and sync at once. */
export async function resumePlugin(
  env: Env,
  workspaceId: string,
  pluginId: string,
): Promise<{ pluginId: string; changed: boolean; sync: PluginSyncOutcome }> {
  const plugin = await requirePlugin(env, workspaceId, pluginId);
  if (!plugin.enabled) throw new AppError("conflict", `Plugin '${pluginId}' is not enabled; enable it instead`);
  if (plugin.updatesPaused) await updatePlugin(makeDb(env.DB), workspaceId, pluginId, { updatesPaused: false }, Date.now()).run();
  const { plugins } = await syncPlugins(env, workspaceId, pluginId);
  return { pluginId, changed: plugin.updatesPaused, sync: plugins[0]! };
}

/** Explicit destructive runtime action: pause updates and disable linked skills (versions stay). */
export async function disablePlugin(
  env: Env,
  workspaceId: string,
  pluginId: string,
  actor: string,
): Promise<{ pluginId: string; changed: boolean; disabledSkills: string[] }> {
  const db = makeDb(env.DB);
  const plugin = await requirePlugin(env, workspaceId, pluginId);
  if (!plugin.enabled) return { pluginId, changed: false, disabledSkills: [] };
  const now = Date.now();
  const statements: Statement[] = [];
  const disabled: string[] = [];
  for (const link of await listPluginSkillRows(db, workspaceId, pluginId)) {
    if (link.status === "adopted") continue;
    disabled.push(link.skillName);
    statements.push(
      updateSkill(db, workspaceId, link.skillName, { status: "disabled" }, now),
      insertAudit(db, workspaceId, link.skillName, "disable", { reason: "plugin disabled", plugin_id: pluginId }, actor, now),
      updatePluginSkill(db, workspaceId, pluginId, link.skillName, { status: "disabled" }, now),
    );
  }
  statements.push(updatePlugin(db, workspaceId, pluginId, { enabled: false, updatesPaused: true }, now));
  await runBatch(db, statements);
  return { pluginId, changed: true, disabledSkills: disabled };
}

/** Detach a skill from its plugin: it becomes `managed`, keeps its current version, gets no more updates. */
export async function adoptSkill(
  env: Env,
  workspaceId: string,
  pluginId: string,
  skillName: string,
  actor: string,
): Promise<{ pluginId: string; skill: string; sourceKind: "managed" }> {
  const db = makeDb(env.DB);
  await requirePlugin(env, workspaceId, pluginId);
  const link = (await listPluginSkillRows(db, workspaceId, pluginId)).find((l) => l.skillName === skillName);
  if (!link) throw notFound(`Skill '${skillName}' of plugin '${pluginId}'`);
  if (link.status === "adopted") return { pluginId, skill: skillName, sourceKind: "managed" };
  const skill = await getSkill(db, workspaceId, skillName);
  if (!skill) throw notFound(`Skill '${skillName}'`);
  const now = Date.now();
  const statements: Statement[] = [];
  if (link.pendingCandidateId) {
    const c = await getCandidate(db, workspaceId, link.pendingCandidateId);
    if (c && isOpen(c.status))
      statements.push(updateCandidate(db, workspaceId, c.id, { status: "superseded" }, now), supersedeDraftsOf(db, workspaceId, c.id, now));
  }
  statements.push(
    updateSkill(db, workspaceId, skillName, { sourceKind: "managed", pluginId: null }, now),
    insertAudit(db, workspaceId, skillName, "adopt", { plugin_id: pluginId }, actor, now),
    updatePluginSkill(db, workspaceId, pluginId, skillName, { status: "adopted", pendingCandidateId: null }, now),
  );
  await runBatch(db, statements);
  return { pluginId, skill: skillName, sourceKind: "managed" };
}
