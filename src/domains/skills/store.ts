/**
 * D1 access for skills and versions: reads for the API and resolver, and the statements the
 * locked writers put into one atomic batch (version row first, `current` pointer last).
 */
import { and, desc, eq, max } from "drizzle-orm";
import type { Db } from "../../storage/db/client.ts";
import { skills, skillVersions, skillAudit } from "../../storage/db/schema.ts";
import type { Frontmatter } from "./frontmatter.ts";
import type { SafetyReport } from "./safety.ts";

export type SkillRow = typeof skills.$inferSelect;
export type VersionRow = typeof skillVersions.$inferSelect;
export type SourceKind = "managed" | "plugin";

/** Everything a new immutable version records. */
export interface NewVersion {
  skillName: string;
  treeHash: string;
  contentHash: string;
  frontmatter: Frontmatter;
  provenance: Record<string, unknown>;
  safety: SafetyReport;
  fileCount: number;
  totalBytes: number;
  actor: string;
}

export async function getSkill(db: Db, workspaceId: string, name: string): Promise<SkillRow | undefined> {
  return db
    .select()
    .from(skills)
    .where(and(eq(skills.workspaceId, workspaceId), eq(skills.name, name)))
    .get();
}

export async function listSkillRows(db: Db, workspaceId: string): Promise<SkillRow[]> {
  return db.select().from(skills).where(eq(skills.workspaceId, workspaceId)).orderBy(skills.name).all();
}

export async function getVersion(db: Db, workspaceId: string, name: string, versionNo: number): Promise<VersionRow | undefined> {
  return db
    .select()
    .from(skillVersions)
    .where(and(eq(skillVersions.workspaceId, workspaceId), eq(skillVersions.skillName, name), eq(skillVersions.versionNo, versionNo)))
    .get();
}

export async function listVersions(db: Db, workspaceId: string, name: string): Promise<VersionRow[]> {
  return db
    .select()
    .from(skillVersions)
    .where(and(eq(skillVersions.workspaceId, workspaceId), eq(skillVersions.skillName, name)))
    .orderBy(desc(skillVersions.versionNo))
    .all();
}

/** The next version number of a skill. Only called under the workspace lock. */
export async function nextVersionNo(db: Db, workspaceId: string, name: string): Promise<number> {
  const row = await db
    .select({ n: max(skillVersions.versionNo) })
    .from(skillVersions)
    .where(and(eq(skillVersions.workspaceId, workspaceId), eq(skillVersions.skillName, name)))
    .get();
  return (row?.n ?? 0) + 1;
}

export function insertVersion(db: Db, workspaceId: string, versionNo: number, v: NewVersion, now: number) {
  return db.insert(skillVersions).values({
    workspaceId,
    skillName: v.skillName,
    versionNo,
    treeHash: v.treeHash,
    contentHash: v.contentHash,
    frontmatter: JSON.stringify(v.frontmatter),
    provenance: JSON.stringify(v.provenance),
    safety: JSON.stringify(v.safety),
    fileCount: v.fileCount,
    totalBytes: v.totalBytes,
    createdBy: v.actor,
    createdAt: now,
  });
}

/** Create the skill row or move its `current` pointer: the visibility switch, always last in a batch. */
export function upsertCurrent(
  db: Db,
  workspaceId: string,
  name: string,
  versionNo: number,
  description: string,
  now: number,
  create: { sourceKind: SourceKind; pluginId: string | null; status: "active" | "disabled" },
) {
  return db
    .insert(skills)
    .values({
      workspaceId,
      name,
      sourceKind: create.sourceKind,
      pluginId: create.pluginId,
      status: create.status,
      currentVersionNo: versionNo,
      description,
      createdAt: now,
      updatedAt: now,
    })
    .onConflictDoUpdate({ target: [skills.workspaceId, skills.name], set: { currentVersionNo: versionNo, description, updatedAt: now } });
}

export function updateSkill(
  db: Db,
  workspaceId: string,
  name: string,
  set: Partial<Pick<SkillRow, "status" | "sourceKind" | "pluginId" | "currentVersionNo" | "description">>,
  now: number,
) {
  return db
    .update(skills)
    .set({ ...set, updatedAt: now })
    .where(and(eq(skills.workspaceId, workspaceId), eq(skills.name, name)));
}

export function insertAudit(
  db: Db,
  workspaceId: string,
  skillName: string,
  action: string,
  detail: Record<string, unknown>,
  actor: string,
  now: number,
) {
  return db.insert(skillAudit).values({ workspaceId, skillName, action, detail: JSON.stringify(detail), actor, at: now });
}

export async function listAudit(db: Db, workspaceId: string, skillName: string) {
  return db
    .select()
    .from(skillAudit)
    .where(and(eq(skillAudit.workspaceId, workspaceId), eq(skillAudit.skillName, skillName)))
    .orderBy(skillAudit.id)
    .all();
}

/** Every active skill of a workspace with its current version row, in one query (the run's catalog). */
export async function listActiveCurrent(db: Db, workspaceId: string): Promise<{ skill: SkillRow; version: VersionRow }[]> {
  const rows = await db
    .select({ skill: skills, version: skillVersions })
    .from(skills)
    .innerJoin(
      skillVersions,
      and(
        eq(skillVersions.workspaceId, skills.workspaceId),
        eq(skillVersions.skillName, skills.name),
        eq(skillVersions.versionNo, skills.currentVersionNo),
      ),
    )
    .where(and(eq(skills.workspaceId, workspaceId), eq(skills.status, "active")))
    .orderBy(skills.name)
    .all();
  return rows;
}
