/**
 * What the skills routes do, without HTTP: build a file tree from JSON or an archive, prepare and
 * store it outside the lock, publish it under the lock; read skills, versions and files for the API.
 * Responses name files by path and content by hash; R2 keys never leave this layer.
 */
import type { Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { AppError, notFound } from "../http/errors.ts";
import { readArchive } from "../archive/index.ts";
import { readBlob, requireManifest, storeTree } from "../blob/store.ts";
import { runLocked, storeEpoch } from "../workspace/client.ts";
import { builtinSkills } from "./builtin.ts";
import { parseVersionLabel, versionLabel, type ManifestEntry, type TreeFile } from "./hashing.ts";
import { prepareSkill, skillRootOf } from "./prepare.ts";
import { describeProblems, type Problem } from "./problems.ts";
import { blocksPublication, type SafetyReport } from "./safety.ts";
import { getSkill, getVersion, listSkillRows, listVersions, type SkillRow, type VersionRow } from "./store.ts";

export interface JsonFile {
  path: string;
  content: string;
  encoding: "utf8" | "base64";
  executable: boolean;
}

export function filesFromJson(files: readonly JsonFile[]): TreeFile[] {
  return files.map((f, i) => {
    if (f.encoding === "utf8") return { path: f.path, bytes: new TextEncoder().encode(f.content), executable: f.executable };
    try {
      const bin = atob(f.content);
      return { path: f.path, bytes: Uint8Array.from(bin, (ch) => ch.charCodeAt(0)), executable: f.executable };
    } catch {
      throw new AppError("validation_failed", `Invalid body: files.${i}.content: not valid base64`, [{ path: `files.${i}.content`, message: "not valid base64" }]);
    }
  });
}

export async function filesFromArchive(bytes: Uint8Array): Promise<TreeFile[]> {
  const { files } = await readArchive(bytes);
  const rooted = skillRootOf(files);
  if (!rooted) throw new AppError("unprocessable", "Archive holds no skill: SKILL.md must be at its root or in its single top-level folder", { problems: [{ path: "SKILL.md", message: "not found" }] });
  return rooted.files;
}

export interface PublishResponse {
  name: string;
  version: string;
  created: boolean;
  source_kind: string;
  tree_hash: string;
  content_hash: string;
  safety: SafetyReport;
  warnings: Problem[];
  ignored: string[];
  r2_writes: number;
}

export async function publishSkillFiles(
  env: Env,
  workspaceId: string,
  name: string,
  files: readonly TreeFile[],
  opts: { actor: string; source: "json" | "archive"; ifCurrentVersion?: string },
): Promise<PublishResponse> {
  const prepared = await prepareSkill(name, files);
  if (!prepared.ok) throw new AppError("unprocessable", `Skill rejected: ${describeProblems(prepared.problems)}`, { problems: prepared.problems });
  const skill = prepared.skill;
  if (blocksPublication(skill.safety.level)) {
    const blocking = skill.safety.findings.filter((f) => f.level === "fail" || f.level === "critical");
    throw new AppError("unprocessable", `Safety check failed: ${blocking[0]?.path}${blocking[0]?.line ? `:${blocking[0].line}` : ""}: ${blocking[0]?.message} (${skill.safety.level})`, { safety: skill.safety });
  }
  const epoch = await storeEpoch(env, workspaceId);
  const stored = await storeTree(env, workspaceId, skill.files);
  const result = await runLocked(env, workspaceId, {
    kind: "publish_skill",
    epoch,
    input: {
      skillName: name,
      treeHash: stored.treeHash,
      contentHash: skill.contentHash,
      frontmatter: skill.frontmatter,
      provenance: { kind: "manual", source: opts.source },
      safety: skill.safety,
      fileCount: skill.files.length,
      totalBytes: skill.totalBytes,
      actor: opts.actor,
      ...(opts.ifCurrentVersion !== undefined ? { ifCurrentVersion: opts.ifCurrentVersion } : {}),
    },
  });
  return {
    name,
    version: result.version,
    created: result.created,
    source_kind: result.sourceKind,
    tree_hash: stored.treeHash,
    content_hash: skill.contentHash,
    safety: skill.safety,
    warnings: skill.warnings,
    ignored: skill.ignored,
    r2_writes: stored.r2Writes,
  };
}

const fileView = (e: ManifestEntry) => ({ path: e.path, size: e.size, executable: e.executable, sha256: e.sha256 });

export function versionSummary(v: VersionRow) {
  return {
    version: versionLabel(v.versionNo),
    tree_hash: v.treeHash,
    content_hash: v.contentHash,
    provenance: JSON.parse(v.provenance) as Record<string, unknown>,
    safety_level: (JSON.parse(v.safety) as SafetyReport).level,
    file_count: v.fileCount,
    total_bytes: v.totalBytes,
    created_by: v.createdBy,
    created_at: v.createdAt,
  };
}

function skillSummary(r: SkillRow) {
  return { name: r.name, source_kind: r.sourceKind, status: r.status, current_version: versionLabel(r.currentVersionNo), description: r.description, plugin_id: r.pluginId };
}

export async function listSkillsView(env: Env, workspaceId: string) {
  const rows = await listSkillRows(makeDb(env.DB), workspaceId);
  const out = rows.map(skillSummary) as { name: string; source_kind: string; status: string; current_version: string | null; description: string; plugin_id: string | null }[];
  for (const [name, b] of await builtinSkills()) {
    if (!rows.some((r) => r.name === name && r.status === "active")) {
      out.push({ name, source_kind: "builtin", status: "active", current_version: null, description: b.skill.frontmatter.description, plugin_id: null });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.source_kind.localeCompare(b.source_kind));
}

async function versionView(env: Env, workspaceId: string, v: VersionRow) {
  const manifest = await requireManifest(env, workspaceId, v.treeHash);
  return { ...versionSummary(v), frontmatter: JSON.parse(v.frontmatter) as Record<string, unknown>, safety: JSON.parse(v.safety) as SafetyReport, files: manifest.files.map(fileView) };
}

export async function skillDetailView(env: Env, workspaceId: string, name: string) {
  const db = makeDb(env.DB);
  const row = await getSkill(db, workspaceId, name);
  if (row) {
    const v = await getVersion(db, workspaceId, name, row.currentVersionNo);
    if (!v) throw new AppError("internal", `Skill '${name}' points at a missing version`);
    return { ...skillSummary(row), created_at: row.createdAt, updated_at: row.updatedAt, current: await versionView(env, workspaceId, v) };
  }
  const b = (await builtinSkills()).get(name);
  if (!b) throw notFound(`Skill '${name}'`);
  return {
    name,
    source_kind: "builtin",
    status: "active",
    current_version: null,
    description: b.skill.frontmatter.description,
    plugin_id: null,
    created_at: null,
    updated_at: null,
    current: {
      version: null,
      tree_hash: b.treeHash,
      content_hash: b.skill.contentHash,
      provenance: { kind: "builtin" },
      safety_level: b.skill.safety.level,
      file_count: b.entries.length,
      total_bytes: b.skill.totalBytes,
      created_by: "builtin",
      created_at: null,
      frontmatter: b.skill.frontmatter,
      safety: b.skill.safety,
      files: b.entries.map(fileView),
    },
  };
}

async function requireVersion(env: Env, workspaceId: string, name: string, label: string): Promise<VersionRow> {
  const db = makeDb(env.DB);
  if (!(await getSkill(db, workspaceId, name))) throw notFound(`Skill '${name}'`);
  const n = parseVersionLabel(label);
  const v = n === null ? undefined : await getVersion(db, workspaceId, name, n);
  if (!v) throw notFound(`Version '${label}' of skill '${name}'`);
  return v;
}

export async function listVersionsView(env: Env, workspaceId: string, name: string) {
  const db = makeDb(env.DB);
  const row = await getSkill(db, workspaceId, name);
  if (!row) throw notFound(`Skill '${name}'`);
  const versions = await listVersions(db, workspaceId, name);
  return { name, current_version: versionLabel(row.currentVersionNo), versions: versions.map(versionSummary) };
}

export async function versionDetailView(env: Env, workspaceId: string, name: string, label: string) {
  return versionView(env, workspaceId, await requireVersion(env, workspaceId, name, label));
}

/** The bytes of one file of a version. */
export async function readVersionFile(env: Env, workspaceId: string, name: string, label: string, path: string): Promise<{ bytes: ArrayBuffer; entry: ManifestEntry }> {
  const v = await requireVersion(env, workspaceId, name, label);
  const entry = (await requireManifest(env, workspaceId, v.treeHash)).files.find((f) => f.path === path);
  if (!entry) throw notFound(`File '${path}' in ${label} of skill '${name}'`);
  const obj = await readBlob(env, workspaceId, entry.sha256);
  if (!obj) throw new AppError("internal", `Stored file '${path}' is missing`);
  return { bytes: await obj.arrayBuffer(), entry };
}
