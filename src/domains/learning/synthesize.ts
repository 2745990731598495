/**
 * Synthesis of a `three_way` plugin-update candidate into a merged draft, outside the workspace lock
 * (it reads trees, may ask a model and stores the merged tree). B (accepted upstream), L (the local
 * version the candidate was planned against) and U (the new upstream) are read from the store by the
 * hashes in the candidate's evidence. SKILL.md is merged three-way; supporting files follow the
 * candidate's merge plan, and its both-modified text files are merged three-way as well. The result
 * is what `recordMergeDraft` writes under the lock: a `pending_review` draft with its merge report,
 * or a `merge_failed` draft that says why (nothing is published here, ever).
 */
import type { Env } from "../../storage/env.ts";
import { contentHashOf, type TreeFile } from "../../kernel/content-tree/hashing.ts";
import { describeProblems } from "../../kernel/content-tree/problems.ts";
import { storeTree } from "../../storage/blob/store.ts";
import { AppError } from "../../kernel/errors.ts";
import { prepareSkill } from "../skills/prepare.ts";
import { checkSkillSafety, type SafetyReport } from "../skills/safety.ts";
import { parseSkillMd, type Frontmatter } from "../skills/frontmatter.ts";
import type { CandidateRow } from "../skills/candidate-store.ts";
import type { PluginUpdateEvidence, PluginUpdateProvenance } from "../skills/candidates.ts";
import type { FileConflict, MergePlan } from "../plugins/merge-plan.ts";
import { mergeSkillMd, mergeTextFile, type MergeDecision } from "./skill-merge.ts";
import type { HunkResolver } from "./hunk-resolver.ts";
import { preservationReport, type PreservationReport } from "./preservation.ts";
import { localVersionEvidence, withLocalEvidence, type LocalEvidence } from "./local-evidence.ts";
import { mergeRecord, type MergeChange } from "./merge-record.ts";
import { loadTree, textOf, type LoadedFile } from "./tree-files.ts";

export interface MergeReport {
  mode: "three_way";
  resolver: string | null;
  skill_md: MergePlan["skill_md"];
  decisions: MergeDecision[];
  preservation: PreservationReport | null;
  /** Per change between local and upstream: preserved, adopted or dropped, and why (merge-record.ts). */
  record: MergeChange[];
  /** The local version's runs where its learned lines mattered, given to the merge model with SKILL.md's conflicts. */
  local_evidence: LocalEvidence["runs"];
  confidence: number | null;
  resolver_calls: number;
  /** Supporting text files changed on both sides that the line merge (and resolver) merged. */
  merged_files: string[];
  /** Supporting-file conflicts left (binary, delete-versus-edit, different additions): they block publication. */
  unresolved_files: FileConflict[];
  failure: string | null;
}

export interface MergedDraft {
  candidateId: string;
  /** The candidate status synthesis started from, checked again under the lock. */
  expectedStatus: string;
  evidence: PluginUpdateEvidence;
  skillName: string;
  status: "pending_review" | "merge_failed";
  treeHash: string;
  contentHash: string;
  frontmatter: Frontmatter;
  safety: SafetyReport;
  provenance: Omit<PluginUpdateProvenance, "draft_id"> & { merge: { resolver: string | null; confidence: number | null } };
  report: MergeReport;
  /** The plan with the text conflicts the merge resolved taken out. */
  plan: MergePlan;
}

const utf8 = (s: string) => new TextEncoder().encode(s);

/** Each text of a stored decision is kept up to this many characters (the draft row stays bounded). */
export const MAX_DECISION_TEXT = 16 * 1024;
const clipText = (t: string) =>
  t.length > MAX_DECISION_TEXT ? `${t.slice(0, MAX_DECISION_TEXT)}\n[…cut at ${MAX_DECISION_TEXT} characters]\n` : t;
const clip = (d: MergeDecision): MergeDecision => ({
  ...d,
  base: clipText(d.base),
  local: clipText(d.local),
  upstream: clipText(d.upstream),
  merged: clipText(d.merged),
});

export async function synthesizeCandidate(
  env: Env,
  workspaceId: string,
  candidate: CandidateRow,
  resolver: HunkResolver,
  signal?: AbortSignal,
): Promise<MergedDraft> {
  if (candidate.mergeMode !== "three_way" || !candidate.mergePlan)
    throw new AppError("conflict", `Candidate '${candidate.id}' is not a three-way plugin update`);
  const evidence = JSON.parse(candidate.evidence) as PluginUpdateEvidence;
  const plan = JSON.parse(candidate.mergePlan) as MergePlan;
  const name = candidate.skillName;
  const [B, L, U] = await Promise.all([
    loadTree(env, workspaceId, evidence.base_upstream_tree_hash),
    loadTree(env, workspaceId, evidence.local_tree_hash),
    loadTree(env, workspaceId, evidence.new_upstream_tree_hash),
  ]);
  const at = (files: LoadedFile[], path: string) => files.find((f) => f.path === path);
  const report: MergeReport = {
    mode: "three_way",
    resolver: null,
    skill_md: plan.skill_md,
    decisions: [],
    preservation: null,
    record: [],
    local_evidence: [],
    confidence: null,
    resolver_calls: 0,
    merged_files: [],
    unresolved_files: [],
    failure: null,
  };
  const provenance = (confidence: number | null): MergedDraft["provenance"] => ({
    kind: "plugin_skill_update",
    ...evidence,
    candidate_id: candidate.id,
    merge: { resolver: report.resolver, confidence },
  });
  const failed = async (reason: string): Promise<MergedDraft> => {
    const skillMd = at(L, "SKILL.md")!;
    const parsed = parseSkillMd(skillMd.bytes, "SKILL.md", name);
    return {
      candidateId: candidate.id,
      expectedStatus: candidate.status,
      evidence,
      skillName: name,
      status: "merge_failed",
      treeHash: evidence.local_tree_hash,
      contentHash: await contentHashOf(skillMd.bytes),
      frontmatter: parsed.ok ? parsed.frontmatter : { name, description: "" },
      safety: checkSkillSafety(L),
      provenance: provenance(null),
      report: { ...report, failure: reason },
      plan,
    };
  };

  // SKILL.md
  const md = { base: at(B, "SKILL.md"), ours: at(L, "SKILL.md"), theirs: at(U, "SKILL.md") };
  let skillMdBytes: Uint8Array;
  if (plan.skill_md === "needs_synthesis") {
    const texts = {
      base: md.base ? textOf(md.base.bytes) : "",
      ours: md.ours ? textOf(md.ours.bytes) : null,
      theirs: md.theirs ? textOf(md.theirs.bytes) : null,
    };
    if (texts.base === null || texts.ours === null || texts.theirs === null) return failed("SKILL.md is not UTF-8 text on every side");
    report.resolver = resolver.label;
    // The local version's evidence goes with SKILL.md's conflicts so learned rules survive upstream rewrites.
    const learned = preservationReport(texts.base, texts.ours, texts.theirs, texts.ours).local.map((u) => u.text);
    const local = await localVersionEvidence(env, workspaceId, name, evidence.local_version, learned);
    report.local_evidence = local ? local.runs : [];
    const merged = await mergeSkillMd(
      name,
      { base: texts.base, ours: texts.ours, theirs: texts.theirs },
      withLocalEvidence(resolver, local),
      signal,
    );
    report.resolver_calls += merged.resolverCalls;
    report.decisions.push(...merged.decisions.map(clip));
    if (!merged.ok) return failed(merged.reason);
    report.preservation = merged.preservation;
    report.record = mergeRecord(merged.preservation, report.decisions);
    report.confidence = merged.confidence;
    skillMdBytes = utf8(merged.text);
  } else {
    const side = plan.skill_md === "take_upstream" ? md.theirs : md.ours;
    if (!side) return failed("SKILL.md is missing");
    skillMdBytes = side.bytes;
  }

  // Supporting files: the plan's resolutions, then both-modified text files merged line by line.
  const bySha = new Map<string, Uint8Array>();
  for (const f of [...L, ...U]) bySha.set(f.sha256, f.bytes);
  const files: TreeFile[] = [{ path: "SKILL.md", bytes: skillMdBytes, executable: at(L, "SKILL.md")?.executable ?? false }];
  for (const p of plan.files) {
    if (!p.result) continue;
    const bytes = bySha.get(p.result.sha256);
    if (!bytes) return failed(`${p.path}: its planned content is missing from the store`);
    files.push({ path: p.path, bytes, executable: p.result.executable });
  }
  const unresolved: FileConflict[] = [];
  for (const c of plan.conflicts) {
    const [b, o, t] = [at(B, c.path), at(L, c.path), at(U, c.path)];
    const texts =
      c.kind === "both_modified" && b && o && t && o.executable === t.executable
        ? [textOf(b.bytes), textOf(o.bytes), textOf(t.bytes)]
        : null;
    if (!texts || texts.some((x) => x === null)) {
      unresolved.push(c);
      continue;
    }
    report.resolver = resolver.label;
    const merged = await mergeTextFile(name, c.path, { base: texts[0]!, ours: texts[1]!, theirs: texts[2]! }, resolver, signal);
    report.resolver_calls += merged.resolverCalls;
    report.decisions.push(...merged.decisions.map(clip));
    if (!merged.ok) return failed(merged.reason);
    report.merged_files.push(c.path);
    files.push({ path: c.path, bytes: utf8(merged.text), executable: o!.executable });
  }
  report.unresolved_files = unresolved;
  const confidence = report.decisions.reduce((min, d) => Math.min(min, d.confidence), 1);
  report.confidence = confidence;

  const prepared = await prepareSkill(name, files);
  if (!prepared.ok) return failed(`the merged skill is invalid: ${describeProblems(prepared.problems)}`);
  const stored = await storeTree(env, workspaceId, prepared.skill.files);
  return {
    candidateId: candidate.id,
    expectedStatus: candidate.status,
    evidence,
    skillName: name,
    status: "pending_review",
    treeHash: stored.treeHash,
    contentHash: prepared.skill.contentHash,
    frontmatter: prepared.skill.frontmatter,
    safety: prepared.skill.safety,
    provenance: provenance(confidence),
    report,
    plan: { ...plan, conflicts: unresolved, blocked: unresolved.length > 0 },
  };
}
