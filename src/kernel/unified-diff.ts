/**
 * The unified diff of two texts (`@@ -a,b +c,d @@` hunks, 3 lines of context), as `diff -u` and
 * `git diff` print it. The line diff is node-diff3's `diffIndices` (the library skill merges already
 * use), formatted here, so no second diff library is needed. Used by draft diffs (domains/learning)
 * and `git diff` (domains/git). Pure: texts in, diff out.
 */
import { diffIndices } from "node-diff3";

const CONTEXT = 3;

function lines(text: string): string[] {
  if (text === "") return [];
  const out = text.split("\n");
  if (out[out.length - 1] === "") out.pop();
  return out;
}

/** The unified diff of two texts, or "" when they are equal; `labels` name the two sides (default a/ and b/ + path). */
export function unifiedDiff(from: string, to: string, path: string, labels?: { from: string; to: string }): string {
  const a = lines(from);
  const b = lines(to);
  const changes = (diffIndices(a, b) as { buffer1: [number, number]; buffer2: [number, number] }[]).map((c) => ({
    aStart: c.buffer1[0],
    aLen: c.buffer1[1],
    bStart: c.buffer2[0],
    bLen: c.buffer2[1],
  }));
  if (changes.length === 0) return "";
  const out = [`--- ${labels?.from ?? `a/${path}`}`, `+++ ${labels?.to ?? `b/${path}`}`];
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
    const hunk: string[] = [];
    let ai = aFrom;
    for (let k = i; k <= j; k++) {
      const c = changes[k]!;
      for (; ai < c.aStart; ai++) hunk.push(` ${a[ai]}`);
      for (let x = 0; x < c.aLen; x++) hunk.push(`-${a[c.aStart + x]}`);
      for (let x = 0; x < c.bLen; x++) hunk.push(`+${b[c.bStart + x]}`);
      ai = c.aStart + c.aLen;
    }
    for (; ai < aTo; ai++) hunk.push(` ${a[ai]}`);
    // An empty side starts at line 0, as diff -u and git print it.
    const at = (from: number, len: number) => `${len === 0 ? from : from + 1},${len}`;
    out.push(`@@ -${at(aFrom, aTo - aFrom)} +${at(bFrom, bTo - bFrom)} @@`, ...hunk);
    i = j + 1;
  }
  return `${out.join("\n")}\n`;
}
