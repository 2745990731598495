import { describe, expect, it } from "vitest";
import { modelMessageSchema } from "ai";
import { EARLIER_OMITTED_TEXT, MISSING_RESULT_TEXT, toModelMessages } from "../../../src/runtime/agent/model-messages.ts";
import type { Message } from "../../../src/runtime/session/events.ts";

describe("toModelMessages", () => {
  it("converts a tool loop: user, assistant with calls, ok and error results, final answer", () => {
    const messages: Message[] = [
      { role: "user", content: "say hi twice" },
      {
        role: "assistant",
        text: "Calling tools.",
        reasoning: "private thoughts",
        tool_calls: [
          { id: "c1", name: "echo", args: { text: "hi" } },
          { id: "c2", name: "echo", args: { text: 5 } },
        ],
      },
      { role: "tool_result", tool_call_id: "c1", tool_name: "echo", content: "hi", is_error: false },
      { role: "tool_result", tool_call_id: "c2", tool_name: "echo", content: "Error (invalid_arguments): …", is_error: true },
      { role: "assistant", text: "hi hi", tool_calls: [] },
      { role: "user", content: "thanks" },
    ];
    const out = toModelMessages(messages);
    expect(out).toEqual([
      { role: "user", content: "say hi twice" },
      {
        role: "assistant",
        content: [
          { type: "text", text: "Calling tools." },
          { type: "tool-call", toolCallId: "c1", toolName: "echo", input: { text: "hi" } },
          { type: "tool-call", toolCallId: "c2", toolName: "echo", input: { text: 5 } },
        ],
      },
      {
        role: "tool",
        content: [
          { type: "tool-result", toolCallId: "c1", toolName: "echo", output: { type: "text", value: "hi" } },
          {
            type: "tool-result",
            toolCallId: "c2",
            toolName: "echo",
            output: { type: "error-text", value: "Error (invalid_arguments): …" },
          },
        ],
      },
      { role: "assistant", content: [{ type: "text", text: "hi hi" }] },
      { role: "user", content: "thanks" },
    ]);
    for (const m of out) expect(modelMessageSchema.safeParse(m).success).toBe(true);
  });

  it("gives a call without a recorded result an error result, before the next message", () => {
    const out = toModelMessages([
      { role: "user", content: "go" },
      {
        role: "assistant",
        text: "",
        tool_calls: [
          { id: "c1", name: "echo", args: { text: "x" } },
          { id: "c2", name: "echo", args: {} },
        ],
      },
      { role: "tool_result", tool_call_id: "c2", tool_name: "echo", content: "done", is_error: false },
      { role: "user", content: "what happened?" },
    ]);
    expect(out[1]).toEqual({
      role: "assistant",
      content: [
        { type: "tool-call", toolCallId: "c1", toolName: "echo", input: { text: "x" } },
        { type: "tool-call", toolCallId: "c2", toolName: "echo", input: {} },
      ],
    });
    expect(out[2]).toEqual({
      role: "tool",
      content: [
        { type: "tool-result", toolCallId: "c2", toolName: "echo", output: { type: "text", value: "done" } },
        { type: "tool-result", toolCallId: "c1", toolName: "echo", output: { type: "error-text", value: MISSING_RESULT_TEXT } },
      ],
    });
    expect(out[3]).toEqual({ role: "user", content: "what happened?" });
  });

  it("closes a trailing tool turn whose results are missing", () => {
    const out = toModelMessages([
      { role: "user", content: "go" },
      { role: "assistant", text: "", tool_calls: [{ id: "c9", name: "echo", args: {} }] },
    ]);
    expect(out).toHaveLength(3);
    expect(out[2]).toMatchObject({ role: "tool", content: [{ toolCallId: "c9", output: { type: "error-text" } }] });
  });

  it("drops results whose call is not in the context and assistant messages with nothing in them", () => {
    const out = toModelMessages([
      { role: "tool_result", tool_call_id: "ghost", tool_name: "echo", content: "orphan", is_error: false },
      { role: "user", content: "hi" },
      { role: "assistant", text: "", reasoning: "only thinking", tool_calls: [] },
      { role: "tool_result", tool_call_id: "ghost2", tool_name: "echo", content: "orphan", is_error: false },
    ]);
    expect(out).toEqual([{ role: "user", content: "hi" }]);
  });

  it("never sends a call's result twice", () => {
    const out = toModelMessages([
      { role: "assistant", text: "", tool_calls: [{ id: "c1", name: "echo", args: {} }] },
      { role: "tool_result", tool_call_id: "c1", tool_name: "echo", content: "first", is_error: false },
      { role: "tool_result", tool_call_id: "c1", tool_name: "echo", content: "second", is_error: false },
    ]);
    expect(out[2]).toEqual({
      role: "tool",
      content: [{ type: "tool-result", toolCallId: "c1", toolName: "echo", output: { type: "text", value: "first" } }],
    });
  });

  it("opens a window that starts mid-turn with a user message saying earlier messages are left out", () => {
    const out = toModelMessages([
      { role: "assistant", text: "", tool_calls: [{ id: "c1", name: "echo", args: {} }] },
      { role: "tool_result", tool_call_id: "c1", tool_name: "echo", content: "ok", is_error: false },
      { role: "assistant", text: "done", tool_calls: [] },
    ]);
    expect(out[0]).toEqual({ role: "user", content: EARLIER_OMITTED_TEXT });
    expect(out.map((m) => m.role)).toEqual(["user", "assistant", "tool", "assistant"]);
    expect(toModelMessages([{ role: "user", content: "hi" }])).toEqual([{ role: "user", content: "hi" }]);
  });
});
