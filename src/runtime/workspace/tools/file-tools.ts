/**
 * `read_file`, `write_file` and `edit_file` on the session workspace (docs/workspace.md, "File
 * tools"), with the argument names models already know from other agents. A change commits a new
 * tree recorded against the call, so a rewind to before it brings the old files back.
 */
import { z } from "zod";
import { defineTool, fail, ok } from "../../tools/spec.ts";
import { filePath } from "../paths.ts";
import { CappedLines, clip, isBinary, text, utf8, withWorkspace } from "./common.ts";

/** Lines `read_file` shows when the model names no `limit`; one line is cut after this many characters. */
export const READ_DEFAULT_LINES = 2000;
const MAX_LINE_CHARS = 2000;

const pathArg = z.string().min(1).max(1024).describe("Path relative to the workspace root, e.g. 'src/app.ts'");

export const readFileTool = defineTool({
  name: "read_file",
  description:
    "Read a text file from the workspace. Lines are numbered (number, tab, text). Use offset (1-based line) and limit (lines) to page through a long file; the output is capped and says how to continue.",
  input: z.strictObject({
    path: pathArg,
    offset: z.number().int().min(1).optional().describe("First line to show (1-based); default 1"),
    limit: z.number().int().min(1).max(100_000).optional().describe(`How many lines to show; default ${READ_DEFAULT_LINES}`),
  }),
  idempotent: true,
  readOnly: true,
  execute: (args, ctx) =>
    withWorkspace(ctx, async (ws) => {
      const path = filePath(args.path);
      const entry = ws.file(ws.head(), path);
      const bytes = await ws.objects.read(entry.hash);
      if (isBinary(bytes)) return fail("binary_file", `'${path}' is a binary file (${bytes.byteLength} bytes); read_file shows text only`);
      if (bytes.byteLength === 0) return ok(`(${path} is empty)`);
      const lines = text(bytes).split("\n");
      if (lines.at(-1) === "") lines.pop();
      const first = args.offset ?? 1;
      if (first > lines.length) return fail("bad_request", `offset ${first} is past the end of '${path}' (${lines.length} lines)`);
      const last = Math.min(lines.length, first - 1 + (args.limit ?? READ_DEFAULT_LINES));
      const out = new CappedLines(ws.limits.workspace_tool_output_bytes);
      let shown = first - 1;
      for (let n = first; n <= last; n++) {
        if (!out.push(`${String(n).padStart(6)}\t${clip(lines[n - 1]!, MAX_LINE_CHARS)}`)) break;
        shown = n;
      }
      if (shown < lines.length) out.lines.push(`[showing lines ${first}-${shown} of ${lines.length}; continue with offset=${shown + 1}]`);
      return ok(out.lines.join("\n"));
    }),
});

export const writeFileTool = defineTool({
  name: "write_file",
  description:
    "Create or overwrite a file in the workspace with the given content (parent directories are created). Prefer edit_file for changing part of an existing file.",
  input: z.strictObject({ path: pathArg, content: z.string().describe("The file's complete new content") }),
  // Writing the same content again leaves the same file: safe to repeat after an interruption.
  idempotent: true,
  execute: (args, ctx) =>
    withWorkspace(ctx, async (ws) => {
      const path = filePath(args.path);
      const base = ws.head();
      const existing = ws.lookup(base, path);
      if (existing?.kind === "dir") return fail("conflict", `'${path}' is a directory`);
      const bytes = utf8(args.content);
      const blob = await ws.stage(path, bytes);
      await ws.commit(base, [{ path, blob }], { runId: ctx.runId, toolCallId: ctx.toolCallId });
      return ok(`${existing ? "Overwrote" : "Created"} ${path} (${bytes.byteLength} bytes)`);
    }),
});

export const editFileTool = defineTool({
  name: "edit_file",
  description:
    "Replace text in a workspace file. old_text must match the file exactly (whitespace and indentation included) and, unless replace_all is true, exactly once; include enough surrounding lines to make it unique.",
  input: z.strictObject({
    path: pathArg,
    old_text: z.string().min(1).describe("The exact text to replace"),
    new_text: z.string().describe("The text to put in its place"),
    replace_all: z.boolean().optional().describe("Replace every occurrence instead of requiring exactly one"),
  }),
  execute: (args, ctx) =>
    withWorkspace(ctx, async (ws) => {
      const path = filePath(args.path);
      const base = ws.head();
      const entry = ws.file(base, path);
      const bytes = await ws.objects.read(entry.hash);
      if (isBinary(bytes)) return fail("binary_file", `'${path}' is a binary file; edit_file changes text only`);
      const before = text(bytes);
      const at = occurrences(before, args.old_text);
      if (at.length === 0)
        return fail(
          "no_match",
          `old_text was not found in '${path}'. It must match exactly, including whitespace and indentation; read_file shows the current text.`,
        );
      if (at.length > 1 && args.replace_all !== true) {
        const lines = at.slice(0, 10).map((i) => lineOf(before, i));
        return fail(
          "ambiguous_match",
          `old_text occurs ${at.length} times in '${path}' (at lines ${lines.join(", ")}${at.length > 10 ? ", …" : ""}); include more surrounding text to make it unique, or set replace_all to true.`,
        );
      }
      if (args.old_text === args.new_text) return fail("no_change", "old_text and new_text are the same");
      const after =
        args.replace_all === true
          ? before.split(args.old_text).join(args.new_text)
          : replaceAt(before, at[0]!, args.old_text, args.new_text);
      const blob = await ws.stage(path, utf8(after));
      await ws.commit(base, [{ path, blob }], { runId: ctx.runId, toolCallId: ctx.toolCallId });
      return ok(
        `Edited ${path}: replaced ${at.length === 1 ? "1 occurrence" : `${at.length} occurrences`} (line ${lineOf(before, at[0]!)})`,
      );
    }),
});

/** Start offsets of non-overlapping occurrences of `needle`. */
function occurrences(haystack: string, needle: string): number[] {
  const out: number[] = [];
  for (let i = haystack.indexOf(needle); i !== -1; i = haystack.indexOf(needle, i + needle.length)) out.push(i);
  return out;
}

function replaceAt(s: string, index: number, oldText: string, newText: string): string {
  return s.slice(0, index) + newText + s.slice(index + oldText.length);
}

function lineOf(s: string, index: number): number {
  let line = 1;
  for (let i = s.indexOf("\n"); i !== -1 && i < index; i = s.indexOf("\n", i + 1)) line++;
  return line;
}
