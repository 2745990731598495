/**
 * Diffs of a draft against another tree (the current version, the upstream): which paths were added,
 * removed or changed, and a unified diff (3 lines of context, kernel/unified-diff.ts) per changed text
 * file. Pure: file texts in, diff out.
 */
import { unifiedDiff } from "../../kernel/unified-diff.ts";

export { unifiedDiff };

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

export const MAX_DIFF_CHARS = 256 * 1024;

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
