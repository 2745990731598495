/**
 * From an evidence candidate to a draft, outside the workspace lock (docs/learning.md, "From candidate
 * to draft"): the evidence runs' bounded transcripts go to the auxiliary model (author.ts), whose
 * SKILL.md is validated and safety-checked like an upload and stored as a tree. An invalid answer is
 * asked for once more with the reason; a second failure is the draft's `failure`. Nothing is recorded
 * or published here: `recordEvidenceDraft` writes the result under the lock.
 */
import type { Env } from "../../../storage/env.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { storeTree } from "../../../storage/blob/store.ts";
import { versionLabel, type TreeFile } from "../../../kernel/content-tree/hashing.ts";
import { describeProblems } from "../../../kernel/content-tree/problems.ts";
import { AppError } from "../../../kernel/errors.ts";
import type { CandidateRow } from "../../skills/candidate-store.ts";
import { getSkill, getVersion, listSkillRows } from "../../skills/store.ts";
import { prepareSkill, type PreparedSkill } from "../../skills/prepare.ts";
import { blocksPublication, type SafetyReport } from "../../skills/safety.ts";
import { SKILL_NAME_RE, type Frontmatter } from "../../skills/frontmatter.ts";
import { loadTree, textOf } from "../tree-files.ts";
import { AuthorAnswer, type AuthorRequest, type SkillAuthor } from "./author.ts";
import { loadEvidenceRuns } from "./evidence.ts";
import { describeEvidence } from "./transcripts.ts";

/** Attempts per synthesis: the first answer and one retry with the reason. */
export const AUTHOR_ATTEMPTS = 2;

export type EvidenceKind = "skill_improvement" | "new_skill";

/** What `recordEvidenceDraft` writes under the lock. */
export interface EvidenceDraft {
  candidateId: string;
  kind: EvidenceKind;
  skillName: string;
  /** The current version's tree the draft was made against; null for a new skill. */
  localTreeHash: string | null;
  status: "pending_review" | "failed";
  failure: string | null;
  treeHash: string | null;
  contentHash: string | null;
  frontmatter: Frontmatter | null;
  safety: SafetyReport | null;
  provenance: Record<string, unknown>;
}

interface EvidenceRef {
  runs: string[];
  version?: string;
  skill?: string;
}

export async function synthesizeEvidenceDraft(
  env: Env,
  workspaceId: string,
  candidate: CandidateRow,
  author: SkillAuthor,
  signal?: AbortSignal,
): Promise<EvidenceDraft> {
  const kind = candidate.kind as EvidenceKind;
  if (kind !== "skill_improvement" && kind !== "new_skill")
    throw new AppError("conflict", `Candidate '${candidate.id}' is a ${candidate.kind}, not an evidence candidate`);
  const db = makeDb(env.DB);
  const evidence = JSON.parse(candidate.evidence) as EvidenceRef;
  const runs = await loadEvidenceRuns(db, workspaceId, evidence.runs);
  const evidenceText = describeEvidence(runs);
  const skill = kind === "skill_improvement" ? await getSkill(db, workspaceId, candidate.skillName) : undefined;
  const current = skill ? await getVersion(db, workspaceId, skill.name, skill.currentVersionNo) : undefined;
  const base = {
    candidateId: candidate.id,
    kind,
    skillName: candidate.skillName,
    localTreeHash: current?.treeHash ?? null,
  };
  const provenance = (extra: Record<string, unknown>) => ({
    kind,
    candidate_id: candidate.id,
    evidence_runs: runs.map((r) => ({ run_id: r.run_id, session_id: r.session_id })),
    local_version: current ? versionLabel(current.versionNo) : null,
    local_tree_hash: current?.treeHash ?? null,
    author: author.label,
    ...extra,
  });
  const failed = (failure: string): EvidenceDraft => ({
    ...base,
    status: "failed",
    failure,
    treeHash: current?.treeHash ?? null,
    contentHash: null,
    frontmatter: null,
    safety: null,
    provenance: provenance({ failure }),
  });

  let request: AuthorRequest;
  let existing: string[] = [];
  let currentFiles: TreeFile[] = [];
  let currentSkillMd = "";
  if (kind === "skill_improvement") {
    if (!current) return failed(`skill '${candidate.skillName}' has no current version`);
    if (evidence.version && versionLabel(current.versionNo) !== evidence.version)
      return failed(
        `skill '${candidate.skillName}' moved from ${evidence.version} to ${versionLabel(current.versionNo)} since the candidate`,
      );
    currentFiles = await loadTree(env, workspaceId, current.treeHash);
    const md = currentFiles.find((f) => f.path === "SKILL.md");
    currentSkillMd = (md && textOf(md.bytes)) ?? "";
    request = { kind: "improve", skill: candidate.skillName, skillMd: currentSkillMd, evidence: evidenceText };
  } else {
    existing = (await listSkillRows(db, workspaceId)).map((s) => s.name).sort();
    request = { kind: "new_skill", evidence: evidenceText, existing };
  }

  let lastError = "";
  for (let attempt = 1; attempt <= AUTHOR_ATTEMPTS; attempt++) {
    let raw: unknown;
    try {
      raw = await author.write(lastError ? { ...request, previousError: lastError } : request, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      lastError = `the author model failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500);
      continue;
    }
    const checked = await checkAnswer(
      raw,
      kind === "skill_improvement" ? candidate.skillName : null,
      existing,
      currentFiles,
      currentSkillMd,
    );
    if (!checked.ok) {
      lastError = checked.error;
      continue;
    }
    const stored = await storeTree(env, workspaceId, checked.skill.files);
    return {
      ...base,
      skillName: checked.skill.name,
      status: "pending_review",
      failure: null,
      treeHash: stored.treeHash,
      contentHash: checked.skill.contentHash,
      frontmatter: checked.skill.frontmatter,
      safety: checked.skill.safety,
      provenance: provenance({ rationale: checked.rationale, attempts: attempt }),
    };
  }
  return failed(`${lastError} (after ${AUTHOR_ATTEMPTS} attempts)`);
}

type Checked = { ok: true; skill: PreparedSkill; rationale: string } | { ok: false; error: string };

/**
 * The answer as a skill: the schema, the name (the improved skill's, or a new one no skill has), the
 * skill's validation, a real change, and no blocking safety finding.
 */
async function checkAnswer(
  raw: unknown,
  expectedName: string | null,
  existing: readonly string[],
  currentFiles: readonly TreeFile[],
  currentSkillMd: string,
): Promise<Checked> {
  const parsed = AuthorAnswer.safeParse(raw);
  if (!parsed.success)
    return { ok: false, error: `invalid answer: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}` };
  const a = parsed.data;
  if (!a.found) return { ok: false, error: "the answer found nothing to write" };
  if (expectedName !== null && a.name !== expectedName)
    return { ok: false, error: `the skill's name must be '${expectedName}', not '${a.name}'` };
  if (expectedName === null && (!SKILL_NAME_RE.test(a.name) || existing.includes(a.name)))
    return { ok: false, error: `the new skill's name '${a.name}' must be lowercase words joined by hyphens and not an existing skill's` };
  if (expectedName !== null && a.skill_md.trim() === currentSkillMd.trim()) return { ok: false, error: "the SKILL.md is unchanged" };
  const files: TreeFile[] = [
    { path: "SKILL.md", bytes: new TextEncoder().encode(a.skill_md), executable: false },
    ...currentFiles.filter((f) => f.path !== "SKILL.md").map((f) => ({ path: f.path, bytes: f.bytes, executable: f.executable })),
  ];
  const prepared = await prepareSkill(a.name, files);
  if (!prepared.ok) return { ok: false, error: `the skill is invalid: ${describeProblems(prepared.problems)}` };
  if (blocksPublication(prepared.skill.safety.level)) {
    const first = prepared.skill.safety.findings.find((f) => f.level === "fail" || f.level === "critical");
    return { ok: false, error: `the safety check failed: ${first?.path}: ${first?.message}` };
  }
  return { ok: true, skill: prepared.skill, rationale: a.rationale };
}
