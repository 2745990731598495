/**
 * Context size (docs/agent-loop.md, "Context size"; issue 20 item 6): the last reported usage plus an
 * estimate of what came after it (pi-mono's estimateContextTokens), never usage from before a
 * compaction, and the character estimate when nothing reported usage.
 */
import { describe, expect, it } from "vitest";
import type { AssistantMessage } from "../../../src/runtime/session/events.ts";
import { contextSize } from "../../../src/runtime/agent/context-size.ts";
import { estimateMessageTokens } from "../../../src/runtime/agent/tokens.ts";
import { buildContext } from "../../../src/runtime/session/build-context.ts";
import { shouldCompact, usageAnchor } from "../../../src/runtime/session/compaction.ts";
import { LogBuilder } from "../../support/log-builder.ts";

const usage = (input: number, output: number) => ({ input_tokens: input, output_tokens: output, total_tokens: input + output });

function answered(log: LogBuilder, text: string, u = usage(5_000, 200)): AssistantMessage {
  const message: AssistantMessage = { role: "assistant", text, tool_calls: [], usage: u };
  log.message(message);
  return message;
}

describe("contextSize", () => {
  it("anchors on the newest reported usage and estimates only the messages after it", () => {
    const log = new LogBuilder();
    log.user("short question");
    answered(log, "short answer", usage(1_000, 50));
    log.user("next");
    const anchor = answered(log, "the latest answer");
    const after = log.user("a follow-up with some text");
    const messages = buildContext(log.tree, log.leaf);
    expect(usageAnchor(log.tree, log.leaf)).toBe(anchor);
    const size = contextSize(messages, { fixedTokens: 700, anchor: usageAnchor(log.tree, log.leaf) });
    const trailing = estimateMessageTokens(after.message);
    expect(size).toEqual({ tokens: 5_200 - 700 + trailing, source: "usage", usage_tokens: 5_200, trailing_tokens: trailing });
    // Characters alone see a tiny history: the provider's count is what decides a compaction.
    const estimate = contextSize(messages, { fixedTokens: 700 });
    expect(estimate.source).toBe("estimate");
    expect(estimate.tokens).toBeLessThan(100);
    expect(shouldCompact(estimate.tokens, 6_000, 0.5)).toBe(false);
    expect(shouldCompact(size.tokens, 6_000, 0.5)).toBe(true);
  });

  it("ignores usage reported before the newest compaction, and failed or empty usage", () => {
    const log = new LogBuilder();
    log.user("old");
    answered(log, "old answer", usage(90_000, 10));
    log.compact("SUMMARY");
    log.user("after the compaction");
    expect(usageAnchor(log.tree, log.leaf)).toBeNull();
    const failed: AssistantMessage = {
      role: "assistant",
      text: "x",
      tool_calls: [],
      usage: usage(9_000, 1),
      error: { code: "e", message: "m" },
    };
    log.message(failed);
    log.message({ role: "assistant", text: "y", tool_calls: [], usage: usage(0, 0) });
    expect(usageAnchor(log.tree, log.leaf)).toBeNull();
    const messages = buildContext(log.tree, log.leaf);
    expect(contextSize(messages, { fixedTokens: 0, anchor: failed }).source).toBe("estimate");
  });

  it("never counts the anchored part below its own message's estimate, and ignores an anchor outside the messages", () => {
    const log = new LogBuilder();
    log.user("q");
    const anchor = answered(log, "z".repeat(4_000), usage(10, 10));
    const messages = buildContext(log.tree, log.leaf);
    expect(contextSize(messages, { fixedTokens: 5_000, anchor }).tokens).toBe(estimateMessageTokens(anchor));
    const stranger: AssistantMessage = { ...anchor };
    expect(contextSize(messages, { fixedTokens: 0, anchor: stranger }).source).toBe("estimate");
  });
});
