/**
 * Skill mutations that run under the workspace write lock: publish a version (number allocated
 * here), roll back, disable/enable. Each commits with one D1 batch — the version row first, the
 * `current` pointer last — so a failure leaves the previous state fully visible.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import {
  getSkill,
  getVersion,
  insertAudit,
  insertVersion,
  nextVersionNo,
  updateSkill,
  upsertCurrent,
  type NewVersion,
  type SkillRow,
} from "./store.ts";
import { parseVersionLabel, versionLabel } from "../../kernel/content-tree/hashing.ts";
import type { Frontmatter } from "./frontmatter.ts";

export interface PublishSkillInput extends NewVersion {
  /** Optimistic concurrency: the version the client last saw as current. */
  ifCurrentVersion?: string;
}

export interface PublishSkillResult {
  name: string;
  version: string;
  created: boolean;
  sourceKind: string;
}

/** A check run before commit that the stored tree still exists (see WorkspaceDO's GC epoch). */
export type EnsureStored = (treeHash: string) => Promise<void>;

export async function publishSkillVersion(
  env: Env,
  workspaceId: string,
  input: PublishSkillInput,
  ensureStored: EnsureStored,
): Promise<PublishSkillResult> {
  const db = makeDb(env.DB);
  const existing = await getSkill(db, workspaceId, input.skillName);
  if (input.ifCurrentVersion !== undefined) {
    const current = existing ? versionLabel(existing.currentVersionNo) : null;
    if (current !== input.ifCurrentVersion) {
      throw new AppError("conflict", `Skill '${input.skillName}' is at ${current ?? "no version"}, not ${input.ifCurrentVersion}`, {
        details: { current_version: current },
      });
    }
  }
  if (existing) {
    const current = await getVersion(db, workspaceId, existing.name, existing.currentVersionNo);
    if (current?.treeHash === input.treeHash) {
      return { name: existing.name, version: versionLabel(existing.currentVersionNo), created: false, sourceKind: existing.sourceKind };
    }
  }
  await ensureStored(input.treeHash);
  const versionNo = await nextVersionNo(db, workspaceId, input.skillName);
  const now = Date.now();
  await db.batch([
    insertVersion(db, workspaceId, versionNo, input, now),
    upsertCurrent(db, workspaceId, input.skillName, versionNo, input.frontmatter.description, now, {
      sourceKind: "managed",
      pluginId: null,
      status: "active",
    }),
  ]);
  return { name: input.skillName, version: versionLabel(versionNo), created: true, sourceKind: existing?.sourceKind ?? "managed" };
}

async function requireSkill(env: Env, workspaceId: string, name: string): Promise<SkillRow> {
  const row = await getSkill(makeDb(env.DB), workspaceId, name);
  if (!row) throw notFound(`Skill '${name}'`);
  return row;
}

/** Point `current` at an earlier (or any existing) version; nothing is deleted. */
export async function rollbackSkill(
  env: Env,
  workspaceId: string,
  name: string,
  label: string,
  actor: string,
): Promise<{ name: string; version: string; previous: string }> {
  const db = makeDb(env.DB);
  const skill = await requireSkill(env, workspaceId, name);
  const versionNo = parseVersionLabel(label);
  const target = versionNo === null ? undefined : await getVersion(db, workspaceId, name, versionNo);
  if (!target || versionNo === null) throw notFound(`Version '${label}' of skill '${name}'`);
  const previous = versionLabel(skill.currentVersionNo);
  if (versionNo === skill.currentVersionNo) return { name, version: previous, previous };
  const now = Date.now();
  const description = (JSON.parse(target.frontmatter) as Frontmatter).description;
  await db.batch([
    insertAudit(db, workspaceId, name, "rollback", { from_version: previous, to_version: label }, actor, now),
    updateSkill(db, workspaceId, name, { currentVersionNo: versionNo, description }, now),
  ]);
  return { name, version: label, previous };
}

export async function setSkillStatus(
  env: Env,
  workspaceId: string,
  name: string,
  status: "active" | "disabled",
  actor: string,
): Promise<{ name: string; status: string; changed: boolean }> {
  const db = makeDb(env.DB);
  const skill = await requireSkill(env, workspaceId, name);
  if (skill.status === status) return { name, status, changed: false };
  const now = Date.now();
  await db.batch([
    insertAudit(db, workspaceId, name, status === "active" ? "enable" : "disable", { from: skill.status, to: status }, actor, now),
    updateSkill(db, workspaceId, name, { status }, now),
  ]);
  return { name, status, changed: true };
}
