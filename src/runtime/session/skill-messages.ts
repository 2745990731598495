/**
 * Activated skills as explicit messages (seed backend-flow.md §4.5/§5.4, Hermes style; docs/agent-loop.md,
 * "Skill messages"): each SKILL.md body the run activated is its own user message, wrapped as a
 * `<system-reminder>`, placed right before the run's user message in every model step of that run. The
 * system prompt never holds a skill, so it stays the same across runs, and everything before the run's
 * message — system prompt, tool declarations, earlier runs — stays a cacheable prefix. The messages are
 * never logged: they are derived from the run's frozen bodies each step. Pure.
 */
import type { Message, UserMessage } from "./events.ts";
import { renderActivatedSkill } from "../skills.ts";
import { wrapSystemReminder } from "./system-reminder.ts";

/** One message per activated skill, in activation order. */
export function skillMessages(bodies: readonly { name: string; body: string }[] | undefined): UserMessage[] {
  return (bodies ?? []).map((b) => ({ role: "user", content: wrapSystemReminder(renderActivatedSkill(b)) }));
}

/**
 * The history with the skill messages inserted right before `anchor` (the run's user message, the same
 * object the context builder included). When the window no longer holds it, they open the history.
 */
export function withSkillMessages(history: readonly Message[], anchor: Message | undefined, skills: readonly UserMessage[]): Message[] {
  if (skills.length === 0) return [...history];
  const at = anchor === undefined ? -1 : history.indexOf(anchor);
  if (at < 0) return [...skills, ...history];
  return [...history.slice(0, at), ...skills, ...history.slice(at)];
}
