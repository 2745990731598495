/**
 * Resolving the conflict hunks a line merge could not settle (docs/learning.md, "Three-way merge").
 * The merge talks to a `HunkResolver` only, so it stays pure and tests hand it a mock; the production
 * resolver asks a model with structured output (structured-output.ts). What comes back is validated by the
 * merge with `HunkAnswer`, never trusted as is.
 */
import { z } from "zod";
import type { ModelHandle } from "../../runtime/index.ts";
import { askForObject } from "./structured-output.ts";
import type { ConflictHunk } from "./text-merge.ts";

export const MERGE_DECISIONS = ["keep_local", "take_upstream", "combine"] as const;
export type MergeDecisionKind = (typeof MERGE_DECISIONS)[number];

/** What the resolver must answer: one entry per hunk id. */
export const HunkAnswer = z.object({
  hunks: z
    .array(
      z.object({
        id: z.number().int().min(0).describe("The hunk id from the request"),
        decision: z.enum(MERGE_DECISIONS).describe("keep_local, take_upstream, or combine (a text that keeps both)"),
        merged: z.string().max(64_000).describe("The merged text of this hunk (what replaces the conflict), lines ending in \\n"),
        reason: z.string().min(1).max(600).describe("One or two sentences: why"),
        confidence: z.number().min(0).max(1).describe("0..1: how sure the merged text keeps what both sides meant"),
      }),
    )
    .max(200),
});
export type HunkAnswer = z.infer<typeof HunkAnswer>;

export interface HunkRequest {
  /** The file the hunks are in (`SKILL.md`, `SKILL.md#frontmatter.description`, `docs/x.md`). */
  file: string;
  skill: string;
  hunks: readonly ConflictHunk[];
  /** Why the previous answer was refused, on the retry. */
  previousError?: string;
  /** Runs of the local version where its learned lines mattered (local-evidence.ts); SKILL.md requests only. */
  localEvidence?: string;
}

export interface HunkResolver {
  /** Which model answers (recorded with the merge decisions). */
  readonly label: string;
  /** The raw answer; the merge validates it against `HunkAnswer` and the request's hunk ids. */
  resolve(request: HunkRequest, signal?: AbortSignal): Promise<unknown>;
}

const SYSTEM =
  "You merge edits to an AI agent skill (a SKILL.md instruction file or one of its text files). " +
  "BASE is the upstream text the local copy started from. LOCAL is the current local copy: its changes are lessons learned " +
  "in this workspace and must not be lost silently. UPSTREAM is the new upstream release: its changes are new features, fixes " +
  "and safety rules. For every conflict hunk answer the merged text that keeps local learnings and adopts upstream changes; " +
  "decision is keep_local (LOCAL as is), take_upstream (UPSTREAM as is) or combine (a text with both). Answer every hunk id exactly once.";

export function describeRequest(request: HunkRequest): string {
  const parts = [`Skill: ${request.skill}\nFile: ${request.file}\n`];
  for (const h of request.hunks) {
    parts.push(
      `### Hunk ${h.id}\n--- context before ---\n${h.before}--- BASE ---\n${h.base}--- LOCAL ---\n${h.local}--- UPSTREAM ---\n${h.upstream}--- context after ---\n${h.after}`,
    );
  }
  if (request.localEvidence)
    parts.push(
      `### Evidence: runs of the LOCAL version where its learned lines mattered (keep those lines unless UPSTREAM makes them wrong)\n${request.localEvidence}`,
    );
  if (request.previousError) parts.push(`Your previous answer was refused: ${request.previousError}. Answer again, following the schema.`);
  return parts.join("\n");
}

/** The production resolver: the auxiliary model (else the main model), structured output. */
export function modelHunkResolver(handle: ModelHandle): HunkResolver {
  return {
    label: `${handle.role}:${handle.modelId}`,
    resolve: (request, signal) =>
      askForObject(
        handle,
        {
          schema: HunkAnswer,
          name: "merge_hunks",
          description: "Merged text and decision per conflict hunk",
          system: SYSTEM,
          prompt: describeRequest(request),
        },
        signal,
      ),
  };
}
