/**
 * The three-way merge of a SKILL.md (and of a supporting text file), docs/learning.md "Three-way
 * merge". Base = the upstream the local version came from, ours = the local version, theirs = the new
 * upstream. The body is merged line by line (`text-merge.ts`); the frontmatter field by field and then
 * validated with the skill frontmatter schema. Whatever overlaps goes to the `HunkResolver` in one
 * request per file; its answer is validated with zod and the request's hunk ids, retried once with
 * the reason, and otherwise the merge fails with that reason (nothing half-merged comes out).
 * `keep_local` and `take_upstream` take that side's text exactly; only `combine` uses the resolver's
 * text. Pure apart from the resolver: texts in, result out.
 */
import { parseDocument, stringify } from "yaml";
import { parseSkillMd, type Frontmatter } from "../skills/frontmatter.ts";
import { describeProblems } from "../../kernel/content-tree/problems.ts";
import { HunkAnswer, type HunkResolver, type MergeDecisionKind } from "./hunk-resolver.ts";
import { assemble, mergeLines, type ConflictHunk } from "./text-merge.ts";
import { preservationReport, type PreservationReport } from "./preservation.ts";

export interface MergeDecision {
  file: string;
  hunk: number;
  decision: MergeDecisionKind;
  reason: string;
  confidence: number;
  /** `model` when the resolver decided, `rule` when the merge did (a non-text frontmatter field). */
  by: "model" | "rule";
  base: string;
  local: string;
  upstream: string;
  merged: string;
}

export interface FileMergeResult {
  text: string;
  decisions: MergeDecision[];
  /** Non-overlapping edits the line merge settled without a model. */
  autoMerged: boolean;
  resolverCalls: number;
}

export type MergeFailure = { ok: false; reason: string; decisions: MergeDecision[]; resolverCalls: number };

export interface SkillMergeResult {
  ok: true;
  text: string;
  frontmatter: Frontmatter;
  decisions: MergeDecision[];
  preservation: PreservationReport;
  /** The lowest decision confidence; 1 when no hunk needed deciding. */
  confidence: number;
  resolverCalls: number;
}

export interface MergeTexts {
  base: string;
  ours: string;
  theirs: string;
}

/** How many times the resolver is asked per file: once, and once more after an invalid answer. */
export const RESOLVER_ATTEMPTS = 2;
/** More conflict hunks than this in one file is not a merge a model should decide: the merge fails and says so. */
export const MAX_HUNKS_PER_FILE = 100;

class MergeError extends Error {
  constructor(
    message: string,
    readonly decisions: MergeDecision[] = [],
    readonly resolverCalls = 0,
  ) {
    super(message);
  }
}

/** Merge a supporting text file (no frontmatter). */
export async function mergeTextFile(
  skill: string,
  file: string,
  texts: MergeTexts,
  resolver: HunkResolver,
  signal?: AbortSignal,
): Promise<(FileMergeResult & { ok: true }) | MergeFailure> {
  try {
    return { ok: true, ...(await mergeBody(skill, file, texts, resolver, signal)) };
  } catch (e) {
    return failure(e);
  }
}

/** Merge SKILL.md: frontmatter field by field (validated), body line by line, then the preservation report. */
export async function mergeSkillMd(
  skill: string,
  texts: MergeTexts,
  resolver: HunkResolver,
  signal?: AbortSignal,
): Promise<SkillMergeResult | MergeFailure> {
  try {
    const [b, o, t] = [splitSkillMd(texts.base), splitSkillMd(texts.ours), splitSkillMd(texts.theirs)];
    const fm = await mergeFrontmatter(skill, { base: b.frontmatter, ours: o.frontmatter, theirs: t.frontmatter }, resolver, signal);
    const body = await mergeBody(skill, "SKILL.md", { base: b.body, ours: o.body, theirs: t.body }, resolver, signal);
    const text = `---\n${fm.text}---\n${body.text}`;
    const parsed = parseSkillMd(new TextEncoder().encode(text), "SKILL.md", skill);
    const decisions = [...fm.decisions, ...body.decisions];
    const resolverCalls = fm.resolverCalls + body.resolverCalls;
    if (!parsed.ok) throw new MergeError(`the merged frontmatter is invalid: ${describeProblems(parsed.errors)}`, decisions, resolverCalls);
    return {
      ok: true,
      text,
      frontmatter: parsed.frontmatter,
      decisions,
      preservation: preservationReport(b.body, o.body, t.body, body.text),
      confidence: decisions.reduce((min, d) => Math.min(min, d.confidence), 1),
      resolverCalls,
    };
  } catch (e) {
    return failure(e);
  }
}

function failure(e: unknown): MergeFailure {
  if (e instanceof MergeError) return { ok: false, reason: e.message, decisions: e.decisions, resolverCalls: e.resolverCalls };
  throw e;
}

/** SKILL.md split into its frontmatter YAML (with a final newline) and body; no frontmatter = empty YAML. */
export function splitSkillMd(text: string): { frontmatter: string; body: string } {
  const normalized = text.replace(/\r\n?/g, "\n");
  const match = /^---\n([\s\S]*?)\n?---(?:\n|$)/.exec(normalized);
  if (!match) return { frontmatter: "", body: normalized };
  const yaml = match[1] ?? "";
  return { frontmatter: yaml === "" ? "" : `${yaml}\n`, body: normalized.slice(match[0].length) };
}

async function mergeBody(skill: string, file: string, texts: MergeTexts, resolver: HunkResolver, signal?: AbortSignal) {
  const merged = mergeLines(texts.base, texts.ours, texts.theirs);
  const autoMerged = texts.ours !== texts.base && texts.theirs !== texts.base && texts.ours !== texts.theirs;
  if (merged.conflicts.length === 0) return { text: assemble(merged.regions, new Map()), decisions: [], autoMerged, resolverCalls: 0 };
  const { decisions, calls } = await resolveHunks(skill, file, merged.conflicts, resolver, signal);
  const resolved = new Map(decisions.map((d) => [d.hunk, d.merged]));
  return { text: assemble(merged.regions, resolved), decisions, autoMerged, resolverCalls: calls };
}

/** Ask the resolver, validate, retry once with the reason; decisions in hunk order. */
async function resolveHunks(
  skill: string,
  file: string,
  hunks: readonly ConflictHunk[],
  resolver: HunkResolver,
  signal?: AbortSignal,
): Promise<{ decisions: MergeDecision[]; calls: number }> {
  if (hunks.length > MAX_HUNKS_PER_FILE)
    throw new MergeError(`${file}: ${hunks.length} conflicting hunks (more than ${MAX_HUNKS_PER_FILE}); merge this update by hand`);
  let previousError: string | undefined;
  let calls = 0;
  for (let attempt = 0; attempt < RESOLVER_ATTEMPTS; attempt++) {
    calls++;
    let raw: unknown;
    try {
      raw = await resolver.resolve({ file, skill, hunks, ...(previousError ? { previousError } : {}) }, signal);
    } catch (e) {
      if (signal?.aborted) throw e;
      previousError = `the model call failed: ${e instanceof Error ? e.message.slice(0, 300) : String(e)}`;
      continue;
    }
    const checked = checkAnswer(raw, hunks);
    if (typeof checked === "string") {
      previousError = checked;
      continue;
    }
    return {
      calls,
      decisions: hunks.map((h) => {
        const a = checked.get(h.id)!;
        const merged = a.decision === "keep_local" ? h.local : a.decision === "take_upstream" ? h.upstream : a.merged;
        return {
          file,
          hunk: h.id,
          decision: a.decision,
          reason: a.reason,
          confidence: a.confidence,
          by: "model" as const,
          base: h.base,
          local: h.local,
          upstream: h.upstream,
          merged,
        };
      }),
    };
  }
  throw new MergeError(`${file}: the merge model gave no valid answer after ${RESOLVER_ATTEMPTS} attempts (${previousError})`, [], calls);
}

/** The answer by hunk id, or why it is refused. */
function checkAnswer(raw: unknown, hunks: readonly ConflictHunk[]): Map<number, HunkAnswer["hunks"][number]> | string {
  const parsed = HunkAnswer.safeParse(raw);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    return `answer does not match the schema: ${issue ? `${issue.path.join(".") || "(root)"}: ${issue.message}` : "invalid"}`;
  }
  const byId = new Map<number, HunkAnswer["hunks"][number]>();
  for (const a of parsed.data.hunks) {
    if (!hunks.some((h) => h.id === a.id)) return `hunk id ${a.id} is not in the request`;
    if (byId.has(a.id)) return `hunk id ${a.id} is answered twice`;
    byId.set(a.id, a);
  }
  const missing = hunks.filter((h) => !byId.has(h.id)).map((h) => h.id);
  if (missing.length > 0) return `hunk ids ${missing.join(", ")} are not answered`;
  return byId;
}

// ---- frontmatter ----------------------------------------------------------------------------------

type Fields = Record<string, unknown>;

function fieldsOf(yaml: string, side: string): Fields {
  if (yaml.trim() === "") return {};
  const doc = parseDocument(yaml, { uniqueKeys: true, prettyErrors: false });
  const data: unknown = doc.errors.length > 0 ? null : doc.toJS();
  if (data === null || typeof data !== "object" || Array.isArray(data))
    throw new MergeError(`the ${side} frontmatter is not a YAML mapping`);
  return data as Fields;
}

const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);

/**
 * Field by field: a field changed on one side takes that side; changed on both to the same value, that
 * value; `metadata` (a mapping) merges key by key the same way; a string changed differently on both
 * sides is a conflict hunk for the resolver; any other value changed on both sides keeps local (a rule
 * decision, confidence 0.5, so the confidence gate sees it).
 */
async function mergeFrontmatter(
  skill: string,
  yaml: MergeTexts,
  resolver: HunkResolver,
  signal?: AbortSignal,
): Promise<{ text: string; decisions: MergeDecision[]; resolverCalls: number }> {
  if (yaml.ours === yaml.theirs || yaml.theirs === yaml.base) return { text: yaml.ours, decisions: [], resolverCalls: 0 };
  if (yaml.ours === yaml.base) return { text: yaml.theirs, decisions: [], resolverCalls: 0 };
  const [b, o, t] = [fieldsOf(yaml.base, "base"), fieldsOf(yaml.ours, "local"), fieldsOf(yaml.theirs, "upstream")];
  const decisions: MergeDecision[] = [];
  const conflicts: { path: string[]; hunk: ConflictHunk }[] = [];
  const merged = mergeFields(b, o, t, [], decisions, conflicts);
  let resolverCalls = 0;
  if (conflicts.length > 0) {
    const file = "SKILL.md#frontmatter";
    const resolved = await resolveHunks(
      skill,
      file,
      conflicts.map((c) => c.hunk),
      resolver,
      signal,
    ).catch((e: unknown) => {
      throw e instanceof MergeError ? new MergeError(e.message, decisions, e.resolverCalls) : e;
    });
    resolverCalls = resolved.calls;
    for (const d of resolved.decisions) {
      const c = conflicts.find((x) => x.hunk.id === d.hunk)!;
      setPath(merged, c.path, d.merged.replace(/\n$/, ""));
      decisions.push({ ...d, file: `SKILL.md#frontmatter.${c.path.join(".")}` });
    }
  }
  return { text: stringify(merged, { lineWidth: 0 }), decisions, resolverCalls };
}

function mergeFields(
  b: Fields,
  o: Fields,
  t: Fields,
  path: string[],
  decisions: MergeDecision[],
  conflicts: { path: string[]; hunk: ConflictHunk }[],
): Fields {
  const out: Fields = {};
  const keys = [...Object.keys(o), ...Object.keys(t).filter((k) => !(k in o)), ...Object.keys(b).filter((k) => !(k in o) && !(k in t))];
  for (const key of keys) {
    const [bv, ov, tv] = [b[key], o[key], t[key]];
    const here = [...path, key];
    let value: unknown;
    if (same(ov, tv) || same(tv, bv)) value = ov;
    else if (same(ov, bv)) value = tv;
    else if (isMapping(ov) && isMapping(tv) && (bv === undefined || isMapping(bv)))
      value = mergeFields((bv ?? {}) as Fields, ov, tv, here, decisions, conflicts);
    else if (typeof ov === "string" && typeof tv === "string") {
      const id = conflicts.length;
      conflicts.push({
        path: here,
        hunk: { id, base: typeof bv === "string" ? `${bv}\n` : "", local: `${ov}\n`, upstream: `${tv}\n`, before: "", after: "" },
      });
      value = ov;
    } else {
      value = ov;
      decisions.push({
        file: `SKILL.md#frontmatter.${here.join(".")}`,
        hunk: -1,
        decision: "keep_local",
        reason: "a non-text field changed on both sides; the local value is kept",
        confidence: 0.5,
        by: "rule",
        base: show(bv),
        local: show(ov),
        upstream: show(tv),
        merged: show(ov),
      });
    }
    if (value !== undefined) out[key] = value;
  }
  return out;
}

const isMapping = (v: unknown): v is Fields => v !== null && typeof v === "object" && !Array.isArray(v);
const show = (v: unknown) => (v === undefined ? "" : `${JSON.stringify(v)}\n`);

function setPath(obj: Fields, path: readonly string[], value: string): void {
  let cur = obj;
  for (const k of path.slice(0, -1)) cur = cur[k] as Fields;
  cur[path[path.length - 1]!] = value;
}
