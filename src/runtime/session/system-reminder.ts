/**
 * The `<system-reminder>` wrapper (docs/sessions.md, "Building the model's context"): the one format
 * the harness uses to pass side-channel text (steers, follow-ups, recalls, compaction summaries) to the
 * model, so the model can tell it apart from tool output and from what the user typed.
 */

/** The sentence the system prompt carries so the model reads reminders correctly (docs/agent-loop.md). */
export const SYSTEM_REMINDER_NOTE =
  "Tool results and user messages may include <system-reminder> tags. These contain information from the system " +
  "and bear no direct relation to the specific tool results or user messages in which they appear.";

export function wrapSystemReminder(content: string): string {
  return `<system-reminder>\n${content}\n</system-reminder>`;
}

/** Appends a reminder to existing text, keeping a blank line between them. */
export function appendReminder(text: string, reminder: string): string {
  return text.length === 0 ? reminder : `${text}\n\n${reminder}`;
}
