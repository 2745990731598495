/**
 * How the Files panel reads a file (docs/workspace.md, "Console"): at most `VIEW_MAX_BYTES` of it from
 * the raw route's stream (the rest is not downloaded; the panel offers the whole file as a download),
 * binary detection as git and the workspace's `read_file` decide (a NUL in the first 8,000 bytes), and
 * a jsdiff patch turned into numbered rows. Pure apart from reading the given stream
 * (test/console/files.pure.test.ts).
 */
import { structuredPatch } from "diff";

/** The most of one file the panel shows or diffs. */
export const VIEW_MAX_BYTES = 256 * 1024;

/** Diffs that take longer give up (jsdiff's own `timeout`). */
const DIFF_TIMEOUT_MS = 1_500;

export function looksBinary(bytes: Uint8Array): boolean {
  return bytes.subarray(0, 8_000).includes(0);
}

/** The first `max` bytes of a response body, and whether there was more (the rest is never read). */
export async function readHead(
  body: ReadableStream<Uint8Array> | null,
  max = VIEW_MAX_BYTES,
): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  let truncated = false;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    chunks.push(value);
    size += value.byteLength;
    if (size > max) {
      truncated = true;
      await reader.cancel();
      break;
    }
  }
  const bytes = new Uint8Array(Math.min(size, max));
  let at = 0;
  for (const chunk of chunks) {
    const part = chunk.subarray(0, Math.min(chunk.byteLength, bytes.byteLength - at));
    bytes.set(part, at);
    at += part.byteLength;
    if (at >= bytes.byteLength) break;
  }
  return { bytes, truncated };
}

export type DiffRow =
  { kind: "hunk"; header: string } | { kind: "line"; op: " " | "+" | "-"; old: number | null; new: number | null; text: string };

/**
 * `before` → `after` as unified-diff rows with both line numbers (3 lines of context), from jsdiff's
 * `structuredPatch`; null when the diff gave up (too many differences to compute in time).
 */
export function diffRows(before: string, after: string): DiffRow[] | null {
  const patch = structuredPatch("a", "b", before, after, undefined, undefined, { context: 3, timeout: DIFF_TIMEOUT_MS });
  if (!patch) return null;
  const rows: DiffRow[] = [];
  for (const hunk of patch.hunks) {
    // As unified diffs write it: an empty side's start is the line before (`@@ -0,0 +1,1 @@`).
    const start = (at: number, lines: number) => (lines === 0 ? at - 1 : at);
    rows.push({
      kind: "hunk",
      header: `@@ -${start(hunk.oldStart, hunk.oldLines)},${hunk.oldLines} +${start(hunk.newStart, hunk.newLines)},${hunk.newLines} @@`,
    });
    let oldNo = hunk.oldStart;
    let newNo = hunk.newStart;
    for (const line of hunk.lines) {
      const op = line[0];
      const text = line.slice(1);
      if (op === "+") rows.push({ kind: "line", op, old: null, new: newNo++, text });
      else if (op === "-") rows.push({ kind: "line", op, old: oldNo++, new: null, text });
      else if (op === " ") rows.push({ kind: "line", op, old: oldNo++, new: newNo++, text });
      // "\ No newline at end of file" markers are left out.
    }
  }
  return rows;
}
