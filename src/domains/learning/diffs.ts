/**
 * Diffs of a draft against another tree (the current version, the upstream): which paths were added,
 * removed or changed, and a unified diff (3 lines of context) per changed text file. The line diff is
 * node-diff3's `diffIndices` (the library the merge already uses), formatted here, so no second diff
 * library is needed. Pure: file texts in, diff out.
 */
import { diffIndices } from "node-diff3";
import { splitLines } from "./text-merge.ts";

export interface FileSnapshot {
  path: string;
  sha256: string;
  /** The text, or null for a binary file (or one too large to diff). */
  text: string | null;
}

export interface FileDiff {
  path: string;
  change: "added" | "removed" | "modified";
  /** Unified diff of a text file; null for binary files. */
  unified: string | null;
}

export interface TreeDiff {
  files: FileDiff[];
  /** Diff text was cut here (`MAX_DIFF_CHARS`). */
  truncated: boolean;
}

const CONTEXT = 3;
export const MAX_DIFF_CHARS = 256 * 1024;

/** The unified diff of two texts (`@@ -a,b +c,d @@` hunks), or "" when they are equal. */
export function unifiedDiff(from: string, to: string, path: string): string {
  const a = splitLines(from);
  const b = splitLines(to);
  const changes = (diffIndices(a, b) as { buffer1: [number, number]; buffer2: [number, number] }[]).map((c) => ({
    aStart: c.buffer1[0],
    aLen: c.buffer1[1],
    bStart: c.buffer2[0],
    bLen: c.buffer2[1],
  }));
  if (changes.length === 0) return "";
  const out = [`--- a/${path}`, `+++ b/${path}`];
  let i = 0;
  while (i < changes.length) {
    // Group changes whose context windows touch into one hunk.
    let j = i;
    while (j + 1 < changes.length && changes[j + 1]!.aStart - (changes[j]!.aStart + changes[j]!.aLen) <= CONTEXT * 2) j++;
    const first = changes[i]!;
    const last = changes[j]!;
    const aFrom = Math.max(0, first.aStart - CONTEXT);
    const aTo = Math.min(a.length, last.aStart + last.aLen + CONTEXT);
    const bFrom = first.bStart - (first.aStart - aFrom);
    const bTo = Math.min(b.length, last.bStart + last.bLen + (aTo - (last.aStart + last.aLen)));
    const lines: string[] = [];
    let ai = aFrom;
    for (let k = i; k <= j; k++) {
      const c = changes[k]!;
      for (; ai < c.aStart; ai++) lines.push(` ${a[ai]}`);
      for (let x = 0; x < c.aLen; x++) lines.push(`-${a[c.aStart + x]}`);
      for (let x = 0; x < c.bLen; x++) lines.push(`+${b[c.bStart + x]}`);
      ai = c.aStart + c.aLen;
    }
    for (; ai < aTo; ai++) lines.push(` ${a[ai]}`);
    out.push(`@@ -${aFrom + 1},${aTo - aFrom} +${bFrom + 1},${bTo - bFrom} @@`, ...lines);
    i = j + 1;
  }
  return `${out.join("\n")}\n`;
}

/** What changed from `from` to `to`, path by path (sorted), unified diffs for text files. */
export function treeDiff(from: readonly FileSnapshot[], to: readonly FileSnapshot[]): TreeDiff {
  const A = new Map(from.map((f) => [f.path, f]));
  const B = new Map(to.map((f) => [f.path, f]));
  const paths = [...new Set([...A.keys(), ...B.keys()])].sort();
  const files: FileDiff[] = [];
  let budget = MAX_DIFF_CHARS;
  let truncated = false;
  for (const path of paths) {
    const a = A.get(path);
    const b = B.get(path);
    if (a && b && a.sha256 === b.sha256) continue;
    const change = !a ? "added" : !b ? "removed" : "modified";
    const fromText = a ? a.text : "";
    const toText = b ? b.text : "";
    let unified = fromText === null || toText === null ? null : unifiedDiff(fromText, toText, path);
    if (unified !== null && unified.length > budget) {
      unified = `${unified.slice(0, Math.max(0, budget))}\n[…diff truncated]\n`;
      truncated = true;
    }
    budget = Math.max(0, budget - (unified?.length ?? 0));
    files.push({ path, change, unified });
  }
  return { files, truncated };
}
