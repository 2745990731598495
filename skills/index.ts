/**
 * Builtin skills shipped inside the Worker bundle. They resolve after every active workspace skill,
 * so a workspace can shadow one by publishing a skill of the same name. Kept as string modules so
 * the bundle needs no loader rules; each entry is a whole skill folder (path → text).
 */
export interface BuiltinSkillSource {
  name: string;
  files: Record<string, string>;
}

const SKILL_AUTHORING = `---
name: beaver-skill-authoring
description: How to write, version and publish a skill in Beaver — SKILL.md frontmatter rules, supporting files, the static safety check, plugins and rollback. Use when asked to create, fix or review a skill or a plugin package.
license: Apache-2.0
---

# Writing Beaver skills

A skill is a folder with a \`SKILL.md\` at its root and any supporting files beside it
(templates, references, scripts). Beaver stores every published version immutably; the
workspace sees exactly one current version of each skill.

## SKILL.md

Start with YAML frontmatter:

- \`name\`: 1-64 lowercase letters, digits and single hyphens, equal to the folder name.
- \`description\`: what the skill does and when to use it (at most 1024 characters).
- Optional: \`license\`, \`compatibility\` (at most 500 characters), \`metadata\` (string values),
  \`allowed-tools\`.

Keep the body focused: instructions first, then references to supporting files by relative path.

## What blocks publication

The static safety check runs on every file. It fails on hidden or bidirectional Unicode,
instruction-override phrases, credentials (private keys, cloud and API tokens), destructive or
download-and-execute shell patterns in scripts, native executables and oversize files.
Fix the reported file and line, then publish again.

## Versions and plugins

- Each publish creates the next version (v0001, v0002, ...). Rolling back moves the current pointer;
  nothing is deleted.
- Plugin skills are mirrored into the same store. Local edits stay local: a plugin update that
  meets local changes becomes a three-way merge candidate instead of overwriting them.
`;

export const BUILTIN_SKILLS: readonly BuiltinSkillSource[] = [{ name: "beaver-skill-authoring", files: { "SKILL.md": SKILL_AUTHORING } }];
