/**
 * What the review API shows of drafts (docs/learning.md, "Review API"): a newest-first page of drafts
 * (filtered by skill and status) and one draft in full — its diffs against the skill's current
 * version and against the plugin's new upstream (when there is one), the merge decisions, the
 * preservation report, the safety report, the supporting-file plan and the latest evaluation.
 */
import { and, desc, eq, lt, or, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { skillDrafts } from "../../storage/db/schema.ts";
import { versionLabel } from "../../kernel/content-tree/hashing.ts";
import { getSkill, getVersion } from "../skills/store.ts";
import { getCandidate, type DraftRow } from "../skills/candidate-store.ts";
import type { MergePlan } from "../plugins/merge-plan.ts";
import { treeDiff, type FileSnapshot, type TreeDiff } from "./diffs.ts";
import { loadTree, textOf } from "./tree-files.ts";
import { draftSensitiveItems } from "./draft-sensitive.ts";
import { latestEvaluationView } from "./evaluation/client.ts";

export const DRAFT_STATUSES = ["pending_review", "merge_failed", "superseded", "published", "rejected"] as const;

export interface DraftPageQuery {
  skill?: string | undefined;
  status?: string | undefined;
  before?: number | undefined;
  beforeId?: string | undefined;
  limit: number;
}

export async function listDraftPage(env: Env, workspaceId: string, q: DraftPageQuery): Promise<DraftRow[]> {
  const conds: (SQL | undefined)[] = [eq(skillDrafts.workspaceId, workspaceId)];
  if (q.skill !== undefined) conds.push(eq(skillDrafts.skillName, q.skill));
  if (q.status !== undefined) conds.push(eq(skillDrafts.status, q.status));
  if (q.before !== undefined)
    conds.push(
      q.beforeId === undefined
        ? lt(skillDrafts.createdAt, q.before)
        : or(lt(skillDrafts.createdAt, q.before), and(eq(skillDrafts.createdAt, q.before), lt(skillDrafts.id, q.beforeId))),
    );
  return makeDb(env.DB)
    .select()
    .from(skillDrafts)
    .where(and(...conds))
    .orderBy(desc(skillDrafts.createdAt), desc(skillDrafts.id))
    .limit(q.limit)
    .all();
}

const parse = (s: string | null): unknown => (s === null ? null : JSON.parse(s));

/** The list entry of a draft. */
export function draftSummary(d: DraftRow) {
  const prov = parse(d.provenance) as Record<string, unknown>;
  return {
    id: d.id,
    skill: d.skillName,
    status: d.status,
    proposal_kind: d.proposalKind,
    candidate_id: d.candidateId,
    merge_mode: typeof prov.merge_mode === "string" ? prov.merge_mode : null,
    plugin_id: typeof prov.plugin_id === "string" ? prov.plugin_id : null,
    local_version: typeof prov.local_version === "string" ? prov.local_version : null,
    confidence: d.confidence,
    safety_level: (parse(d.safety) as { level: string }).level,
    failure: d.failure,
    published_version: d.publishedVersionNo === null ? null : versionLabel(d.publishedVersionNo),
    superseded_by: d.supersededBy,
    reviewed_by: d.reviewedBy,
    review_reason: d.reviewReason,
    created_at: d.createdAt,
    updated_at: d.updatedAt,
  };
}

/** Files bigger than this are diffed as binary (path and change only). */
const MAX_DIFF_FILE_BYTES = 256 * 1024;

async function snapshots(env: Env, workspaceId: string, treeHash: string): Promise<FileSnapshot[]> {
  return (await loadTree(env, workspaceId, treeHash)).map((f) => ({
    path: f.path,
    sha256: f.sha256,
    text: f.bytes.byteLength > MAX_DIFF_FILE_BYTES ? null : textOf(f.bytes),
  }));
}

/** A draft in full, for review. */
export async function draftDetail(env: Env, workspaceId: string, d: DraftRow) {
  const db = makeDb(env.DB);
  const prov = parse(d.provenance) as Record<string, unknown>;
  const skill = await getSkill(db, workspaceId, d.skillName);
  const current = skill ? await getVersion(db, workspaceId, d.skillName, skill.currentVersionNo) : undefined;
  const upstreamHash = typeof prov.new_upstream_tree_hash === "string" ? prov.new_upstream_tree_hash : null;
  const [draftFiles, currentFiles, upstreamFiles] = await Promise.all([
    snapshots(env, workspaceId, d.treeHash),
    current ? snapshots(env, workspaceId, current.treeHash) : Promise.resolve([]),
    upstreamHash ? snapshots(env, workspaceId, upstreamHash) : Promise.resolve(null),
  ]);
  const vsCurrent: TreeDiff & { version: string | null } = {
    version: current ? versionLabel(current.versionNo) : null,
    ...treeDiff(currentFiles, draftFiles),
  };
  const vsUpstream = upstreamFiles ? { tree_hash: upstreamHash, ...treeDiff(upstreamFiles, draftFiles) } : null;
  const candidate = d.candidateId ? await getCandidate(db, workspaceId, d.candidateId) : undefined;
  const report = parse(d.mergeReport) as Record<string, unknown> | null;
  return {
    ...draftSummary(d),
    tree_hash: d.treeHash,
    content_hash: d.contentHash,
    frontmatter: parse(d.frontmatter),
    provenance: prov,
    safety: parse(d.safety),
    merge: report
      ? {
          resolver: report.resolver ?? null,
          skill_md: report.skill_md ?? null,
          confidence: report.confidence ?? null,
          resolver_calls: report.resolver_calls ?? 0,
          decisions: report.decisions ?? [],
          record: report.record ?? [],
          local_evidence: report.local_evidence ?? [],
          merged_files: report.merged_files ?? [],
          unresolved_files: report.unresolved_files ?? [],
          failure: report.failure ?? null,
        }
      : null,
    preservation: report?.preservation ?? null,
    /** Changes the approval must acknowledge one by one (docs/learning.md, "Gates"). */
    acknowledgements_required: await draftSensitiveItems(env, workspaceId, d),
    supporting_files: candidate?.mergePlan ? (JSON.parse(candidate.mergePlan) as MergePlan) : null,
    diffs: { current: vsCurrent, upstream: vsUpstream },
    /** The latest replay evaluation (docs/evaluation.md): progress, per-case results and the report; null if never evaluated. */
    evaluation: await latestEvaluationView(env, workspaceId, d.id),
  };
}
