/**
 * Discovering plugins in a package's files (pure apart from hashing): find the package root (the
 * archive root, or its single top folder as Gitea archives have), read whichever manifest is there
 * (`beaver.plugin.json` first, then a Claude Code marketplace, then a Claude Code plugin), and
 * prepare every declared skill — validation and safety — ready to be stored.
 */
import type { ArchiveFile } from "../../storage/archive/index.ts";
import { relativeTo } from "../../kernel/content-tree/paths.ts";
import { prepareSkill, type PreparedSkill } from "../skills/prepare.ts";
import { problem, type Problem } from "../../kernel/content-tree/problems.ts";
import {
  BEAVER_MANIFEST,
  CLAUDE_MARKETPLACE_MANIFEST,
  CLAUDE_PLUGIN_MANIFEST,
  parseBeaverManifest,
  parseClaudeMarketplace,
  parseClaudePlugin,
  type PluginDeclaration,
  type SkillFolderFinder,
} from "./manifest.ts";

export interface DiscoveredPlugin {
  declaration: PluginDeclaration;
  /** Prepared skills, in declaration order; empty when the declaration itself is invalid. */
  skills: { path: string; prepared: PreparedSkill }[];
  /** Declaration and skill problems together: any problem makes the plugin `invalid`. */
  problems: Problem[];
}

export type Discovery =
  { ok: true; plugins: DiscoveredPlugin[] } | { ok: false; reason: "no_manifest" | "invalid_manifest"; problems: Problem[] };

const MANIFESTS = [BEAVER_MANIFEST, CLAUDE_MARKETPLACE_MANIFEST, CLAUDE_PLUGIN_MANIFEST];

/** The folder all package paths are relative to, and the files re-rooted there. */
export function packageRoot(files: readonly ArchiveFile[]): ArchiveFile[] | null {
  if (files.some((f) => MANIFESTS.includes(f.path))) return [...files];
  const tops = new Set(files.map((f) => f.path.split("/")[0]));
  if (tops.size !== 1) return null;
  const [top] = [...tops] as [string];
  const inner = files.map((f) => ({ ...f, path: relativeTo(top, f.path) ?? f.path }));
  return inner.some((f) => MANIFESTS.includes(f.path)) ? inner : null;
}

function finderFor(files: readonly ArchiveFile[]): SkillFolderFinder {
  const skillDirs = new Set(
    files
      .filter((f) => f.path === "SKILL.md" || f.path.endsWith("/SKILL.md"))
      .map((f) => f.path.slice(0, -"SKILL.md".length).replace(/\/$/, "")),
  );
  return {
    isSkill: (dir) => skillDirs.has(dir),
    children: (dir) =>
      [...skillDirs]
        .map((d) => relativeTo(dir, d))
        .filter((r): r is string => r !== null && r !== "" && !r.includes("/"))
        .sort(),
  };
}

const text = (f: ArchiveFile | undefined) => (f ? new TextDecoder().decode(f.bytes) : null);

export async function discoverPlugins(input: readonly ArchiveFile[]): Promise<Discovery> {
  const files = packageRoot(input);
  if (!files) {
    return {
      ok: false,
      reason: "no_manifest",
      problems: [
        problem(
          ".",
          `no plugin manifest found: expected ${BEAVER_MANIFEST}, ${CLAUDE_PLUGIN_MANIFEST} or ${CLAUDE_MARKETPLACE_MANIFEST} at the package root`,
        ),
      ],
    };
  }
  const byPath = new Map(files.map((f) => [f.path, f]));
  const finder = finderFor(files);
  let declarations: PluginDeclaration[];
  if (byPath.has(BEAVER_MANIFEST)) {
    const d = parseBeaverManifest(text(byPath.get(BEAVER_MANIFEST))!);
    if (!("id" in d)) return { ok: false, reason: "invalid_manifest", problems: d.problems };
    declarations = [d];
  } else if (byPath.has(CLAUDE_MARKETPLACE_MANIFEST)) {
    const d = parseClaudeMarketplace(text(byPath.get(CLAUDE_MARKETPLACE_MANIFEST))!, finder, (p) => text(byPath.get(p)));
    if (!Array.isArray(d)) return { ok: false, reason: "invalid_manifest", problems: d.problems };
    declarations = d;
  } else {
    const d = parseClaudePlugin(text(byPath.get(CLAUDE_PLUGIN_MANIFEST))!, "", finder);
    if (!("id" in d)) return { ok: false, reason: "invalid_manifest", problems: d.problems };
    declarations = [d];
  }
  const ids = new Set<string>();
  const plugins: DiscoveredPlugin[] = [];
  for (const declaration of declarations) {
    const problems = [...declaration.problems];
    if (ids.has(declaration.id)) problems.push(problem(declaration.manifestPath, `duplicate plugin id '${declaration.id}'`, "name"));
    ids.add(declaration.id);
    const skills: DiscoveredPlugin["skills"] = [];
    for (const s of declaration.skills) {
      const skillFiles = files.flatMap((f) => {
        const rel = relativeTo(s.path, f.path);
        return rel === null ? [] : [{ path: rel, bytes: f.bytes, executable: f.executable }];
      });
      if (skillFiles.length === 0) {
        problems.push(problem(`${s.path}/SKILL.md`, `declared skill '${s.name}' has no folder in the package`));
        continue;
      }
      const prepared = await prepareSkill(s.name, skillFiles, s.path);
      if (!prepared.ok) problems.push(...prepared.problems);
      else skills.push({ path: s.path, prepared: prepared.skill });
    }
    plugins.push({ declaration, skills: problems.length > 0 ? [] : skills, problems });
  }
  return { ok: true, plugins };
}
