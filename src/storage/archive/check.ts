/**
 * The archive policy, as a pure function over raw entries: only regular files and directories,
 * relative paths that stay inside the archive (kernel/content-tree/paths.ts), no duplicates (also
 * none differing only by case or Unicode normalisation), no file/directory clashes, bounded
 * count and size. OS litter (`__MACOSX/`, `.DS_Store`) is dropped and reported.
 */
import { normalizeRelativePath, pathFoldKey } from "../../kernel/content-tree/paths.ts";
import { problem, type Problem } from "../../kernel/content-tree/problems.ts";
import type { ArchiveFile, ArchiveLimits, RawEntry } from "./types.ts";

export interface CheckedArchive {
  files: ArchiveFile[];
  ignored: string[];
}

/**
 * `badNames`: some problem is a file name no skill or plugin may have — a percent-encoded segment, a
 * `.git` segment, or a name that differs from another only by case or Unicode normalisation. The
 * same names are refused with 400 when they come as JSON fields (issue 25), so an archive holding
 * one is a bad request too; every other policy problem (links, escapes, limits) stays a 422.
 */
export type CheckResult = { ok: true; archive: CheckedArchive } | { ok: false; problems: Problem[]; badNames: boolean };

/** The path problems that make an archive a bad request rather than an unprocessable one. */
const BAD_NAME_PROBLEMS: ReadonlySet<string> = new Set(["percent_encoded", "git_dir"]);

function isLitter(path: string): boolean {
  return path === "__MACOSX" || path.startsWith("__MACOSX/") || path === ".DS_Store" || path.endsWith("/.DS_Store");
}

export function checkEntries(raw: readonly RawEntry[], limits: ArchiveLimits): CheckResult {
  const problems: Problem[] = [];
  const files: ArchiveFile[] = [];
  const ignored: string[] = [];
  const seen = new Set<string>();
  /** Fold key (case, Unicode normalisation) → the first file path with it: one file on macOS or Windows. */
  const folded = new Map<string, string>();
  const dirs = new Set<string>();
  let bytes = 0;
  let badNames = false;

  for (const e of raw) {
    const norm = normalizeRelativePath(e.name);
    if (!norm.ok) {
      if (norm.problem === "empty" && e.kind === "directory") continue;
      if (BAD_NAME_PROBLEMS.has(norm.problem)) badNames = true;
      problems.push(problem(e.name, `unsafe path: ${norm.message}`));
      continue;
    }
    const path = norm.path;
    if (isLitter(path)) {
      ignored.push(path);
      continue;
    }
    switch (e.kind) {
      case "directory":
        dirs.add(path);
        continue;
      case "symlink":
        problems.push(problem(path, `symbolic link${e.linkTarget ? ` to '${e.linkTarget}'` : ""} is not allowed`));
        continue;
      case "hardlink":
        problems.push(problem(path, `hard link${e.linkTarget ? ` to '${e.linkTarget}'` : ""} is not allowed`));
        continue;
      case "character-device":
      case "block-device":
      case "fifo":
        problems.push(problem(path, `${e.kind} entries are not allowed`));
        continue;
      case "file":
        break;
    }
    if (seen.has(path)) {
      problems.push(problem(path, "duplicate path in archive"));
      continue;
    }
    const earlier = folded.get(pathFoldKey(path));
    if (earlier !== undefined) {
      badNames = true;
      problems.push(problem(path, `duplicate path: differs only by case or Unicode normalisation from '${earlier}'`));
      continue;
    }
    seen.add(path);
    folded.set(pathFoldKey(path), path);
    const data = e.data ?? new Uint8Array(0);
    bytes += data.byteLength;
    files.push({ path, bytes: data, executable: e.executable });
  }

  for (const f of files) {
    const parts = f.path.split("/");
    for (let i = 1; i < parts.length; i++) {
      const prefix = parts.slice(0, i).join("/");
      if (seen.has(prefix)) problems.push(problem(prefix, `is both a file and a directory (contains '${f.path}')`));
    }
    if (dirs.has(f.path)) problems.push(problem(f.path, "is both a file and a directory"));
  }
  if (files.length > limits.maxFiles) problems.push(problem(".", `too many files: ${files.length} (limit ${limits.maxFiles})`));
  if (bytes > limits.maxUnpackedBytes)
    problems.push(problem(".", `too many bytes once unpacked: ${bytes} (limit ${limits.maxUnpackedBytes})`));
  return problems.length > 0 ? { ok: false, problems: dedupe(problems), badNames } : { ok: true, archive: { files, ignored } };
}

function dedupe(problems: Problem[]): Problem[] {
  const keys = new Set<string>();
  return problems.filter((p) => {
    const k = `${p.path}\u0000${p.message}`;
    if (keys.has(k)) return false;
    keys.add(k);
    return true;
  });
}
