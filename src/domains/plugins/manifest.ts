/**
 * Plugin manifests → declarations, as pure functions. Three shapes map to one model:
 * - `beaver.plugin.json` (Beaver's own manifest, strict);
 * - a Claude Code plugin (`.claude-plugin/plugin.json`, skills in `skills/<name>/SKILL.md`);
 * - a Claude Code marketplace (`.claude-plugin/marketplace.json`) declaring several local plugins.
 * Every problem names the manifest file and the field (docs/skills-and-plugins.md, "Plugins").
 */
import { z } from "zod";
import { storedText } from "../../kernel/stored-text.ts";
import { normalizeRelativePath } from "../../kernel/content-tree/paths.ts";
import { problem, type Problem } from "../../kernel/content-tree/problems.ts";

export const PLUGIN_ID_RE = /^[a-z0-9_-]{1,64}$/;
export const BEAVER_MANIFEST = "beaver.plugin.json";
export const CLAUDE_PLUGIN_MANIFEST = ".claude-plugin/plugin.json";
export const CLAUDE_MARKETPLACE_MANIFEST = ".claude-plugin/marketplace.json";

export type ManifestKind = "beaver" | "claude_plugin" | "claude_marketplace";

export interface DeclaredSkill {
  name: string;
  /** Folder of the skill, relative to the package root, normalised. */
  path: string;
}

export interface PluginDeclaration {
  id: string;
  name: string;
  description: string;
  version: string | null;
  manifestKind: ManifestKind;
  /** Manifest path relative to the package root. */
  manifestPath: string;
  skills: DeclaredSkill[];
  problems: Problem[];
  warnings: Problem[];
}

const idField = z.string().regex(PLUGIN_ID_RE, "must be 1-64 lowercase letters, digits, '_' or '-'");

export const BeaverManifestSchema = z.strictObject({
  schema_version: z.literal(1),
  id: idField,
  name: storedText().min(1).max(200),
  version: storedText().min(1).max(100),
  skills: z.array(z.strictObject({ name: idField, path: z.string().min(1).max(512) })).min(1, "must declare at least one skill"),
});

/** Looks into the package: which folders hold a SKILL.md. */
export interface SkillFolderFinder {
  /** Names of direct subfolders of `dir` that hold a SKILL.md. */
  children(dir: string): string[];
  /** Whether `dir` itself holds a SKILL.md. */
  isSkill(dir: string): boolean;
}

function fieldPath(path: PropertyKey[]): string {
  return path
    .map((p) => (typeof p === "number" ? `[${p}]` : `.${String(p)}`))
    .join("")
    .replace(/^\./, "");
}

function parseJson(text: string, file: string): { ok: true; value: unknown } | { ok: false; problem: Problem } {
  try {
    return { ok: true, value: JSON.parse(text) };
  } catch (e) {
    return { ok: false, problem: problem(file, `invalid JSON: ${e instanceof Error ? e.message : String(e)}`) };
  }
}

/** Resolve `rel` against folder `base` (both package-relative); null when it escapes the package. */
export function resolveInside(base: string, rel: string): string | null {
  const joined = base === "" ? rel : `${base}/${rel}`;
  const stack: string[] = [];
  for (const seg of joined.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (stack.length === 0) return null;
      stack.pop();
    } else stack.push(seg);
  }
  const norm = normalizeRelativePath(stack.join("/") || ".");
  if (!norm.ok) return norm.problem === "empty" ? "" : null;
  return norm.path;
}

function checkSkillList(skills: DeclaredSkill[], file: string, field: (i: number) => string, problems: Problem[]): void {
  const names = new Map<string, number>();
  const paths = new Map<string, number>();
  skills.forEach((s, i) => {
    if (names.has(s.name))
      problems.push(problem(file, `duplicate skill name '${s.name}' (also ${field(names.get(s.name)!)})`, `${field(i)}.name`));
    names.set(s.name, i);
    if (paths.has(s.path)) problems.push(problem(file, `duplicate skill path '${s.path}'`, `${field(i)}.path`));
    paths.set(s.path, i);
  });
}

export function parseBeaverManifest(text: string, file = BEAVER_MANIFEST): PluginDeclaration | { problems: Problem[] } {
  const json = parseJson(text, file);
  if (!json.ok) return { problems: [json.problem] };
  const parsed = BeaverManifestSchema.safeParse(json.value);
  if (!parsed.success) {
    const problems = parsed.error.issues.flatMap((i) =>
      i.code === "unrecognized_keys"
        ? i.keys.map((k) => problem(file, "unsupported key", fieldPath([...i.path, k])))
        : [problem(file, i.message, fieldPath(i.path) || "(root)")],
    );
    return { problems };
  }
  const m = parsed.data;
  const problems: Problem[] = [];
  const skills: DeclaredSkill[] = [];
  m.skills.forEach((s, i) => {
    const path = resolveInside("", s.path);
    if (path === null || path === "" || s.path.startsWith("/") || s.path.includes("\\")) {
      problems.push(problem(file, `skill path '${s.path}' must be a relative folder inside the plugin`, `skills[${i}].path`));
      return;
    }
    if (path.split("/").pop() !== s.name) {
      problems.push(problem(file, `skill folder '${path}' must be named like the skill ('${s.name}')`, `skills[${i}].path`));
      return;
    }
    skills.push({ name: s.name, path });
  });
  checkSkillList(skills, file, (i) => `skills[${i}]`, problems);
  return {
    id: m.id,
    name: m.name,
    description: "",
    version: m.version,
    manifestKind: "beaver",
    manifestPath: file,
    skills,
    problems,
    warnings: [],
  };
}

const ClaudePluginSchema = z.looseObject({
  name: storedText(),
  version: storedText().optional(),
  description: storedText().optional(),
  skills: z.union([z.string(), z.array(z.string())]).optional(),
});

const NON_SKILL_COMPONENTS = ["commands", "agents", "hooks", "mcpServers", "lspServers", "outputStyles"];

/** Skills of a Claude Code plugin rooted at `root`: `skills/*` plus any `skills` paths of plugin.json. */
function claudeSkills(root: string, extra: string[], finder: SkillFolderFinder, file: string, problems: Problem[]): DeclaredSkill[] {
  const dirs = [resolveInside(root, "skills") ?? "skills"];
  extra.forEach((p, i) => {
    const d = resolveInside(root, p);
    if (d === null) problems.push(problem(file, `path '${p}' escapes the plugin`, `skills[${i}]`));
    else dirs.push(d);
  });
  const out: DeclaredSkill[] = [];
  for (const dir of dirs) {
    // A listed path may be one skill folder or a folder of skill folders.
    const paths = finder.isSkill(dir) ? [dir] : finder.children(dir).map((n) => (dir ? `${dir}/${n}` : n));
    for (const path of paths) {
      if (!out.some((s) => s.path === path)) out.push({ name: path.split("/").pop() ?? path, path });
    }
  }
  return out;
}

export function parseClaudePlugin(text: string, root: string, finder: SkillFolderFinder): PluginDeclaration | { problems: Problem[] } {
  const file = root ? `${root}/${CLAUDE_PLUGIN_MANIFEST}` : CLAUDE_PLUGIN_MANIFEST;
  const json = parseJson(text, file);
  if (!json.ok) return { problems: [json.problem] };
  const parsed = ClaudePluginSchema.safeParse(json.value);
  if (!parsed.success) return { problems: parsed.error.issues.map((i) => problem(file, i.message, fieldPath(i.path) || "(root)")) };
  const m = parsed.data;
  const problems: Problem[] = [];
  if (!PLUGIN_ID_RE.test(m.name)) problems.push(problem(file, "must be 1-64 lowercase letters, digits, '_' or '-'", "name"));
  const warnings = NON_SKILL_COMPONENTS.filter((k) => k in m).map((k) =>
    problem(file, "ignored: Beaver plugins are declarative skill bundles", k),
  );
  const extra = m.skills === undefined ? [] : Array.isArray(m.skills) ? m.skills : [m.skills];
  const skills = claudeSkills(root, extra, finder, file, problems);
  if (skills.length === 0) problems.push(problem(file, "declares no skills (no skills/<name>/SKILL.md found)", "skills"));
  checkSkillList(skills, file, (i) => `skills[${i}]`, problems);
  return {
    id: m.name,
    name: m.name,
    description: m.description ?? "",
    version: m.version ?? null,
    manifestKind: "claude_plugin",
    manifestPath: file,
    skills,
    problems,
    warnings,
  };
}

const MarketplaceSchema = z.looseObject({
  name: storedText(),
  metadata: z.looseObject({ version: storedText().optional() }).optional(),
  plugins: z.array(
    z.looseObject({
      name: storedText(),
      source: z.unknown(),
      description: storedText().optional(),
      version: storedText().optional(),
      strict: z.boolean().optional(),
      skills: z.array(z.string()).optional(),
    }),
  ),
});

/**
 * A Claude Code marketplace: one declaration per listed plugin. Only local sources (a relative path
 * inside the package) are mirrored; remote sources are reported, never fetched.
 */
export function parseClaudeMarketplace(
  text: string,
  finder: SkillFolderFinder,
  readFile: (path: string) => string | null,
): PluginDeclaration[] | { problems: Problem[] } {
  const file = CLAUDE_MARKETPLACE_MANIFEST;
  const json = parseJson(text, file);
  if (!json.ok) return { problems: [json.problem] };
  const parsed = MarketplaceSchema.safeParse(json.value);
  if (!parsed.success) return { problems: parsed.error.issues.map((i) => problem(file, i.message, fieldPath(i.path) || "(root)")) };
  const m = parsed.data;
  return m.plugins.map((p, i) => {
    const field = `plugins[${i}]`;
    const problems: Problem[] = [];
    const warnings: Problem[] = [];
    if (!PLUGIN_ID_RE.test(p.name)) problems.push(problem(file, "must be 1-64 lowercase letters, digits, '_' or '-'", `${field}.name`));
    const base: DeclaredSkill[] = [];
    const root = typeof p.source === "string" ? resolveInside("", p.source) : null;
    if (typeof p.source !== "string")
      problems.push(problem(file, "remote plugin sources are not fetched; only paths inside the package are mirrored", `${field}.source`));
    else if (root === null) problems.push(problem(file, `source '${p.source}' escapes the package`, `${field}.source`));
    let version = p.version ?? m.metadata?.version ?? null;
    let description = p.description ?? "";
    if (root !== null) {
      if (p.strict === false && p.skills) {
        p.skills.forEach((s, j) => {
          const path = resolveInside(root, s);
          if (path === null || path === "") problems.push(problem(file, `skill path '${s}' escapes the package`, `${field}.skills[${j}]`));
          else base.push({ name: path.split("/").pop() ?? path, path });
        });
      } else {
        const manifestPath = root ? `${root}/${CLAUDE_PLUGIN_MANIFEST}` : CLAUDE_PLUGIN_MANIFEST;
        const inner = readFile(manifestPath);
        const extra: string[] = p.skills ?? [];
        if (inner !== null) {
          const decl = parseClaudePlugin(inner, root, finder);
          if ("id" in decl) {
            version = p.version ?? decl.version ?? version;
            description = description || decl.description;
            base.push(...decl.skills);
            warnings.push(...decl.warnings);
          } else problems.push(...decl.problems);
        } else if (p.strict !== false) {
          problems.push(problem(file, `strict plugin needs ${manifestPath}`, `${field}.source`));
        }
        for (const s of claudeSkills(root, extra, finder, file, problems)) if (!base.some((b) => b.path === s.path)) base.push(s);
      }
    }
    if (base.length === 0 && problems.length === 0) problems.push(problem(file, "declares no skills", `${field}.skills`));
    checkSkillList(base, file, (j) => `${field}.skills[${j}]`, problems);
    return {
      id: p.name,
      name: p.name,
      description,
      version,
      manifestKind: "claude_marketplace" as const,
      manifestPath: file,
      skills: base,
      problems,
      warnings,
    };
  });
}
