/**
 * `list_files` and `grep` over the session workspace (docs/workspace.md, "File tools"). Both walk the
 * tree one directory at a time and `grep` reads one file at a time, so a 5,000-file repository is
 * never in memory at once. `grep` uses RE2 (re2js, the same engine just-bash's grep uses): matching
 * is linear in the input, so a pathological pattern from the model cannot hang the session.
 */
import { z } from "zod";
import picomatch from "picomatch";
import type { RE2JS } from "re2js";
import { defineTool, fail, ok } from "../../tools/spec.ts";
import { dirPath } from "../paths.ts";
import { CappedLines, clip, isBinary, text, withWorkspace } from "./common.ts";
import type { SessionWorkspace } from "../session-workspace.ts";

/** Paths `list_files` names at most; matches `grep` reports at most. */
export const LIST_MAX_ENTRIES = 1000;
export const GREP_MAX_MATCHES = 200;
const GREP_LINE_CHARS = 300;

const pathArg = z.string().max(1024).optional().describe("Directory (or file) relative to the workspace root; default: the root");
const globArg = z
  .string()
  .min(1)
  .max(512)
  .optional()
  .describe("Only paths matching this glob, relative to `path` (e.g. '**/*.ts'; a pattern without '/' matches file names)");

const GIT_DIR = /(^|\/)\.git\//;

/** The files under `path` (a directory or one file) matching `glob`, as paths from the root. */
function* filesUnder(ws: SessionWorkspace, root: string, path: string, glob: string | undefined) {
  const entry = ws.lookup(root, path);
  if (!entry) return;
  const match = glob === undefined ? null : picomatch(glob, { dot: true, basename: !glob.includes("/") });
  if (entry.kind === "file") {
    if (!match || match(path.split("/").pop()!)) yield { path, entry };
    return;
  }
  for (const file of ws.objects.walk(entry.hash, path)) {
    // A repository's `.git` is git's, not the project's (as ripgrep skips it); the shell still sees it.
    if (GIT_DIR.test(file.path)) continue;
    const rel = path === "" ? file.path : file.path.slice(path.length + 1);
    if (!match || match(rel)) yield file;
  }
}

export const listFilesTool = defineTool({
  name: "list_files",
  description: `List the files in the workspace (recursively) under path, optionally filtered by a glob. At most ${LIST_MAX_ENTRIES} paths are shown.`,
  input: z.strictObject({ path: pathArg, glob: globArg }),
  idempotent: true,
  readOnly: true,
  execute: (args, ctx) =>
    withWorkspace(ctx, async (ws) => {
      const path = dirPath(args.path);
      const root = ws.head();
      if (!ws.lookup(root, path)) return fail("not_found", `No file or directory '${path}' in the workspace`);
      const out = new CappedLines(ws.limits.workspace_tool_output_bytes);
      let total = 0;
      for (const file of filesUnder(ws, root, path, args.glob)) {
        total++;
        if (out.lines.length < LIST_MAX_ENTRIES && !out.full) out.push(file.path);
      }
      if (total === 0) return ok(path === "" && !args.glob ? "(the workspace is empty)" : "(no files match)");
      if (out.lines.length < total) out.lines.push(`[${total - out.lines.length} more files not shown; narrow path or glob]`);
      return ok(out.lines.join("\n"));
    }),
});

export const grepTool = defineTool({
  name: "grep",
  description: `Search workspace files for a regular expression (RE2 syntax). Output is 'file:line:text', at most ${GREP_MAX_MATCHES} matches; binary files are skipped.`,
  input: z.strictObject({
    pattern: z.string().min(1).max(1000).describe("Regular expression (RE2 syntax, like grep -E)"),
    path: pathArg,
    glob: globArg,
    ignore_case: z.boolean().optional().describe("Match case-insensitively"),
  }),
  idempotent: true,
  readOnly: true,
  execute: async (args, ctx) => {
    // RE2 loads on the first grep, not at the Worker's startup (docs/performance.md, "Startup, third pass").
    const { RE2JS: RE2 } = await import("re2js");
    return withWorkspace(ctx, async (ws) => {
      let re: RE2JS;
      try {
        re = RE2.compile(args.pattern, args.ignore_case === true ? RE2.CASE_INSENSITIVE : 0);
      } catch (err) {
        return fail("invalid_pattern", `Invalid regular expression: ${err instanceof Error ? err.message : String(err)}`);
      }
      const path = dirPath(args.path);
      const root = ws.head();
      if (!ws.lookup(root, path)) return fail("not_found", `No file or directory '${path}' in the workspace`);
      const out = new CappedLines(ws.limits.workspace_tool_output_bytes);
      let matches = 0;
      let skipped = 0;
      // Trees are immutable (content-addressed), so the lazy walk may await between files.
      for (const file of filesUnder(ws, root, path, args.glob)) {
        if (ctx.signal.aborted) break;
        const bytes = await ws.objects.read(file.entry.hash);
        if (isBinary(bytes)) {
          skipped++;
          continue;
        }
        const lines = text(bytes).split("\n");
        for (let i = 0; i < lines.length; i++) {
          // `test` answers yes/no without capture groups, on re2js's fast path (`matcher().find()` tracks them).
          if (!re.test(lines[i]!)) continue;
          matches++;
          if (matches <= GREP_MAX_MATCHES && !out.full) out.push(`${file.path}:${i + 1}:${clip(lines[i]!, GREP_LINE_CHARS)}`);
        }
      }
      if (matches === 0) return ok(`No matches${skipped > 0 ? ` (${skipped} binary files skipped)` : ""}`);
      if (out.lines.length < matches)
        out.lines.push(`[${matches - out.lines.length} more matches not shown; narrow pattern, path or glob]`);
      return ok(out.lines.join("\n"));
    });
  },
});
