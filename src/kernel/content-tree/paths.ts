/**
 * Relative path normalisation for skill and package files. Every path that enters the store goes
 * through `normalizeRelativePath`, so hashes, duplicates and escape checks all see one spelling.
 */

export type PathProblem =
  "empty" | "absolute" | "backslash" | "control_char" | "dot_segment" | "empty_segment" | "percent_encoded" | "git_dir" | "too_long";

export type NormalizedPath = { ok: true; path: string } | { ok: false; problem: PathProblem; message: string };

const MAX_PATH_BYTES = 512;

/**
 * Normalise a relative, `/`-separated path: Unicode NFC, no leading `./`, no trailing `/`.
 * Rejects absolute paths (`/x`, `C:`), backslashes, control characters, `..` and empty segments,
 * percent-encoded bytes (`%2e%2e/x` is `../x` to whatever decodes it later: a browser, a proxy, a
 * file server) and `.git` segments in any case (git metadata: hooks and config run code on checkout)
 * unless `allowGitDir` (the session workspace's shell, where `git` keeps its repository: no hooks run).
 */
export function normalizeRelativePath(raw: string, options: { allowGitDir?: boolean } = {}): NormalizedPath {
  let p = raw.normalize("NFC");
  while (p.startsWith("./")) p = p.slice(2);
  if (p.endsWith("/")) p = p.replace(/\/+$/, "");
  if (p === "" || p === ".") return { ok: false, problem: "empty", message: "empty path" };
  if (p.startsWith("/") || /^[A-Za-z]:/.test(p)) return { ok: false, problem: "absolute", message: `absolute path '${raw}'` };
  if (p.includes("\\")) return { ok: false, problem: "backslash", message: `backslash in path '${raw}'` };
  if (/[\u0000-\u001f\u007f]/.test(p))
    return { ok: false, problem: "control_char", message: `control character in path '${JSON.stringify(raw)}'` };
  const segments = p.split("/");
  for (const s of segments) {
    if (s === "") return { ok: false, problem: "empty_segment", message: `empty segment in path '${raw}'` };
    if (s === "." || s === "..") return { ok: false, problem: "dot_segment", message: `'${s}' segment in path '${raw}'` };
    if (/%[0-9A-Fa-f]{2}/.test(s))
      return { ok: false, problem: "percent_encoded", message: `percent-encoded segment '${s}' in path '${raw}'` };
    if (!options.allowGitDir && s.toLowerCase() === ".git")
      return { ok: false, problem: "git_dir", message: `'.git' segment in path '${raw}'` };
  }
  if (new TextEncoder().encode(p).byteLength > MAX_PATH_BYTES)
    return { ok: false, problem: "too_long", message: `path longer than ${MAX_PATH_BYTES} bytes` };
  return { ok: true, path: p };
}

/**
 * The form two paths are the same file in on a case-insensitive or normalising file system (macOS,
 * Windows, a checkout of the skill): NFKC, then lower case. Two files of one tree with the same key
 * are refused as duplicates.
 */
export function pathFoldKey(path: string): string {
  return path.normalize("NFKC").toLowerCase().normalize("NFC");
}

/** Byte-wise comparison of UTF-8 encodings: the one sort order used by hashes and listings. */
export function comparePaths(a: string, b: string): number {
  const ea = new TextEncoder().encode(a);
  const eb = new TextEncoder().encode(b);
  const n = Math.min(ea.length, eb.length);
  for (let i = 0; i < n; i++) {
    const d = (ea[i] ?? 0) - (eb[i] ?? 0);
    if (d !== 0) return d;
  }
  return ea.length - eb.length;
}

/** `child` relative to directory `dir` ('' = root), or null when outside it. */
export function relativeTo(dir: string, child: string): string | null {
  if (dir === "") return child;
  return child.startsWith(`${dir}/`) ? child.slice(dir.length + 1) : null;
}
