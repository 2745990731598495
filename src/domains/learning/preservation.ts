/**
 * The preservation report of a merge (docs/learning.md, "Preservation report"): every local learning
 * — a section heading, a rule (bullet or numbered item) or a paragraph line present in ours and not in
 * base — and whether the merged text kept it: verbatim, reworded (a line of the same kind with most of
 * its words), or lost. The same check runs for upstream additions (theirs, not base), so a merge that
 * silently drops a new upstream rule shows too. Pure.
 */
import { splitLines } from "./text-merge.ts";

export type UnitKind = "section" | "rule" | "line";
export type Kept = "verbatim" | "reworded" | "lost";

export interface LearningUnit {
  kind: UnitKind;
  text: string;
  kept: Kept;
}

export interface PreservationReport {
  local: LearningUnit[];
  upstream: LearningUnit[];
  /** Local learnings the merged text lost. */
  lost_local: number;
  lost_upstream: number;
}

interface Unit {
  kind: UnitKind;
  text: string;
  key: string;
  words: Set<string>;
}

const REWORDED_SIMILARITY = 0.6;
const MAX_UNITS = 200;

function unitsOf(text: string): Unit[] {
  const out: Unit[] = [];
  let fence = false;
  for (const raw of splitLines(text)) {
    const line = raw.trim();
    if (line.startsWith("```")) {
      fence = !fence;
      continue;
    }
    if (line === "" || line === "---") continue;
    let kind: UnitKind = "line";
    let body = line;
    const heading = /^#{1,6}\s+(.*)$/.exec(line);
    const bullet = /^(?:[-*+]|\d+[.)])\s+(.*)$/.exec(line);
    if (!fence && heading) [kind, body] = ["section", heading[1] ?? ""];
    else if (!fence && bullet) [kind, body] = ["rule", bullet[1] ?? ""];
    const key = body.replace(/\s+/g, " ").trim().toLowerCase();
    if (key === "") continue;
    out.push({ kind, text: line, key, words: new Set(key.split(/[^\p{L}\p{N}]+/u).filter((w) => w.length > 0)) });
  }
  return out;
}

function similarity(a: Set<string>, b: Set<string>): number {
  if (a.size === 0 || b.size === 0) return 0;
  let common = 0;
  for (const w of a) if (b.has(w)) common++;
  return common / Math.max(a.size, b.size);
}

function addedUnits(side: string, base: string): Unit[] {
  const baseKeys = new Set(unitsOf(base).map((u) => `${u.kind}:${u.key}`));
  const seen = new Set<string>();
  return unitsOf(side).filter((u) => {
    const k = `${u.kind}:${u.key}`;
    if (baseKeys.has(k) || seen.has(k)) return false;
    seen.add(k);
    return true;
  });
}

function check(added: readonly Unit[], merged: readonly Unit[]): LearningUnit[] {
  const keys = new Set(merged.map((u) => `${u.kind}:${u.key}`));
  return added.slice(0, MAX_UNITS).map((u) => {
    if (keys.has(`${u.kind}:${u.key}`)) return { kind: u.kind, text: u.text, kept: "verbatim" };
    const close = merged.some((m) => m.kind === u.kind && similarity(u.words, m.words) >= REWORDED_SIMILARITY);
    return { kind: u.kind, text: u.text, kept: close ? "reworded" : "lost" };
  });
}

/** Which of ours' and theirs' additions over base the merged text kept. */
export function preservationReport(base: string, ours: string, theirs: string, merged: string): PreservationReport {
  const m = unitsOf(merged);
  const local = check(addedUnits(ours, base), m);
  const upstream = check(addedUnits(theirs, base), m);
  return {
    local,
    upstream,
    lost_local: local.filter((u) => u.kept === "lost").length,
    lost_upstream: upstream.filter((u) => u.kept === "lost").length,
  };
}
