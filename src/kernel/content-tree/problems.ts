/**
 * A rejection reason that says what and where: the file (package- or skill-relative path) and, when
 * it is about a structured document, the field (`frontmatter.name`, `skills[0].path`).
 */
export interface Problem {
  path: string;
  field?: string;
  message: string;
}

export function problem(path: string, message: string, field?: string): Problem {
  return field === undefined ? { path, message } : { path, field, message };
}

/** One line per problem, for error messages: `skills/x/SKILL.md: frontmatter.name: must be …`. */
export function describeProblems(problems: readonly Problem[], max = 3): string {
  const shown = problems.slice(0, max).map((p) => [p.path, p.field, p.message].filter(Boolean).join(": "));
  const more = problems.length > max ? ` (and ${problems.length - max} more)` : "";
  return shown.join("; ") + more;
}
