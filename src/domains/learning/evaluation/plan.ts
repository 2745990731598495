/**
 * Planning an evaluation of a draft (docs/evaluation.md, "Cases"): what is compared (the skill's
 * current version as baseline, the draft's tree as candidate, offered to the run as a skill override)
 * and on which cases — `evals/cases.jsonl` of the draft (else of the current version) and the user
 * turns of recorded sessions in which the skill was activated, newest first, capped.
 */
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { readBlob, requireManifest } from "../../../storage/blob/store.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { versionLabel } from "../../../kernel/content-tree/hashing.ts";
import type { SkillOverride } from "../../../runtime/index.ts";
import { getDraft, type DraftRow } from "../../skills/candidate-store.ts";
import { getSkill, getVersion } from "../../skills/store.ts";
import { allowedToolsOf } from "../../skills/frontmatter.ts";
import { CASES_PATH, MAX_CASES, MAX_CASES_FILE_BYTES, combineCases, parseCasesJsonl, type EvalCase } from "./cases.ts";
import { loadEvidenceRuns } from "../improvement/evidence.ts";

/** Drafts in these states can be evaluated (a decided draft has nothing left to gate). */
export const EVALUABLE_DRAFT_STATUSES: readonly string[] = ["pending_review"];
/** Recorded activations looked at per evaluation (each run gives at most one case). */
const RECORDED_SCAN_ROWS = 200;

export interface EvaluationPlan {
  workspaceId: string;
  draftId: string;
  skillName: string;
  /** `v0003`, or null when the skill has no published version (the baseline runs without it). */
  baselineVersion: string | null;
  candidate: SkillOverride;
  cases: EvalCase[];
  concurrency: number;
  maxSteps: number;
}

export async function loadDraft(env: Env, workspaceId: string, draftId: string): Promise<DraftRow> {
  const draft = await getDraft(makeDb(env.DB), workspaceId, draftId);
  if (!draft) throw notFound(`Draft '${draftId}'`);
  return draft;
}

/** One file of a stored tree as text, or null when the tree has no such file. */
async function treeFileText(env: Env, workspaceId: string, treeHash: string, path: string): Promise<string | null> {
  const entry = (await requireManifest(env, workspaceId, treeHash)).files.find((f) => f.path === path);
  if (!entry) return null;
  if (entry.size > MAX_CASES_FILE_BYTES)
    throw new AppError("validation_failed", `${path} is ${entry.size} bytes; the limit is ${MAX_CASES_FILE_BYTES}`, {
      details: { path, limit_bytes: MAX_CASES_FILE_BYTES },
    });
  const obj = await readBlob(env, workspaceId, entry.sha256);
  return obj ? await obj.text() : null;
}

export async function planEvaluation(
  env: Env,
  workspaceId: string,
  draft: DraftRow,
  options: { concurrency: number; maxSteps: number; maxRecorded: number },
): Promise<EvaluationPlan> {
  if (!EVALUABLE_DRAFT_STATUSES.includes(draft.status))
    throw new AppError("conflict", `Draft '${draft.id}' is ${draft.status}; only a draft under review can be evaluated`);
  const db = makeDb(env.DB);
  const skill = await getSkill(db, workspaceId, draft.skillName);
  const current = skill ? await getVersion(db, workspaceId, draft.skillName, skill.currentVersionNo) : undefined;
  const fileText =
    (await treeFileText(env, workspaceId, draft.treeHash, CASES_PATH)) ??
    (current ? await treeFileText(env, workspaceId, current.treeHash, CASES_PATH) : null);
  const fromFile = fileText === null ? [] : parseCasesJsonl(fileText);
  const evidence = evidenceRunsOf(draft);
  // A draft made from run evidence replays those runs' inputs (docs/learning.md, "From candidate to draft").
  const recorded = evidence
    ? await evidenceCases(env, workspaceId, evidence)
    : options.maxRecorded > 0
      ? await recordedCases(env, workspaceId, draft.skillName, options.maxRecorded)
      : [];
  const frontmatter = JSON.parse(draft.frontmatter) as Record<string, unknown>;
  const allowed = allowedToolsOf(frontmatter);
  return {
    workspaceId,
    draftId: draft.id,
    skillName: draft.skillName,
    baselineVersion: current ? versionLabel(current.versionNo) : null,
    candidate: {
      name: draft.skillName,
      version: `draft:${draft.id}`,
      tree_hash: draft.treeHash,
      content_hash: draft.contentHash,
      description: typeof frontmatter.description === "string" ? frontmatter.description : (skill?.description ?? ""),
      ...(allowed.length > 0 ? { allowed_tools: allowed } : {}),
    },
    cases: combineCases(fromFile, recorded),
    concurrency: options.concurrency,
    maxSteps: options.maxSteps,
  };
}

/** The evidence runs a draft was made from (improvement and new-skill drafts), or null. */
function evidenceRunsOf(draft: DraftRow): string[] | null {
  if (draft.proposalKind !== "skill_improvement" && draft.proposalKind !== "new_skill") return null;
  const runs = (JSON.parse(draft.provenance) as { evidence_runs?: { run_id?: unknown }[] }).evidence_runs ?? [];
  return runs.map((r) => r.run_id).filter((r): r is string => typeof r === "string");
}

/** The first user message of each evidence run, in the evidence's order: the cases of its draft. */
async function evidenceCases(env: Env, workspaceId: string, runIds: readonly string[]): Promise<EvalCase[]> {
  const runs = await loadEvidenceRuns(makeDb(env.DB), workspaceId, runIds, MAX_CASES);
  return runs.flatMap((r) =>
    r.prompt === null
      ? []
      : [{ source: "recorded_session" as const, prompt: r.prompt, origin: { session_id: r.session_id, run_id: r.run_id } }],
  );
}

interface ActivationRow {
  session_id: string;
  run_id: string;
  activation: string;
  message: string;
}

/**
 * User turns of runs that activated `skillName`, newest first: the replicated `skill_activation_snapshotted`
 * event names the activated skills; the run's user message is the prompt replayed. Isolated sessions
 * (evaluation runs themselves) are never replicated, so they never become cases.
 */
export async function recordedCases(env: Env, workspaceId: string, skillName: string, max: number): Promise<EvalCase[]> {
  const { results } = await env.DB.prepare(
    `SELECT a.session_id, a.run_id, a.payload AS activation, m.payload AS message
       FROM session_events a
       JOIN session_events m ON m.session_id = a.session_id AND m.run_id = a.run_id AND m.type = 'message'
      WHERE a.workspace_id = ? AND a.type = 'skill_activation_snapshotted' AND a.payload LIKE ?
      ORDER BY a.ts DESC, m.seq ASC
      LIMIT ?`,
  )
    .bind(workspaceId, `%${JSON.stringify(skillName).slice(1, -1)}%`, RECORDED_SCAN_ROWS)
    .all<ActivationRow>();
  const out: EvalCase[] = [];
  const seenRuns = new Set<string>();
  for (const row of results) {
    if (out.length >= max) break;
    if (seenRuns.has(row.run_id)) continue;
    const activation = JSON.parse(row.activation) as { skills?: { name?: unknown }[] };
    if (!activation.skills?.some((s) => s.name === skillName)) continue;
    const message = (JSON.parse(row.message) as { message?: { role?: unknown; content?: unknown } }).message;
    if (message?.role !== "user" || typeof message.content !== "string") continue;
    seenRuns.add(row.run_id);
    out.push({ source: "recorded_session", prompt: message.content, origin: { session_id: row.session_id, run_id: row.run_id } });
  }
  return out;
}
