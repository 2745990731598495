/**
 * The slow half of receiving a plugin package, run before (and outside) the workspace lock:
 * read and check the archive, discover plugins, validate and safety-check their skills, hash and
 * store every valid skill tree in the content-addressed store. The result is small and is what
 * `recordPackage` writes under the lock.
 */
import type { Env } from "../../storage/env.ts";
import { readArchive } from "../../storage/archive/index.ts";
import { storeTree } from "../../storage/blob/store.ts";
import { AppError } from "../../kernel/errors.ts";
import { describeProblems, type Problem } from "../../kernel/content-tree/problems.ts";
import type { Frontmatter } from "../skills/frontmatter.ts";
import type { SafetyReport } from "../skills/safety.ts";
import { discoverPlugins } from "./package.ts";
import type { DeclaredSkill, PluginDeclaration } from "./manifest.ts";

/** A declared skill as received: validated, safety-checked and stored (by tree hash). */
export interface PackageSkillRecord extends DeclaredSkill {
  treeHash: string;
  contentHash: string;
  fileCount: number;
  totalBytes: number;
  frontmatter: Frontmatter;
  safety: SafetyReport;
  warnings: Problem[];
}

/** A plugin's declaration with its stored skills; `problems` also holds its skills' problems. */
export type PackagePluginRecord = Omit<PluginDeclaration, "skills"> & { skills: PackageSkillRecord[] };

export interface IngestedPackage {
  plugins: PackagePluginRecord[];
  ignored: string[];
  r2Writes: number;
  blobsWritten: number;
  bytesHashed: number;
  hashMs: number;
}

export const EMPTY_PACKAGE: IngestedPackage = { plugins: [], ignored: [], r2Writes: 0, blobsWritten: 0, bytesHashed: 0, hashMs: 0 };

/**
 * `withoutManifest`: what a package without any plugin manifest is — an error for an upload, but
 * for a repository source simply a package that provides no plugins (so its plugins go missing).
 */
export async function ingestPackage(
  env: Env,
  workspaceId: string,
  archive: Uint8Array,
  withoutManifest: "reject" | "empty" = "reject",
): Promise<IngestedPackage> {
  const { files, ignored } = await readArchive(archive);
  const discovery = await discoverPlugins(files);
  if (!discovery.ok) {
    if (discovery.reason === "no_manifest" && withoutManifest === "empty") return { ...EMPTY_PACKAGE, ignored };
    throw new AppError("unprocessable", `Plugin package rejected: ${describeProblems(discovery.problems)}`, {
      details: { reason: discovery.reason, problems: discovery.problems },
    });
  }
  const out: IngestedPackage = { ...EMPTY_PACKAGE, plugins: [], ignored };
  for (const p of discovery.plugins) {
    const skills: PackageSkillRecord[] = [];
    for (const { path, prepared } of p.skills) {
      const stored = await storeTree(env, workspaceId, prepared.files);
      out.r2Writes += stored.r2Writes;
      out.blobsWritten += stored.blobsWritten;
      out.hashMs += stored.hashMs;
      out.bytesHashed += prepared.totalBytes;
      skills.push({
        name: prepared.name,
        path,
        treeHash: stored.treeHash,
        contentHash: prepared.contentHash,
        fileCount: prepared.files.length,
        totalBytes: prepared.totalBytes,
        frontmatter: prepared.frontmatter,
        safety: prepared.safety,
        warnings: prepared.warnings,
      });
    }
    out.plugins.push({ ...p.declaration, problems: p.problems, skills });
  }
  return out;
}
