/**
 * The deterministic path-level three-way merge of supporting files (everything but SKILL.md;
 * docs/skills-and-plugins.md, "Plugins"): local unchanged from B → take U; upstream unchanged from B →
 * keep L; both equal → keep; added on one side only → keep it; divergent edits, delete-versus-edit and
 * different additions at one path → an unresolved conflict that blocks publication. A file is compared
 * by content hash and executable bit. SKILL.md is only classified here: merging it is the synthesiser's
 * job unless one side left it untouched.
 */
import type { ManifestEntry } from "../../kernel/content-tree/hashing.ts";
import { comparePaths } from "../../kernel/content-tree/paths.ts";

export type FileSide = Pick<ManifestEntry, "sha256" | "executable" | "size">;
export type Resolution = "take_upstream" | "keep_local" | "same" | "deleted";
export type ConflictKind = "both_modified" | "delete_vs_edit" | "both_added";

export interface PlannedFile {
  path: string;
  resolution: Resolution;
  /** The file that ends up in the merged tree (null when deleted). */
  result: FileSide | null;
}

export interface FileConflict {
  path: string;
  kind: ConflictKind;
  base: FileSide | null;
  local: FileSide | null;
  upstream: FileSide | null;
}

export interface MergePlan {
  /** What to do with SKILL.md: `needs_synthesis` when both sides changed it differently. */
  skill_md: "take_upstream" | "keep_local" | "same" | "needs_synthesis";
  files: PlannedFile[];
  conflicts: FileConflict[];
  /** True when supporting-file conflicts block publication. */
  blocked: boolean;
}

const same = (a: FileSide | null, b: FileSide | null) =>
  a === null ? b === null : b !== null && a.sha256 === b.sha256 && a.executable === b.executable;

function side(entries: readonly ManifestEntry[]): Map<string, FileSide> {
  return new Map(entries.map((e) => [e.path, { sha256: e.sha256, executable: e.executable, size: e.size }]));
}

export function planSupportingFileMerge(
  base: readonly ManifestEntry[],
  local: readonly ManifestEntry[],
  upstream: readonly ManifestEntry[],
): MergePlan {
  const B = side(base);
  const L = side(local);
  const U = side(upstream);
  const paths = [...new Set([...B.keys(), ...L.keys(), ...U.keys()])].sort(comparePaths);
  const files: PlannedFile[] = [];
  const conflicts: FileConflict[] = [];
  let skillMd: MergePlan["skill_md"] = "same";
  for (const path of paths) {
    const b = B.get(path) ?? null;
    const l = L.get(path) ?? null;
    const u = U.get(path) ?? null;
    let resolution: Resolution | null;
    let result: FileSide | null;
    if (same(l, u)) [resolution, result] = ["same", l];
    else if (same(l, b)) [resolution, result] = [u === null ? "deleted" : "take_upstream", u];
    else if (same(u, b)) [resolution, result] = [l === null ? "deleted" : "keep_local", l];
    else [resolution, result] = [null, null];

    if (path === "SKILL.md") {
      skillMd = resolution === null || resolution === "deleted" ? "needs_synthesis" : resolution === "same" ? "same" : resolution;
      continue;
    }
    if (resolution === null) {
      const kind: ConflictKind = b === null ? "both_added" : l === null || u === null ? "delete_vs_edit" : "both_modified";
      conflicts.push({ path, kind, base: b, local: l, upstream: u });
      continue;
    }
    if (resolution === "same" && result === null) continue;
    files.push({ path, resolution, result });
  }
  return { skill_md: skillMd, files, conflicts, blocked: conflicts.length > 0 };
}
