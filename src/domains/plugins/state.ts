/**
 * D1 access for plugin state: plugin rows, linked-skill rows, upstream snapshots. The JSON columns
 * are parsed here so the rest of the plugin code works with typed values.
 */
import { and, eq } from "drizzle-orm";
import type { Db } from "../../storage/db/client.ts";
import { plugins, pluginSkills, upstreamSnapshots } from "../../storage/db/schema.ts";
import type { PackageSkillRecord } from "./ingest.ts";
import type { Problem } from "../../kernel/content-tree/problems.ts";

export type PluginRow = typeof plugins.$inferSelect;
export type PluginSkillRow = typeof pluginSkills.$inferSelect;

export async function getPlugin(db: Db, workspaceId: string, id: string): Promise<PluginRow | undefined> {
  return db
    .select()
    .from(plugins)
    .where(and(eq(plugins.workspaceId, workspaceId), eq(plugins.id, id)))
    .get();
}

export async function listPluginRows(db: Db, workspaceId: string): Promise<PluginRow[]> {
  return db.select().from(plugins).where(eq(plugins.workspaceId, workspaceId)).orderBy(plugins.id).all();
}

export async function listPluginSkillRows(db: Db, workspaceId: string, pluginId?: string): Promise<PluginSkillRow[]> {
  const where =
    pluginId === undefined
      ? eq(pluginSkills.workspaceId, workspaceId)
      : and(eq(pluginSkills.workspaceId, workspaceId), eq(pluginSkills.pluginId, pluginId));
  return db.select().from(pluginSkills).where(where).orderBy(pluginSkills.skillName).all();
}

export function discoveredSkillsOf(row: PluginRow): PackageSkillRecord[] {
  return JSON.parse(row.discoveredSkills) as PackageSkillRecord[];
}

export function packageErrorsOf(row: PluginRow): Problem[] {
  return JSON.parse(row.packageErrors) as Problem[];
}

export function packageWarningsOf(row: PluginRow): Problem[] {
  return JSON.parse(row.packageWarnings) as Problem[];
}

export async function snapshotExists(db: Db, workspaceId: string, pluginId: string, skillName: string, treeHash: string): Promise<boolean> {
  const row = await db
    .select({ t: upstreamSnapshots.treeHash })
    .from(upstreamSnapshots)
    .where(
      and(
        eq(upstreamSnapshots.workspaceId, workspaceId),
        eq(upstreamSnapshots.pluginId, pluginId),
        eq(upstreamSnapshots.skillName, skillName),
        eq(upstreamSnapshots.treeHash, treeHash),
      ),
    )
    .get();
  return row !== undefined;
}

export function updatePluginSkill(
  db: Db,
  workspaceId: string,
  pluginId: string,
  skillName: string,
  set: Partial<Omit<PluginSkillRow, "workspaceId" | "pluginId" | "skillName">>,
  now: number,
) {
  return db
    .update(pluginSkills)
    .set({ ...set, updatedAt: now })
    .where(and(eq(pluginSkills.workspaceId, workspaceId), eq(pluginSkills.pluginId, pluginId), eq(pluginSkills.skillName, skillName)));
}

export function updatePlugin(db: Db, workspaceId: string, id: string, set: Partial<Omit<PluginRow, "workspaceId" | "id">>, now: number) {
  return db
    .update(plugins)
    .set({ ...set, updatedAt: now })
    .where(and(eq(plugins.workspaceId, workspaceId), eq(plugins.id, id)));
}
