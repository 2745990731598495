/**
 * Skills, versions, files and candidates as the API shows them (snake_case): workspace skills
 * first, builtin skills they do not shadow after. Files are named by path and content by hash;
 * R2 keys never leave the store.
 */
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { readBlob, requireManifest } from "../../storage/blob/store.ts";
import { listCandidates, listDrafts } from "./candidate-store.ts";
import { builtinSkills } from "./builtin.ts";
import { parseVersionLabel, versionLabel, type ManifestEntry } from "../../kernel/content-tree/hashing.ts";
import type { SafetyReport } from "./safety.ts";
import { getSkill, getVersion, listAudit, listSkillRows, listVersions, type SkillRow, type VersionRow } from "./store.ts";

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
  return {
    name: r.name,
    source_kind: r.sourceKind,
    status: r.status,
    current_version: versionLabel(r.currentVersionNo),
    description: r.description,
    plugin_id: r.pluginId,
  };
}

export async function listSkillsView(env: Env, workspaceId: string) {
  const rows = await listSkillRows(makeDb(env.DB), workspaceId);
  const out = rows.map(skillSummary) as {
    name: string;
    source_kind: string;
    status: string;
    current_version: string | null;
    description: string;
    plugin_id: string | null;
  }[];
  for (const [name, b] of await builtinSkills()) {
    if (!rows.some((r) => r.name === name && r.status === "active")) {
      out.push({
        name,
        source_kind: "builtin",
        status: "active",
        current_version: null,
        description: b.skill.frontmatter.description,
        plugin_id: null,
      });
    }
  }
  return out.sort((a, b) => a.name.localeCompare(b.name) || a.source_kind.localeCompare(b.source_kind));
}

async function versionView(env: Env, workspaceId: string, v: VersionRow) {
  const manifest = await requireManifest(env, workspaceId, v.treeHash);
  return {
    ...versionSummary(v),
    frontmatter: JSON.parse(v.frontmatter) as Record<string, unknown>,
    safety: JSON.parse(v.safety) as SafetyReport,
    files: manifest.files.map(fileView),
  };
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
  const [versions, audit] = await Promise.all([listVersions(db, workspaceId, name), listAudit(db, workspaceId, name)]);
  return {
    name,
    current_version: versionLabel(row.currentVersionNo),
    versions: versions.map(versionSummary),
    // Pointer moves and status changes (rollback, disable, enable, adopt): versions record how content came to be, this records how it was used.
    audit: audit.map((a) => ({ action: a.action, detail: JSON.parse(a.detail) as Record<string, unknown>, actor: a.actor, at: a.at })),
  };
}

export async function versionDetailView(env: Env, workspaceId: string, name: string, label: string) {
  return versionView(env, workspaceId, await requireVersion(env, workspaceId, name, label));
}

/** The bytes of one file of a version. */
/** The version label that names a builtin skill's bundled files (`GET /api/skills/:name/versions/builtin/file`). */
export const BUILTIN_LABEL = "builtin";

export async function readVersionFile(
  env: Env,
  workspaceId: string,
  name: string,
  label: string,
  path: string,
): Promise<{ bytes: ArrayBuffer; entry: ManifestEntry }> {
  // A builtin skill has no stored versions: its files are read from the bundle under the label `builtin`
  // (the console opens them like any other skill's), unless a workspace skill of that name shadows it.
  if (label === BUILTIN_LABEL && !(await getSkill(makeDb(env.DB), workspaceId, name))) {
    const builtin = (await builtinSkills()).get(name);
    const file = builtin?.skill.files.find((f) => f.path === path);
    const entry = builtin?.entries.find((e) => e.path === path);
    if (!file || !entry) throw notFound(`File '${path}' of builtin skill '${name}'`);
    return { bytes: file.bytes.slice().buffer, entry };
  }
  const v = await requireVersion(env, workspaceId, name, label);
  const entry = (await requireManifest(env, workspaceId, v.treeHash)).files.find((f) => f.path === path);
  if (!entry) throw notFound(`File '${path}' in ${label} of skill '${name}'`);
  const obj = await readBlob(env, workspaceId, entry.sha256);
  if (!obj) throw new AppError("internal", `Stored file '${path}' is missing`);
  return { bytes: await obj.arrayBuffer(), entry };
}

/** Learning candidates and drafts of a skill (a workspace or builtin skill; anything else is 404). */
export async function candidatesView(env: Env, workspaceId: string, name: string) {
  const db = makeDb(env.DB);
  if (!(await getSkill(db, workspaceId, name)) && !(await builtinSkills()).has(name)) throw notFound(`Skill '${name}'`);
  const [candidates, drafts] = await Promise.all([listCandidates(db, workspaceId, name), listDrafts(db, workspaceId, name)]);
  return {
    name,
    candidates: candidates.map((x) => ({
      id: x.id,
      kind: x.kind,
      status: x.status,
      merge_mode: x.mergeMode,
      plugin_id: x.pluginId,
      evidence: JSON.parse(x.evidence) as unknown,
      merge_plan: x.mergePlan ? (JSON.parse(x.mergePlan) as unknown) : null,
      draft_id: x.draftId,
      superseded_by: x.supersededBy,
      blocked_by_draft_id: x.blockedByDraftId,
      created_at: x.createdAt,
      updated_at: x.updatedAt,
    })),
    drafts: drafts.map((d) => ({
      id: d.id,
      candidate_id: d.candidateId,
      proposal_kind: d.proposalKind,
      status: d.status,
      tree_hash: d.treeHash,
      content_hash: d.contentHash,
      provenance: JSON.parse(d.provenance) as unknown,
      safety_level: (JSON.parse(d.safety) as SafetyReport).level,
      published_version: d.publishedVersionNo === null ? null : versionLabel(d.publishedVersionNo),
      created_at: d.createdAt,
    })),
  };
}
