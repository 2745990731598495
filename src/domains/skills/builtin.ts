/**
 * Builtin skills as prepared skills: parsed, validated and hashed once per isolate, so they answer
 * the same questions (tree hash, frontmatter, files) as stored skills.
 */
import { BUILTIN_SKILLS } from "../../../skills/index.ts";
import { manifestEntriesOf, treeHashOf, type ManifestEntry, type TreeFile } from "../../kernel/content-tree/hashing.ts";
import { prepareSkill, type PreparedSkill } from "./prepare.ts";
import { describeProblems } from "../../kernel/content-tree/problems.ts";

export interface BuiltinSkill {
  skill: PreparedSkill;
  treeHash: string;
  entries: ManifestEntry[];
}

let cache: Promise<Map<string, BuiltinSkill>> | undefined;

async function load(): Promise<Map<string, BuiltinSkill>> {
  const out = new Map<string, BuiltinSkill>();
  for (const source of BUILTIN_SKILLS) {
    const files: TreeFile[] = Object.entries(source.files).map(([path, text]) => ({
      path,
      bytes: new TextEncoder().encode(text),
      executable: false,
    }));
    const prepared = await prepareSkill(source.name, files, `builtin/${source.name}`);
    // A broken builtin is a build defect, not a runtime condition.
    if (!prepared.ok) throw new Error(`builtin skill '${source.name}' is invalid: ${describeProblems(prepared.problems)}`);
    const entries = await manifestEntriesOf(prepared.skill.files);
    out.set(source.name, { skill: prepared.skill, treeHash: await treeHashOf(entries), entries });
  }
  return out;
}

export function builtinSkills(): Promise<Map<string, BuiltinSkill>> {
  cache ??= load();
  return cache;
}
