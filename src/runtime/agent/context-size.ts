/**
 * How many tokens a run's context takes (docs/agent-loop.md, "Context size"), after pi-mono's
 * `estimateContextTokens` (packages/coding-agent/src/core/compaction/compaction.ts): the provider's
 * own count from the newest step that reported `usage` — what the model really read plus what it
 * wrote — and the character estimate (tokens.ts) only for the messages after that step. A history
 * full of code or non-Latin text is then measured by the provider's tokenizer, not by four
 * characters a token; without any reported usage the estimate alone is used.
 *
 * Pure: the caller says which assistant message may anchor the count (`anchor`; the session side
 * picks the newest one since the last compaction, whose usage still describes the kept context).
 */
import type { AssistantMessage, Message, Usage } from "../session/events.ts";
import { estimateMessageTokens } from "./tokens.ts";

export interface ContextSize {
  /** Tokens of the messages (the system prompt, tools and skill messages — `fixedTokens` — taken out). */
  tokens: number;
  /** `usage`: anchored on a step's reported usage; `estimate`: characters only. */
  source: "usage" | "estimate";
  /** The anchoring step's reported context (input plus output), when `source` is `usage`. */
  usage_tokens?: number;
  /** Estimated tokens of the messages after the anchor (all messages when `source` is `estimate`). */
  trailing_tokens: number;
}

/** The context a step's usage reports: what the model read plus what it wrote (input includes cached tokens). */
export function usageContextTokens(usage: Usage): number {
  return usage.total_tokens > 0 ? usage.total_tokens : usage.input_tokens + usage.output_tokens;
}

/** Whether an assistant message's usage can anchor a count: reported, non-zero, not a failed step's. */
export function anchorsUsage(message: Message): message is AssistantMessage & { usage: Usage } {
  return (
    message.role === "assistant" && message.usage !== undefined && message.error === undefined && usageContextTokens(message.usage) > 0
  );
}

/**
 * The context size of `messages`. `fixedTokens` is what the same requests carried besides the
 * messages (system prompt, tool declarations, skill messages), taken out of a usage-anchored count
 * so the result compares with a history budget; it never goes below the estimate of the anchor's own
 * message. `anchor` must be one of `messages` (by identity); absent or not found, characters decide.
 */
export function contextSize(messages: readonly Message[], opts: { fixedTokens: number; anchor?: AssistantMessage | null }): ContextSize {
  const at = opts.anchor ? messages.lastIndexOf(opts.anchor) : -1;
  if (at < 0 || !anchorsUsage(messages[at]!)) {
    const tokens = messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
    return { tokens, source: "estimate", trailing_tokens: tokens };
  }
  const anchor = messages[at] as AssistantMessage & { usage: Usage };
  const reported = usageContextTokens(anchor.usage);
  let trailing = 0;
  for (let i = at + 1; i < messages.length; i++) trailing += estimateMessageTokens(messages[i]!);
  const upTo = Math.max(estimateMessageTokens(anchor), reported - Math.max(0, opts.fixedTokens));
  return { tokens: upTo + trailing, source: "usage", usage_tokens: reported, trailing_tokens: trailing };
}
