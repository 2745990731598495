/**
 * Which skills an agent of a workspace sees: every active workspace skill at its current version
 * (plugin-origin included, same priority), then builtin skills whose names no active workspace
 * skill uses. This is the read interface for the agent loop.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { readBlob, requireManifest } from "../../storage/blob/store.ts";
import { builtinSkills } from "./builtin.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import { getSkill, getVersion, listSkillRows } from "./store.ts";

export interface ResolvedSkill {
  name: string;
  description: string;
  sourceKind: "managed" | "plugin" | "builtin";
  version: string | null;
  pluginId: string | null;
}

export async function resolveSkills(env: Env, workspaceId: string): Promise<ResolvedSkill[]> {
  const rows = (await listSkillRows(makeDb(env.DB), workspaceId)).filter((r) => r.status === "active");
  const out: ResolvedSkill[] = rows.map((r) => ({
    name: r.name,
    description: r.description,
    sourceKind: r.sourceKind as "managed" | "plugin",
    version: versionLabel(r.currentVersionNo),
    pluginId: r.pluginId,
  }));
  const taken = new Set(out.map((s) => s.name));
  for (const [name, b] of await builtinSkills()) {
    if (!taken.has(name))
      out.push({ name, description: b.skill.frontmatter.description, sourceKind: "builtin", version: null, pluginId: null });
  }
  return out.sort((a, b) => a.name.localeCompare(b.name));
}

/** One file of the resolved skill `name` (current version, or the builtin), or null. */
export async function readResolvedSkillFile(env: Env, workspaceId: string, name: string, path: string): Promise<Uint8Array | null> {
  const db = makeDb(env.DB);
  const row = await getSkill(db, workspaceId, name);
  if (row && row.status === "active") {
    const version = await getVersion(db, workspaceId, name, row.currentVersionNo);
    if (!version) return null;
    const entry = (await requireManifest(env, workspaceId, version.treeHash)).files.find((f) => f.path === path);
    const obj = entry ? await readBlob(env, workspaceId, entry.sha256) : null;
    return obj ? new Uint8Array(await obj.arrayBuffer()) : null;
  }
  const builtin = (await builtinSkills()).get(name);
  return builtin?.skill.files.find((f) => f.path === path)?.bytes ?? null;
}
