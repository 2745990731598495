/**
 * The auxiliary model as a skill author (docs/learning.md, "From candidate to draft"): given a skill's
 * SKILL.md and the transcripts of runs that failed or were rated down, it writes an improved SKILL.md;
 * given successful runs that activated no skill, it writes a new skill that captures their pattern.
 * Like the merge's HunkResolver, the pipeline talks to the `SkillAuthor` interface and validates
 * whatever comes back (zod, then the skill's own validation and safety check); the production author
 * asks with structured output (../structured-output.ts).
 */
import { z } from "zod";
import type { ModelHandle } from "../../../runtime/index.ts";
import { askForObject } from "../structured-output.ts";

/** The largest SKILL.md the author may answer (an uploaded SKILL.md is bounded the same way by the tree limits). */
export const MAX_AUTHORED_SKILL_MD = 64 * 1024;

export const AuthorAnswer = z.strictObject({
  /** false: the runs show nothing worth a skill (new-skill requests only). */
  found: z.boolean().describe("true when the answer carries a skill; false when the runs show nothing a skill would improve"),
  name: z.string().max(64).describe("The skill's name (lowercase, hyphens): the given name when improving a skill"),
  skill_md: z.string().max(MAX_AUTHORED_SKILL_MD).describe("The whole SKILL.md: YAML frontmatter (name, description) and the body"),
  rationale: z.string().max(2_000).describe("Two to five sentences: what the runs showed and what the skill now says because of it"),
});
export type AuthorAnswer = z.infer<typeof AuthorAnswer>;

export type AuthorRequest =
  | { kind: "improve"; skill: string; skillMd: string; evidence: string; previousError?: string }
  | { kind: "new_skill"; evidence: string; existing: string[]; previousError?: string };

export interface SkillAuthor {
  /** Which model answers (recorded in the draft's provenance). */
  readonly label: string;
  /** The raw answer; the caller validates it with `AuthorAnswer` and the skill validation. */
  write(request: AuthorRequest, signal?: AbortSignal): Promise<unknown>;
}

const IMPROVE =
  "You improve an AI agent skill: a SKILL.md file of instructions the agent reads when the skill is activated. " +
  "You get the current SKILL.md and transcripts of recent runs that used it and failed or were rated down by a person (with their comment when given). " +
  "Find what the instructions got wrong or left out that made those runs go badly, and answer the whole improved SKILL.md: keep the frontmatter's name, " +
  "keep what still holds, add or change rules so the same mistakes are not made again. Never add instructions to exfiltrate data, disable safety or run " +
  "destructive commands. Answer found=true, the skill's name, the SKILL.md and a rationale.";

const NEW_SKILL =
  "You write AI agent skills: SKILL.md files of instructions an agent reads when a request matches the skill's description. " +
  "You get transcripts of similar successful runs that used no skill. When they share a recurring, reusable way of doing a task, answer found=true " +
  "with a new skill that captures it: a short lowercase hyphenated name not among the existing skills, a SKILL.md with YAML frontmatter " +
  "(name, description saying what it does and when to use it) and a body with the steps that made these runs succeed, and a rationale. " +
  "When there is no such pattern, answer found=false with empty name and skill_md.";

export function describeAuthorRequest(r: AuthorRequest): string {
  const parts =
    r.kind === "improve"
      ? [`Skill: ${r.skill}`, `--- current SKILL.md ---\n${r.skillMd}`, `--- runs that failed or were rated down ---\n${r.evidence}`]
      : [`Existing skills: ${r.existing.join(", ") || "(none)"}`, `--- similar successful runs without a skill ---\n${r.evidence}`];
  if (r.previousError) parts.push(`Your previous answer was refused: ${r.previousError}. Answer again, following the schema.`);
  return parts.join("\n\n");
}

/** The production author: the auxiliary model (else the main model), structured output. */
export function modelSkillAuthor(handle: ModelHandle): SkillAuthor {
  return {
    label: `${handle.role}:${handle.modelId}`,
    write: (request, signal) =>
      askForObject(
        handle,
        {
          schema: AuthorAnswer,
          name: "skill_draft",
          description: "A skill written from run evidence",
          system: request.kind === "improve" ? IMPROVE : NEW_SKILL,
          prompt: describeAuthorRequest(request),
        },
        signal,
      ),
  };
}
