/**
 * D1 tables of the skills area: the skill store's metadata (content lives in R2, content-addressed),
 * plugin packages and their state, upstream snapshots, learning candidates and drafts.
 * Rows are written only under the workspace write lock (`WorkspaceDO`), except the blob/tree
 * indexes, which are content-addressed and idempotent.
 */
import { sqliteTable, text, integer, real, primaryKey, index } from "drizzle-orm/sqlite-core";
import { workspaces } from "./core.ts";

const ws = () =>
  text("workspace_id")
    .notNull()
    .references(() => workspaces.id);

/** One row per skill name; `current_version` is the runtime visibility switch. */
export const skills = sqliteTable(
  "skills",
  {
    workspaceId: ws(),
    name: text("name").notNull(),
    /** managed | plugin */
    sourceKind: text("source_kind").notNull(),
    /** Owning plugin while `source_kind = 'plugin'`. */
    pluginId: text("plugin_id"),
    /** active | disabled */
    status: text("status").notNull(),
    currentVersionNo: integer("current_version_no").notNull(),
    description: text("description").notNull(),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.name] })],
);

/** Immutable published versions; a version is a pointer to a tree (R2 manifest by tree hash). */
export const skillVersions = sqliteTable(
  "skill_versions",
  {
    workspaceId: ws(),
    skillName: text("skill_name").notNull(),
    versionNo: integer("version_no").notNull(),
    treeHash: text("tree_hash").notNull(),
    contentHash: text("content_hash").notNull(),
    /** JSON of the parsed SKILL.md frontmatter. */
    frontmatter: text("frontmatter").notNull(),
    /** JSON provenance: how this version came to be (manual, plugin_mirror, plugin_skill_update…). */
    provenance: text("provenance").notNull(),
    /** JSON safety report. */
    safety: text("safety").notNull(),
    fileCount: integer("file_count").notNull(),
    totalBytes: integer("total_bytes").notNull(),
    createdBy: text("created_by").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [
    primaryKey({ columns: [t.workspaceId, t.skillName, t.versionNo] }),
    index("skill_versions_tree_idx").on(t.workspaceId, t.treeHash),
  ],
);

/** Pointer moves and status changes (rollback, disable, enable, adopt): the audit trail beside versions. */
export const skillAudit = sqliteTable(
  "skill_audit",
  {
    id: integer("id").primaryKey({ autoIncrement: true }),
    workspaceId: ws(),
    skillName: text("skill_name").notNull(),
    action: text("action").notNull(),
    /** JSON details (from/to version, reason). */
    detail: text("detail").notNull(),
    actor: text("actor").notNull(),
    at: integer("at").notNull(),
  },
  (t) => [index("skill_audit_skill_idx").on(t.workspaceId, t.skillName)],
);

/** Index of blobs present in R2 (`last_seen_at` protects them from the orphan collector's grace window). */
export const skillBlobs = sqliteTable(
  "skill_blobs",
  {
    workspaceId: ws(),
    sha256: text("sha256").notNull(),
    size: integer("size").notNull(),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.sha256] })],
);

/** Index of tree manifests present in R2. */
export const skillTrees = sqliteTable(
  "skill_trees",
  {
    workspaceId: ws(),
    treeHash: text("tree_hash").notNull(),
    fileCount: integer("file_count").notNull(),
    totalBytes: integer("total_bytes").notNull(),
    createdAt: integer("created_at").notNull(),
    lastSeenAt: integer("last_seen_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.treeHash] })],
);

/** Plugins discovered from packages (upload or Gitea source), and their operational state. */
export const plugins = sqliteTable(
  "plugins",
  {
    workspaceId: ws(),
    id: text("id").notNull(),
    name: text("name").notNull(),
    description: text("description").notNull(),
    /** upload | gitea */
    origin: text("origin").notNull(),
    sourceId: text("source_id"),
    /** beaver | claude_plugin | claude_marketplace */
    manifestKind: text("manifest_kind").notNull(),
    /** Display path of the manifest, workspace-relative (`plugins/<id>/beaver.plugin.json`). */
    manifestPath: text("manifest_path").notNull(),
    /** present | missing | invalid */
    packageStatus: text("package_status").notNull(),
    /** JSON array of `{ path, message }` when invalid. */
    packageErrors: text("package_errors").notNull(),
    /** JSON array of manifest warnings (e.g. Claude Code components Beaver ignores); skill warnings live in `discovered_skills`. */
    packageWarnings: text("package_warnings").notNull().default("[]"),
    discoveredVersion: text("discovered_version"),
    /** JSON array of discovered skills: name, path, tree/content hashes, safety. */
    discoveredSkills: text("discovered_skills").notNull(),
    /** Hash over the discovered skills' names and tree hashes: a changed package changes it. */
    packageDigest: text("package_digest").notNull(),
    /** The package digest the last completed sync saw (cron syncs when they differ). */
    syncedDigest: text("synced_digest"),
    discoveredAt: integer("discovered_at").notNull(),
    enabled: integer("enabled", { mode: "boolean" }).notNull(),
    updatesPaused: integer("updates_paused", { mode: "boolean" }).notNull(),
    installedVersion: text("installed_version"),
    enabledAt: integer("enabled_at"),
    lastSyncAt: integer("last_sync_at"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/** Plugin state per linked skill: accepted and observed upstream, accepted version (docs/skills-and-plugins.md). */
export const pluginSkills = sqliteTable(
  "plugin_skills",
  {
    workspaceId: ws(),
    pluginId: text("plugin_id").notNull(),
    skillName: text("skill_name").notNull(),
    /** synced | update_pending | removed_upstream | disabled | adopted */
    status: text("status").notNull(),
    acceptedUpstreamTreeHash: text("accepted_upstream_tree_hash").notNull(),
    observedUpstreamTreeHash: text("observed_upstream_tree_hash").notNull(),
    acceptedBeaverVersionNo: integer("accepted_beaver_version_no").notNull(),
    pendingCandidateId: text("pending_candidate_id"),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.pluginId, t.skillName] })],
);

/** Immutable raw upstream skill snapshots, one per observed tree. */
export const upstreamSnapshots = sqliteTable(
  "upstream_snapshots",
  {
    workspaceId: ws(),
    pluginId: text("plugin_id").notNull(),
    skillName: text("skill_name").notNull(),
    treeHash: text("tree_hash").notNull(),
    contentHash: text("content_hash").notNull(),
    pluginVersion: text("plugin_version"),
    sourcePath: text("source_path").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.pluginId, t.skillName, t.treeHash] })],
);

/** Learning candidates (this area records `plugin_skill_update`; synthesis is the learning pipeline's). */
export const learningCandidates = sqliteTable(
  "learning_candidates",
  {
    workspaceId: ws(),
    id: text("id").notNull(),
    kind: text("kind").notNull(),
    skillName: text("skill_name").notNull(),
    pluginId: text("plugin_id"),
    /** pending | pending_synthesis | drafted | synthesis_failed | superseded | published | rejected */
    status: text("status").notNull(),
    mergeMode: text("merge_mode"),
    /** JSON evidence: references only (hashes, versions), never raw content. */
    evidence: text("evidence").notNull(),
    /** JSON supporting-file merge plan (three_way) or null. */
    mergePlan: text("merge_plan"),
    draftId: text("draft_id"),
    supersededBy: text("superseded_by"),
    blockedByDraftId: text("blocked_by_draft_id"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), index("learning_candidates_skill_idx").on(t.workspaceId, t.skillName)],
);

/** Drafts: proposed trees for a skill, not runtime-visible until published as a version. */
export const skillDrafts = sqliteTable(
  "skill_drafts",
  {
    workspaceId: ws(),
    id: text("id").notNull(),
    skillName: text("skill_name").notNull(),
    candidateId: text("candidate_id"),
    proposalKind: text("proposal_kind").notNull(),
    treeHash: text("tree_hash").notNull(),
    contentHash: text("content_hash").notNull(),
    frontmatter: text("frontmatter").notNull(),
    provenance: text("provenance").notNull(),
    safety: text("safety").notNull(),
    /** pending_review | superseded | published | rejected | merge_failed (a three-way merge that could not finish; `failure` says why) */
    status: text("status").notNull(),
    publishedVersionNo: integer("published_version_no"),
    /** JSON merge report of a three-way draft: resolver, decisions, preservation report, files merged (docs/learning.md). */
    mergeReport: text("merge_report"),
    /** The merge's confidence (lowest decision confidence; 1 without decisions); null for drafts no merge made. */
    confidence: real("confidence"),
    /** Why a merge failed (status merge_failed). */
    failure: text("failure"),
    /** Who rejected or approved the draft, and the reason given. */
    reviewedBy: text("reviewed_by"),
    reviewReason: text("review_reason"),
    /** The draft that replaced this one (regenerate). */
    supersededBy: text("superseded_by"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] }), index("skill_drafts_skill_idx").on(t.workspaceId, t.skillName)],
);

/** Gitea repositories configured as plugin sources. */
export const pluginSources = sqliteTable(
  "plugin_sources",
  {
    workspaceId: ws(),
    id: text("id").notNull(),
    owner: text("owner").notNull(),
    repo: text("repo").notNull(),
    ref: text("ref").notNull(),
    lastFetchedAt: integer("last_fetched_at"),
    lastCommit: text("last_commit"),
    /** ok | error | deferred (the workspace was busy: the cron fetches `last_commit` again) */
    lastStatus: text("last_status"),
    lastError: text("last_error"),
    createdAt: integer("created_at").notNull(),
    updatedAt: integer("updated_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.id] })],
);

/**
 * Cached embedding vectors of skills for run-time selection (docs/skills-and-plugins.md, "Skills in a
 * run"): one per workspace, embedding model and SKILL.md content hash, so a version is embedded once.
 */
export const skillEmbeddings = sqliteTable(
  "skill_embeddings",
  {
    workspaceId: ws(),
    /** `<provider>:<model id>` of the workspace's `embedding_model`. */
    model: text("model").notNull(),
    contentHash: text("content_hash").notNull(),
    /** JSON array of numbers. */
    vector: text("vector").notNull(),
    createdAt: integer("created_at").notNull(),
  },
  (t) => [primaryKey({ columns: [t.workspaceId, t.model, t.contentHash] })],
);
