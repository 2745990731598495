/**
 * The two identities of a skill tree (see docs/skills-hashing.md — keep both in step):
 *
 * skill_tree_hash = hex(SHA-256(
 *     "beaver-skill-tree/v1\n"
 *     + for each regular file, sorted by the bytes of its UTF-8 path:
 *         path "\t" byte_length "\t" ("x" if any executable bit is set, else "-") "\t" hex(SHA-256(bytes)) "\n"
 *   ))
 *   `path` is relative to the skill root, NFC, `/`-separated, no `./`, no `..` (see paths.ts); paths
 *   cannot contain tabs or newlines, so the record is unambiguous. Directories, symlinks (rejected
 *   earlier) and Beaver metadata (`version.json`, `upstream.json` at the root) are not part of it.
 *
 * skill_content_hash = hex(SHA-256("beaver-skill-content/v1\n" + normalize(SKILL.md)))
 *   normalize: decode UTF-8, drop one leading BOM, CRLF and lone CR → LF, Unicode NFC, and end the text
 *   with exactly one LF (trailing blank lines removed; an empty document stays empty).
 */
import { toHex } from "../hash.ts";
import { comparePaths } from "./paths.ts";

export const TREE_FORMAT = "beaver-skill-tree/v1";
export const CONTENT_FORMAT = "beaver-skill-content/v1";

/** A file of a skill tree with its bytes. */
export interface TreeFile {
  path: string;
  bytes: Uint8Array;
  executable: boolean;
}

/** A file of a stored tree: what the manifest records. */
export interface ManifestEntry {
  path: string;
  size: number;
  executable: boolean;
  sha256: string;
}

export interface TreeManifest {
  format: typeof TREE_FORMAT;
  files: ManifestEntry[];
}

/** Files at the skill root that belong to Beaver's own bookkeeping, never to the skill. */
export const BEAVER_METADATA_PATHS: readonly string[] = ["version.json", "upstream.json"];

export function isBeaverMetadataPath(path: string): boolean {
  return BEAVER_METADATA_PATHS.includes(path);
}

export async function sha256HexBytes(bytes: Uint8Array): Promise<string> {
  return toHex(await crypto.subtle.digest("SHA-256", bytes));
}

/** Hash every file's bytes and return manifest entries sorted in canonical order. */
export async function manifestEntriesOf(files: readonly TreeFile[]): Promise<ManifestEntry[]> {
  const entries = await Promise.all(
    files.map(async (f) => ({ path: f.path, size: f.bytes.byteLength, executable: f.executable, sha256: await sha256HexBytes(f.bytes) })),
  );
  return entries.sort((a, b) => comparePaths(a.path, b.path));
}

/** The canonical byte string hashed into `skill_tree_hash` (exported for docs and tests). */
export function canonicalTreeText(entries: readonly ManifestEntry[]): string {
  const sorted = [...entries].filter((e) => !isBeaverMetadataPath(e.path)).sort((a, b) => comparePaths(a.path, b.path));
  let out = `${TREE_FORMAT}\n`;
  for (const e of sorted) out += `${e.path}\t${e.size}\t${e.executable ? "x" : "-"}\t${e.sha256}\n`;
  return out;
}

export async function treeHashOf(entries: readonly ManifestEntry[]): Promise<string> {
  return sha256HexBytes(new TextEncoder().encode(canonicalTreeText(entries)));
}

/** Normalised SKILL.md text (see the header); throws on bytes that are not UTF-8. */
export function normalizeSkillMd(bytes: Uint8Array): string {
  let text = new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  if (text.startsWith("\uFEFF")) text = text.slice(1);
  text = text.replace(/\r\n?/g, "\n").normalize("NFC");
  text = text.replace(/\n+$/, "");
  return text === "" ? "" : `${text}\n`;
}

export async function contentHashOf(skillMd: Uint8Array): Promise<string> {
  return sha256HexBytes(new TextEncoder().encode(`${CONTENT_FORMAT}\n${normalizeSkillMd(skillMd)}`));
}

/** Label of a version number: 1 → "v0001". */
export function versionLabel(n: number): string {
  return `v${String(n).padStart(4, "0")}`;
}

/** Parse "v0001" → 1, or null. */
export function parseVersionLabel(label: string): number | null {
  const m = /^v(\d{4,})$/.exec(label);
  if (!m) return null;
  const n = Number(m[1]);
  return Number.isSafeInteger(n) && n > 0 ? n : null;
}
