/**
 * Turning incoming files into a skill ready to store: paths normalised, Beaver metadata dropped,
 * SKILL.md required and its frontmatter validated, the static safety check run. Pure apart from
 * hashing; runs outside the workspace lock. Every problem names the file (under `displayPrefix`).
 */
import { normalizeRelativePath, pathFoldKey, relativeTo } from "../../kernel/content-tree/paths.ts";
import { contentHashOf, isBeaverMetadataPath, type TreeFile } from "../../kernel/content-tree/hashing.ts";
import { parseSkillMd, type Frontmatter } from "./frontmatter.ts";
import { checkSkillSafety, type SafetyReport } from "./safety.ts";
import { problem, type Problem } from "../../kernel/content-tree/problems.ts";

export interface PreparedSkill {
  name: string;
  files: TreeFile[];
  frontmatter: Frontmatter;
  contentHash: string;
  safety: SafetyReport;
  warnings: Problem[];
  /** Files present in the input but not part of the skill (Beaver metadata). */
  ignored: string[];
  totalBytes: number;
}

export type PrepareResult = { ok: true; skill: PreparedSkill } | { ok: false; problems: Problem[] };

const join = (prefix: string, path: string) => (prefix ? `${prefix}/${path}` : path);

/**
 * Prepare the skill `name` from files whose paths are relative to the skill folder.
 * `displayPrefix` is the folder's path as the user knows it (`skills/foo` in a package, '' for an upload).
 */
export async function prepareSkill(name: string, input: readonly TreeFile[], displayPrefix = ""): Promise<PrepareResult> {
  const problems: Problem[] = [];
  const files: TreeFile[] = [];
  const ignored: string[] = [];
  /** Fold key (case, Unicode normalisation) → the first path with it. */
  const seen = new Map<string, string>();
  for (const f of input) {
    const norm = normalizeRelativePath(f.path);
    if (!norm.ok) {
      problems.push(problem(join(displayPrefix, f.path), `unsafe path: ${norm.message}`));
      continue;
    }
    const key = pathFoldKey(norm.path);
    const earlier = seen.get(key);
    if (earlier !== undefined) {
      problems.push(
        problem(
          join(displayPrefix, norm.path),
          earlier === norm.path ? "duplicate path" : `duplicate path: differs only by case or Unicode normalisation from '${earlier}'`,
        ),
      );
      continue;
    }
    seen.set(key, norm.path);
    if (isBeaverMetadataPath(norm.path)) {
      ignored.push(join(displayPrefix, norm.path));
      continue;
    }
    files.push({ path: norm.path, bytes: f.bytes, executable: f.executable });
  }
  const skillMd = files.find((f) => f.path === "SKILL.md");
  if (!skillMd) problems.push(problem(join(displayPrefix, "SKILL.md"), "SKILL.md is required at the root of the skill folder"));
  if (problems.length > 0 || !skillMd) return { ok: false, problems };

  const parsed = parseSkillMd(skillMd.bytes, join(displayPrefix, "SKILL.md"), name);
  if (!parsed.ok) return { ok: false, problems: parsed.errors };
  const safety = checkSkillSafety(files);
  for (const finding of safety.findings) finding.path = join(displayPrefix, finding.path);
  return {
    ok: true,
    skill: {
      name,
      files,
      frontmatter: parsed.frontmatter,
      contentHash: await contentHashOf(skillMd.bytes),
      safety,
      warnings: parsed.warnings,
      ignored,
      totalBytes: files.reduce((n, f) => n + f.bytes.byteLength, 0),
    },
  };
}

/**
 * The skill folder inside an uploaded archive: the root when it holds SKILL.md, else the single
 * top-level folder (archives made with `tar czf x.tgz my-skill/`). Returns files relative to it.
 */
export function skillRootOf(files: readonly TreeFile[]): { root: string; files: TreeFile[] } | null {
  if (files.some((f) => f.path === "SKILL.md")) return { root: "", files: [...files] };
  const tops = new Set(files.map((f) => f.path.split("/")[0]));
  if (tops.size !== 1) return null;
  const [root] = [...tops] as [string];
  const inner = files.map((f) => ({ ...f, path: relativeTo(root, f.path) ?? f.path }));
  return inner.some((f) => f.path === "SKILL.md") ? { root, files: inner } : null;
}
