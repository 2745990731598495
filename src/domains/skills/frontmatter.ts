/**
 * SKILL.md frontmatter per the Agent Skills specification: `name` (1–64 lowercase letters, digits
 * and single hyphens, equal to the skill's folder), `description` (1–1024 chars; up to 4096 tolerated
 * with a warning, as real published skills go over), optional `license`,
 * `compatibility` (≤ 500 chars), `metadata` (string → string) and `allowed-tools`. Claude Code's own
 * keys are tolerated silently; other unknown keys are tolerated with a warning. Parsed with `yaml`
 * (YAML 1.2 core schema, duplicate keys rejected) so block scalars such as `|-` work as written.
 */
import { unstorableText } from "../../kernel/stored-text.ts";
import { parseDocument } from "yaml";
import { normalizeSkillMd } from "../../kernel/content-tree/hashing.ts";
import { problem, type Problem } from "../../kernel/content-tree/problems.ts";

export const SKILL_NAME_RE = /^[a-z0-9]+(-[a-z0-9]+)*$/;
/** The specification's description limit (over it: a warning) and Beaver's hard limit (over it: an error). */
export const SPEC_DESCRIPTION = 1024;
export const MAX_DESCRIPTION = 4096;

const SPEC_KEYS = new Set(["name", "description", "license", "compatibility", "metadata", "allowed-tools"]);
/** Keys Claude Code reads from SKILL.md (https://code.claude.com/docs/en/skills). */
const CLAUDE_CODE_KEYS = new Set([
  "argument-hint",
  "disable-model-invocation",
  "user-invocable",
  "model",
  "context",
  "agent",
  "hooks",
  "version",
  "when_to_use",
  "effort",
  "paths",
  "shell",
  "mode",
]);

export type Frontmatter = Record<string, unknown> & { name: string; description: string };

export type ParsedSkillMd =
  { ok: true; frontmatter: Frontmatter; body: string; warnings: Problem[] } | { ok: false; errors: Problem[]; warnings: Problem[] };

/**
 * Parse and validate a SKILL.md. `file` is the path used in messages; `folderName` is the skill's
 * folder (its Beaver name), which `name` must equal.
 */
export function parseSkillMd(bytes: Uint8Array, file: string, folderName: string): ParsedSkillMd {
  let text: string;
  try {
    text = normalizeSkillMd(bytes);
  } catch {
    return { ok: false, errors: [problem(file, "SKILL.md is not valid UTF-8")], warnings: [] };
  }
  const match = /^---\n([\s\S]*?)\n?---(?:\n|$)/.exec(text);
  if (!match)
    return {
      ok: false,
      errors: [problem(file, "missing YAML frontmatter (the file must start with a '---' line and close it with another)", "frontmatter")],
      warnings: [],
    };
  const doc = parseDocument(match[1] ?? "", { uniqueKeys: true, prettyErrors: false });
  if (doc.errors.length > 0) {
    const first = doc.errors[0];
    const line = first?.linePos?.[0]?.line;
    return {
      ok: false,
      errors: [
        problem(file, `invalid YAML${line ? ` at frontmatter line ${line}` : ""}: ${first?.message.split("\n")[0] ?? ""}`, "frontmatter"),
      ],
      warnings: [],
    };
  }
  const data: unknown = doc.toJS();
  if (data === null || typeof data !== "object" || Array.isArray(data)) {
    return { ok: false, errors: [problem(file, "frontmatter must be a YAML mapping", "frontmatter")], warnings: [] };
  }
  const fm = data as Record<string, unknown>;
  const errors: Problem[] = [];
  const warnings: Problem[] = [];
  const err = (field: string, message: string) => errors.push(problem(file, message, `frontmatter.${field}`));

  const name = fm.name;
  if (typeof name !== "string" || name.length === 0) err("name", "required string");
  else if (name.length > 64) err("name", `must be at most 64 characters (has ${name.length})`);
  else if (!SKILL_NAME_RE.test(name))
    err("name", `'${name}' must be lowercase letters, digits and single hyphens, not starting or ending with a hyphen`);
  else if (name !== folderName) err("name", `'${name}' must equal the skill's folder name '${folderName}'`);

  const description = fm.description;
  if (typeof description !== "string" || description.trim().length === 0) err("description", "required non-empty string");
  else if (unstorableText(description)) err("description", unstorableText(description)!);
  else if (description.length > MAX_DESCRIPTION)
    err("description", `must be at most ${MAX_DESCRIPTION} characters (has ${description.length})`);
  else if (description.length > SPEC_DESCRIPTION) {
    // Real published skills exceed the specification's 1024 (anthropics/skills' claude-api has 1068):
    // accept them as they are, say so, and keep a hard bound.
    warnings.push(
      problem(
        file,
        `is ${description.length} characters, over the Agent Skills limit of ${SPEC_DESCRIPTION}; agents may truncate it`,
        "frontmatter.description",
      ),
    );
  }

  if (fm.license !== undefined && typeof fm.license !== "string") err("license", "must be a string");
  if (fm.compatibility !== undefined) {
    if (typeof fm.compatibility !== "string" || fm.compatibility.length === 0) err("compatibility", "must be a non-empty string");
    else if (fm.compatibility.length > 500) err("compatibility", `must be at most 500 characters (has ${fm.compatibility.length})`);
  }
  if (fm.metadata !== undefined) {
    if (fm.metadata === null || typeof fm.metadata !== "object" || Array.isArray(fm.metadata))
      err("metadata", "must be a mapping of string keys to string values");
    else {
      for (const [k, v] of Object.entries(fm.metadata)) if (typeof v !== "string") err(`metadata.${k}`, "must be a string");
    }
  }
  for (const key of TOOL_HINT_KEYS) {
    const tools = fm[key];
    if (tools !== undefined && typeof tools !== "string" && !(Array.isArray(tools) && tools.every((t) => typeof t === "string"))) {
      err(key, "must be a space-separated string (or a list of strings)");
    }
  }
  for (const key of Object.keys(fm)) {
    if (!SPEC_KEYS.has(key) && !CLAUDE_CODE_KEYS.has(key) && !TOOL_HINT_KEYS.includes(key))
      warnings.push(problem(file, "not an Agent Skills specification key; kept as is", `frontmatter.${key}`));
  }
  if (errors.length > 0) return { ok: false, errors, warnings };
  return { ok: true, frontmatter: fm as Frontmatter, body: text.slice(match[0].length), warnings };
}

/** Keys naming tools a skill wants offered (seed tools-blueprint: skill tool hints): the specification's, and `tools`. */
const TOOL_HINT_KEYS = ["allowed-tools", "tools"];

/**
 * The tool names a frontmatter's `allowed-tools` (and `tools`) names, in order and without repeats. The
 * specification's form is a space-separated string; a YAML list and Claude Code's comma-separated
 * form work too. A permission pattern (`Bash(git:*)`) names its tool (`Bash`). Names are not checked
 * here: tool assembly ignores those the run's tool set lacks (docs/agent-loop.md, "Tool assembly").
 */
export function allowedToolsOf(frontmatter: Record<string, unknown>): string[] {
  const items = TOOL_HINT_KEYS.flatMap((key) => {
    const raw = frontmatter[key];
    return typeof raw === "string"
      ? (raw.match(/[^\s,(]+(?:\([^)]*\))?/g) ?? [])
      : Array.isArray(raw)
        ? raw.filter((t): t is string => typeof t === "string")
        : [];
  });
  const names = items.map((t) => t.replace(/\(.*$/s, "").trim()).filter((t) => t.length > 0);
  return [...new Set(names)].slice(0, 64);
}
