/**
 * The one token estimator of the runtime (docs/agent-loop.md, "Budgets"): about four characters per
 * token. Budgets (the system prompt's share of the context window, the history window, tool
 * descriptions) only need a consistent, cheap estimate, not a provider's exact tokenizer; keeping it
 * in one place means every budget errs the same way.
 */
import type { Message } from "../session/events.ts";

export const CHARS_PER_TOKEN = 4;

/** Estimated tokens of a text (rounded up, so a non-empty text is never free). */
export function estimateTokens(text: string): number {
  return Math.ceil(text.length / CHARS_PER_TOKEN);
}

/** The longest text (in characters) that stays within `tokens`. */
export function charsForTokens(tokens: number): number {
  return Math.max(0, Math.floor(tokens) * CHARS_PER_TOKEN);
}

/** Per-message framing a provider adds (role markers, ids): a small constant. */
const MESSAGE_OVERHEAD = 4;

/** Estimated tokens of one context message as the model is sent it (reasoning is not sent back). */
export function estimateMessageTokens(message: Message): number {
  switch (message.role) {
    case "user":
      return MESSAGE_OVERHEAD + estimateTokens(message.content);
    case "tool_result":
      return MESSAGE_OVERHEAD + estimateTokens(message.content) + estimateTokens(message.tool_call_id);
    case "assistant": {
      let tokens = MESSAGE_OVERHEAD + estimateTokens(message.text);
      for (const call of message.tool_calls) tokens += estimateTokens(call.id + call.name + (JSON.stringify(call.args) ?? ""));
      return tokens;
    }
  }
}

/** Estimated tokens of a tool declaration: name and description plus a flat allowance for its schema. */
export const TOOL_SCHEMA_ALLOWANCE = 40;
export function estimateToolTokens(tool: { name: string; description: string }): number {
  return estimateTokens(tool.name) + estimateTokens(tool.description) + TOOL_SCHEMA_ALLOWANCE;
}
