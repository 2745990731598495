/**
 * Workspace paths as the tools take them: relative to the workspace root, `/`-separated, never
 * escaping it (docs/workspace.md, "Paths"). The same normalisation as skill files
 * (kernel/content-tree/paths.ts): absolute paths, `..`, empty segments, backslashes, NUL and other
 * control characters are refused with a sentence the model can act on.
 */
import { normalizeRelativePath } from "../../kernel/content-tree/paths.ts";
import { AppError } from "../../kernel/errors.ts";

/** A file's path; throws `bad_request` naming the problem. */
export function filePath(raw: string): string {
  const n = normalizeRelativePath(raw);
  if (n.ok) return n.path;
  throw new AppError("bad_request", `Invalid path: ${n.message}. Paths are relative to the workspace root, e.g. 'src/app.ts'.`);
}

/** A directory's path; '' (also for an absent path, '.' or './') is the root. */
export function dirPath(raw: string | undefined): string {
  if (raw === undefined) return "";
  const trimmed = raw.trim();
  if (trimmed === "" || trimmed === "." || trimmed === "./") return "";
  return filePath(trimmed);
}
