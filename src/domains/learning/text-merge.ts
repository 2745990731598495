/**
 * The deterministic half of the three-way merge (docs/learning.md, "Three-way merge"): a line-level
 * diff3 of base (the upstream the local version came from), ours (the local version) and theirs (the
 * new upstream) with `node-diff3`. Edits that do not overlap settle here; overlapping ones come back
 * as conflict hunks for the hunk resolver. Pure: texts in, regions out.
 */
import { diff3Merge } from "node-diff3";

/** An overlapping edit: what base, ours and theirs have in the same place, with a little context. */
export interface ConflictHunk {
  id: number;
  base: string;
  local: string;
  upstream: string;
  /** Up to `CONTEXT_LINES` merged lines before and after, to help whoever resolves it. */
  before: string;
  after: string;
}

export type Region = { kind: "ok"; lines: string[] } | { kind: "conflict"; hunk: ConflictHunk };

export interface LineMerge {
  regions: Region[];
  conflicts: ConflictHunk[];
}

const CONTEXT_LINES = 3;

/** Lines without terminators; a trailing newline does not make an empty last line. */
export function splitLines(text: string): string[] {
  if (text === "") return [];
  const lines = text.split("\n");
  if (lines[lines.length - 1] === "") lines.pop();
  return lines;
}

export function joinLines(lines: readonly string[]): string {
  return lines.length === 0 ? "" : `${lines.join("\n")}\n`;
}

/** diff3 of three texts; `firstId` numbers the conflict hunks (several merges can share one request). */
export function mergeLines(base: string, ours: string, theirs: string, firstId = 0): LineMerge {
  if (ours === theirs || theirs === base) return { regions: [{ kind: "ok", lines: splitLines(ours) }], conflicts: [] };
  if (ours === base) return { regions: [{ kind: "ok", lines: splitLines(theirs) }], conflicts: [] };
  const raw = diff3Merge(splitLines(ours), splitLines(base), splitLines(theirs), { excludeFalseConflicts: true }) as Diff3Region[];
  const regions: Region[] = [];
  const conflicts: ConflictHunk[] = [];
  raw.forEach((r, i) => {
    if ("ok" in r) {
      regions.push({ kind: "ok", lines: r.ok });
      return;
    }
    const prev = raw[i - 1];
    const next = raw[i + 1];
    const hunk: ConflictHunk = {
      id: firstId + conflicts.length,
      base: joinLines(r.conflict.o),
      local: joinLines(r.conflict.a),
      upstream: joinLines(r.conflict.b),
      before: prev && "ok" in prev ? joinLines(prev.ok.slice(-CONTEXT_LINES)) : "",
      after: next && "ok" in next ? joinLines(next.ok.slice(0, CONTEXT_LINES)) : "",
    };
    conflicts.push(hunk);
    regions.push({ kind: "conflict", hunk });
  });
  return { regions, conflicts };
}

/** The merged text once every conflict hunk has a text (`resolved` by hunk id). */
export function assemble(regions: readonly Region[], resolved: ReadonlyMap<number, string>): string {
  const lines: string[] = [];
  for (const r of regions) {
    if (r.kind === "ok") lines.push(...r.lines);
    else {
      const text = resolved.get(r.hunk.id);
      if (text === undefined) throw new Error(`hunk ${r.hunk.id} has no resolution`);
      lines.push(...splitLines(text.endsWith("\n") || text === "" ? text : `${text}\n`));
    }
  }
  return joinLines(lines);
}

/** node-diff3's result shape (its bundled types say `any`). */
type Diff3Region = { ok: string[] } | { conflict: { a: string[]; o: string[]; b: string[] } };
