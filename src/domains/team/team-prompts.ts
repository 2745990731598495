/**
 * What each member of a team run is told (docs/delegation.md, "Teams"): pure text builders for the
 * pipeline's hand-over, a discussion's turns and the coordinator's verdict, and reading that verdict.
 */
import type { Team } from "./teams.ts";

/** A discussion member's or the coordinator's view of what was said so far. */
export interface Said {
  member: string;
  round: number;
  text: string;
}

/** The pipeline step after the first gets the original request and the previous member's output. */
export function pipelineMessage(message: string, previous: { member: string; text: string } | null): string {
  if (!previous) return message;
  return `## Original request\n${message}\n\n## Output of the previous step (${previous.member})\n${previous.text}`;
}

export function pipelineInstructions(team: Team, step: number): string {
  return [
    `## Team ${team.name} (pipeline)`,
    `You are step ${step + 1} of ${team.members.length} (${team.members.join(" → ")}). Your answer is handed to the next step as it is.`,
  ].join("\n");
}

function transcript(said: readonly Said[]): string {
  return said.length === 0 ? "(nobody has spoken yet)" : said.map((s) => `**${s.member}** (round ${s.round}): ${s.text}`).join("\n\n");
}

export function discussionMessage(message: string, said: readonly Said[]): string {
  return `## Topic\n${message}\n\n## Discussion so far\n${transcript(said)}`;
}

export function discussionInstructions(team: Team, member: string, round: number, maxRounds: number): string {
  return [
    `## Team ${team.name} (discussion)`,
    `You are ${member}, one of ${team.members.join(", ")}; this is round ${round} of at most ${maxRounds}.`,
    "Add your view in a few sentences; build on what the others said.",
  ].join("\n");
}

export function verdictInstructions(team: Team, round: number, maxRounds: number): string {
  return [
    `## Team ${team.name}: you coordinate the discussion`,
    `Round ${round} of at most ${maxRounds} is over. If the discussion has reached an answer, reply with DONE on the first line and the final answer after it.`,
    "Otherwise reply CONTINUE (optionally with what the members should address next).",
  ].join("\n");
}

/** The coordinator's verdict: done (with its final answer) or not. */
export function readVerdict(text: string): { done: true; answer: string } | { done: false } {
  const match = /^\s*DONE\b[:\s-]*([\s\S]*)$/i.exec(text);
  return match ? { done: true, answer: match[1]!.trim() } : { done: false };
}

export function coordinatorInstructions(team: Team): string {
  return [
    `## Team ${team.name}: you coordinate`,
    `Assign work to the team's members with the \`delegate\` tool, setting each task's \`agent\` to one of: ${team.members.join(", ")}.`,
    "Then combine their answers into the final answer.",
  ].join("\n");
}
