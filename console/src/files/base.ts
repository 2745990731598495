/**
 * Which tree the Files panel diffs against by default (docs/workspace.md, "Console"): the tree left by
 * the first file-changing call that was a `git clone` — a `bash` command starting with `git clone`, a
 * `git` tool whose command is `clone …`, or a `git_clone`-like tool — so the diff shows what the agent
 * changed in the repository; else the session's first workspace tree. Pure, so it is unit-tested
 * (test/console/files.pure.test.ts).
 */

/** A file-changing event as `GET /api/sessions/:id/file-changes` names it. */
export interface FileChangeLike {
  event_id: string;
  tool_name: string;
  /** The call's `command` argument (`bash`), or null. */
  command: string | null;
}

const CLONE_TOOL = /^(git[_-]?)?clone(_repo(sitory)?)?$/i;
// `git clone …`, also after a leading `cd <dir> &&` or with git's own options first (`git -c x=y clone`).
const CLONE_COMMAND = /^\s*(cd\s+\S+\s*&&\s*)?git(\s+-c\s+\S+)*\s+clone\b/;

export function isCloneCall(change: FileChangeLike): boolean {
  if (CLONE_TOOL.test(change.tool_name)) return true;
  if (change.command === null) return false;
  if (change.tool_name === "git") return /^\s*clone\b/.test(change.command) || CLONE_COMMAND.test(change.command);
  return CLONE_COMMAND.test(change.command);
}

/** The event whose tree is the default diff base, or null when nothing changed files yet. */
export function defaultBase(changes: readonly FileChangeLike[]): string | null {
  return (changes.find(isCloneCall) ?? changes[0])?.event_id ?? null;
}
