/**
 * Receiving a managed skill: build its file tree from JSON or an archive, prepare and store it
 * outside the workspace lock (parsing, hashing and R2 writes are the slow part), then publish it
 * under the lock, where only the version number and the `current` switch are decided.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { readArchive } from "../../storage/archive/index.ts";
import { storeTree } from "../../storage/blob/store.ts";
import { beforeDeadline, runLocked, startLockBudget, storeEpoch } from "./client.ts";
import type { LockBudget } from "./lock-budget.ts";
import type { TreeFile } from "../../kernel/content-tree/hashing.ts";
import { prepareSkill, skillRootOf } from "../skills/prepare.ts";
import { normalizeRelativePath, pathFoldKey } from "../../kernel/content-tree/paths.ts";
import { describeProblems, type Problem } from "../../kernel/content-tree/problems.ts";
import { blocksPublication, type SafetyReport } from "../skills/safety.ts";

export interface JsonFile {
  path: string;
  content: string;
  encoding: "utf8" | "base64";
  executable: boolean;
}

/**
 * A JSON upload's files. Their paths are request fields, so an unsafe one (`..`, `%2e%2e`, `.git/`…) or
 * one that differs from an earlier file's only by case or Unicode normalisation answers 400 naming
 * `files.<i>.path` (kernel/content-tree/paths.ts); prepareSkill checks again for archives.
 */
export function filesFromJson(files: readonly JsonFile[]): TreeFile[] {
  const seen = new Map<string, string>();
  const invalid = (i: number, field: string, message: string) =>
    new AppError("validation_failed", `Invalid body: files.${i}.${field}: ${message}`, {
      details: [{ path: `files.${i}.${field}`, message }],
    });
  return files.map((f, i) => {
    const norm = normalizeRelativePath(f.path);
    if (!norm.ok) throw invalid(i, "path", `unsafe path: ${norm.message}`);
    const earlier = seen.get(pathFoldKey(norm.path));
    if (earlier !== undefined)
      throw invalid(
        i,
        "path",
        earlier === norm.path
          ? `duplicate path '${norm.path}'`
          : `duplicate path: '${f.path}' differs only by case or Unicode normalisation from '${earlier}'`,
      );
    seen.set(pathFoldKey(norm.path), norm.path);
    if (f.encoding === "utf8") return { path: f.path, bytes: new TextEncoder().encode(f.content), executable: f.executable };
    try {
      const bin = atob(f.content);
      return { path: f.path, bytes: Uint8Array.from(bin, (ch) => ch.charCodeAt(0)), executable: f.executable };
    } catch {
      throw invalid(i, "content", "not valid base64");
    }
  });
}

export async function filesFromArchive(bytes: Uint8Array): Promise<TreeFile[]> {
  const { files } = await readArchive(bytes);
  const rooted = skillRootOf(files);
  if (!rooted)
    throw new AppError("unprocessable", "Archive holds no skill: SKILL.md must be at its root or in its single top-level folder", {
      details: { problems: [{ path: "SKILL.md", message: "not found" }] },
    });
  return rooted.files;
}

export interface PublishResponse {
  name: string;
  version: string;
  created: boolean;
  source_kind: string;
  tree_hash: string;
  content_hash: string;
  safety: SafetyReport;
  warnings: Problem[];
  ignored: string[];
  r2_writes: number;
}

export async function publishSkillFiles(
  env: Env,
  workspaceId: string,
  name: string,
  files: readonly TreeFile[],
  opts: { actor: string; source: "json" | "archive"; ifCurrentVersion?: string; budget?: LockBudget },
): Promise<PublishResponse> {
  const prepared = await prepareSkill(name, files);
  if (!prepared.ok)
    throw new AppError("unprocessable", `Skill rejected: ${describeProblems(prepared.problems)}`, {
      details: { problems: prepared.problems },
    });
  const skill = prepared.skill;
  if (blocksPublication(skill.safety.level)) {
    const blocking = skill.safety.findings.filter((f) => f.level === "fail" || f.level === "critical");
    throw new AppError(
      "unprocessable",
      `Safety check failed: ${blocking[0]?.path}${blocking[0]?.line ? `:${blocking[0].line}` : ""}: ${blocking[0]?.message} (${skill.safety.level})`,
      { details: { safety: skill.safety } },
    );
  }
  // One budget for every wait below: the epoch is an RPC to the lock's own object, which a long
  // sync keeps busy, so the bound counts from the request's start, not from the lock call.
  const budget = opts.budget ?? startLockBudget(env);
  const epoch = await storeEpoch(env, workspaceId, budget);
  const stored = await beforeDeadline(budget, "store", () => storeTree(env, workspaceId, skill.files));
  const result = await runLocked(
    env,
    workspaceId,
    {
      kind: "publish_skill",
      epoch,
      input: {
        skillName: name,
        treeHash: stored.treeHash,
        contentHash: skill.contentHash,
        frontmatter: skill.frontmatter,
        provenance: { kind: "manual", source: opts.source },
        safety: skill.safety,
        fileCount: skill.files.length,
        totalBytes: skill.totalBytes,
        actor: opts.actor,
        ...(opts.ifCurrentVersion !== undefined ? { ifCurrentVersion: opts.ifCurrentVersion } : {}),
      },
    },
    "wait",
    budget,
  );
  return {
    name,
    version: result.version,
    created: result.created,
    source_kind: result.sourceKind,
    tree_hash: stored.treeHash,
    content_hash: skill.contentHash,
    safety: skill.safety,
    warnings: skill.warnings,
    ignored: skill.ignored,
    r2_writes: stored.r2Writes,
  };
}
