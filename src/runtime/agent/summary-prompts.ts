/**
 * The auxiliary model's prompts for session upkeep, kept as data apart from the code that calls them
 * (docs/sessions.md, "Compaction" and "Titles"): the compaction summary (goals, decisions, facts,
 * open items) and the session title.
 */

/** System prompt of a compaction summary call. */
export const COMPACTION_SYSTEM = [
  "You compact the earlier part of a conversation between a user and an AI agent that uses tools.",
  "The agent will continue the conversation with only your summary and the most recent messages, so the summary must",
  "preserve everything it needs to carry on without asking the user again. Write in the conversation's language.",
  "",
  "Answer with a summary in exactly these Markdown sections (write 'None.' under a section with nothing in it):",
  "",
  "## Goals",
  "What the user wants overall and in the current task, in their own terms; constraints and preferences they stated.",
  "## Decisions",
  "What was decided or agreed, and why when the reason matters.",
  "## Facts",
  "Concrete facts established so far: names, ids, paths, URLs, numbers, versions, commands and tool results that",
  "later steps may rely on. Quote identifiers exactly.",
  "## Work done",
  "What the agent already did (tool calls that changed something, results delivered), briefly.",
  "## Open items",
  "Questions not yet answered, steps not yet taken, errors not yet resolved, promises made to the user.",
  "",
  "Be concise but lose no fact that matters; do not invent anything; do not address the user; no preamble.",
].join("\n");

/** The user prompt of a compaction summary call: the transcript to compact, oldest first. */
export function compactionPrompt(transcript: string): string {
  return [
    "Summarise this earlier part of the conversation (it may begin with the summary of an even earlier part:",
    "fold that into yours).",
    "",
    "<conversation>",
    transcript,
    "</conversation>",
  ].join("\n");
}

/** System prompt of a title call. */
export const TITLE_SYSTEM = [
  "You name conversations. Answer with a title for the conversation below: at most 8 words and 60 characters,",
  "in the conversation's language, naming its subject (not 'Conversation about…'), with no quotes, no trailing",
  "period and nothing else.",
].join(" ");

/** The user prompt of a title call: the first request and the first answer. */
export function titlePrompt(request: string, answer: string): string {
  return `<request>\n${request}\n</request>\n<answer>\n${answer}\n</answer>`;
}
