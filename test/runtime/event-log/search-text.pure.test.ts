// searchableText: what each event type contributes to the D1 full-text index.
import { describe, expect, it } from "vitest";
import { HIDDEN_TYPES } from "../../../src/runtime/session/events.ts";
import { previewText, searchableText } from "../../../src/runtime/session/event-handlers.ts";
import { samples } from "../../support/log-samples.ts";

describe("searchableText", () => {
  it("indexes the text of messages, custom messages and compaction summaries, never tool output", () => {
    expect(searchableText(samples.message)).toBe("hello there");
    expect(searchableText(samples.custom_message)).toContain("user prefers tabs");
    expect(searchableText(samples.compact)).toBe("we fixed the bug");
    const result = {
      ...samples.message,
      message: { role: "tool_result" as const, tool_call_id: "c", tool_name: "grep", content: "src/a.ts:1", is_error: false },
    };
    expect(searchableText(result)).toBeNull();
    expect(previewText(result)).toBe("src/a.ts:1");
  });

  it("indexes an assistant's text and its error, not its reasoning", () => {
    const assistant = {
      ...samples.message,
      message: {
        role: "assistant" as const,
        text: "Partial answer",
        reasoning: "secret thoughts",
        tool_calls: [],
        error: { code: "provider_error", message: "stream cut" },
      },
    };
    expect(searchableText(assistant)).toBe("Partial answer\nstream cut");
    const onlyError = { ...assistant, message: { ...assistant.message, text: "" } };
    expect(searchableText(onlyError)).toBe("stream cut");
  });

  it("gives null for events without text and for whitespace-only text", () => {
    for (const type of ["rewind", "branch", "channel_inject", "session_info", "custom"] as const) {
      expect(searchableText(samples[type])).toBeNull();
    }
    expect(searchableText({ ...samples.message, message: { role: "user", content: "  \n " } })).toBeNull();
    expect(
      searchableText({ ...samples.message, message: { role: "assistant", text: "", tool_calls: [{ id: "c", name: "ls", args: {} }] } }),
    ).toBeNull();
  });

  it("never indexes hidden run facts", () => {
    for (const type of HIDDEN_TYPES) expect(searchableText(samples[type])).toBeNull();
  });
});
