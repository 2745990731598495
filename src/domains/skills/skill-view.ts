/**
 * `skill_view({ name, path? })`: the agent reads a skill's SKILL.md or one of its supporting files, at
 * the skill's CURRENT version (or the tree a run's `skill_overrides` gives it: an evaluated draft), from its own workspace's catalog (active skills, then unshadowed
 * builtins; never a disabled skill or another workspace's). Text comes back as it is, up to 64 KiB
 * (truncated with a note); binary files are described, not dumped; an unknown name or path lists what
 * exists. Registered for every tool set at the composition root (docs/skills-and-plugins.md, "Skills in a run").
 */
import { z } from "zod";
import { defineTool, fail, ok } from "../../runtime/index.ts";
import { readBlob, requireManifest } from "../../storage/blob/store.ts";
import { normalizeRelativePath } from "../../kernel/content-tree/paths.ts";
import { builtinSkills } from "./builtin.ts";
import { loadCatalog, withOverrides, type LoadedSkill } from "./provider.ts";
import { buildIndex, lexicalRecall } from "./selection.ts";
import type { Env } from "../../storage/env.ts";

/** Text beyond this many bytes is cut, with a note saying so. */
export const SKILL_VIEW_MAX_BYTES = 64 * 1024;

interface FileRef {
  path: string;
  size: number;
  read(): Promise<Uint8Array | null>;
}

async function filesOf(env: Env, workspaceId: string, skill: LoadedSkill): Promise<FileRef[]> {
  if (skill.treeHash === null) {
    const files = (await builtinSkills()).get(skill.name)?.skill.files ?? [];
    return files.map((f) => ({ path: f.path, size: f.bytes.byteLength, read: async () => f.bytes }));
  }
  const manifest = await requireManifest(env, workspaceId, skill.treeHash);
  return manifest.files.map((f) => ({
    path: f.path,
    size: f.size,
    read: async () => {
      const obj = await readBlob(env, workspaceId, f.sha256);
      return obj ? new Uint8Array(await obj.arrayBuffer()) : null;
    },
  }));
}

/** Levenshtein distance (names are at most 64 characters). */
export function editDistance(a: string, b: string): number {
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    for (let j = 1; j <= b.length; j++) cur[j] = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
    prev = cur;
  }
  return prev[b.length]!;
}

/** Up to five catalog names close to `name`: by edit distance, then by BM25 over names and descriptions. */
export function closeMatches(catalog: readonly LoadedSkill[], name: string): string[] {
  const near = catalog
    .map((s) => ({ name: s.name, d: editDistance(s.name, name.toLowerCase()) }))
    .filter((x) => x.d <= Math.max(2, Math.floor(name.length / 3)))
    .sort((a, b) => a.d - b.d || a.name.localeCompare(b.name))
    .map((x) => x.name);
  const lexical = catalog.length > 0 ? lexicalRecall(buildIndex(catalog), name.replace(/[-_]/g, " ")).map((r) => r.name) : [];
  return [...new Set([...near, ...lexical])].slice(0, 5);
}

const MEDIA_TYPES: Record<string, string> = {
  png: "image/png",
  jpg: "image/jpeg",
  jpeg: "image/jpeg",
  gif: "image/gif",
  webp: "image/webp",
  pdf: "application/pdf",
  zip: "application/zip",
  gz: "application/gzip",
  woff: "font/woff",
  woff2: "font/woff2",
  ttf: "font/ttf",
};

/** The UTF-8 text of `bytes`, or null when they are binary (a NUL byte or invalid UTF-8). */
function asText(bytes: Uint8Array): string | null {
  if (bytes.subarray(0, 8192).includes(0)) return null;
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return null;
  }
}

/** Cut `text` to at most `max` UTF-8 bytes, on a character boundary. */
function cutToBytes(text: string, max: number): string {
  const bytes = new TextEncoder().encode(text);
  if (bytes.byteLength <= max) return text;
  return new TextDecoder().decode(bytes.subarray(0, max)).replace(/\uFFFD$/, "");
}

export const skillViewTool = defineTool({
  name: "skill_view",
  description:
    "Read a skill of this workspace: its SKILL.md (give only the name) or a supporting file it mentions (give its relative path, " +
    "e.g. reference/guide.md). Text is returned as is up to 64 KiB; binary files are described. Unknown names list close matches.",
  input: z.strictObject({
    name: z.string().min(1).max(64).describe("The skill's name, as listed under Skills in the system prompt"),
    path: z.string().min(1).max(500).optional().describe("A file inside the skill, relative to its folder; default SKILL.md"),
  }),
  always: true,
  idempotent: true,
  readOnly: true,
  async execute({ name, path }, ctx) {
    const catalog = withOverrides(await loadCatalog(ctx.env, ctx.workspaceId), ctx.skillOverrides);
    const skill = catalog.find((s) => s.name === name);
    if (!skill) {
      const close = closeMatches(catalog, name);
      return fail(
        "not_found",
        `No skill '${name}' in this workspace.` +
          (close.length > 0 ? ` Close matches: ${close.join(", ")}.` : " It has no skills with a similar name."),
      );
    }
    const wanted = path === undefined ? { ok: true as const, path: "SKILL.md" } : normalizeRelativePath(path);
    if (!wanted.ok) return fail("invalid_path", `Path '${path}' is not a relative path inside the skill (${wanted.message})`);
    const files = await filesOf(ctx.env, ctx.workspaceId, skill);
    const file = files.find((f) => f.path === wanted.path);
    if (!file) {
      const listing = files
        .map((f) => f.path)
        .sort()
        .slice(0, 100);
      return fail("not_found", `Skill '${name}' (${skill.version}) has no file '${wanted.path}'. Its files: ${listing.join(", ")}`);
    }
    const bytes = await file.read();
    if (!bytes) return fail("not_found", `The content of '${wanted.path}' of skill '${name}' is not available`);
    const text = asText(bytes);
    if (text === null) {
      const ext = wanted.path.split(".").pop()?.toLowerCase() ?? "";
      return ok(
        `[binary file] ${wanted.path} of skill '${name}' (${skill.version}): ${bytes.byteLength} bytes, ` +
          `type ${MEDIA_TYPES[ext] ?? "application/octet-stream"}; its content is not shown.`,
      );
    }
    let out = cutToBytes(text, SKILL_VIEW_MAX_BYTES);
    if (out.length < text.length)
      out += `\n\n[…truncated: ${wanted.path} is ${bytes.byteLength} bytes; only the first ${SKILL_VIEW_MAX_BYTES} are shown]`;
    if (wanted.path === "SKILL.md" && files.length > 1) {
      const others = files.filter((f) => f.path !== "SKILL.md").map((f) => `${f.path} (${f.size} bytes)`);
      out += `\n\n[skill '${name}' ${skill.version} also has: ${others.slice(0, 100).join(", ")}${others.length > 100 ? ", …" : ""}]`;
    }
    return ok(out);
  },
});
