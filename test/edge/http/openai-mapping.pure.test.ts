/**
 * The pure parts of the OpenAI mapping (docs/openai-api.md): splitting a client's messages into a run,
 * the text streamed from a run's frames, response ids, and the error conversion's field names.
 */
import { describe, expect, it } from "vitest";
import { contentText, runInstructions, toRunConversation } from "../../../src/edge/http/openai/conversation.ts";
import { RunText } from "../../../src/edge/http/openai/run-text.ts";
import { parseResponseId, responseId } from "../../../src/edge/http/openai/response-id.ts";
import { openAiErrorType, paramOf } from "../../../src/edge/http/openai/errors.ts";
import type { StreamFrame } from "../../../src/runtime/session/events.ts";

const base = { session_id: "s", client_id: "c", ts: 0, run_id: "r" };
const start = (id: string, seq: number): StreamFrame => ({
  ...base,
  seq,
  persistent: false,
  type: "message_start",
  event_id: id,
  parent_id: null,
  role: "assistant",
});
const delta = (id: string, text: string, seq: number): StreamFrame => ({
  ...base,
  seq,
  persistent: false,
  type: "text_delta",
  event_id: id,
  delta: text,
});
const stored = (id: string, text: string, seq: number): StreamFrame => ({
  ...base,
  seq,
  id,
  parent_id: null,
  persistent: true,
  type: "message",
  message: { role: "assistant", text, tool_calls: [] },
});

describe("messages → one run", () => {
  const messages = [
    { role: "system" as const, text: "Be brief." },
    { role: "user" as const, text: "first" },
    { role: "assistant" as const, text: "answer" },
    { role: "developer" as const, text: "Use British spelling." },
    { role: "user" as const, text: "second" },
  ];

  it("takes the last user message as the run's, system and developer messages as instructions, the rest as history", () => {
    const conversation = toRunConversation(messages, { continuesSession: false });
    expect(conversation).toEqual({
      content: "second",
      instructions: ["Be brief.", "Use British spelling."],
      history: [
        { role: "user", text: "first" },
        { role: "assistant", text: "answer" },
      ],
    });
    const extra = runInstructions(conversation)!;
    expect(extra.indexOf("Be brief.")).toBeLessThan(extra.indexOf("Earlier conversation"));
    expect(extra).toContain("[user]\nfirst\n\n[assistant]\nanswer");
  });

  it("drops resent history when the session has it, keeps new history after a previous response", () => {
    expect(toRunConversation(messages, { continuesSession: true }).history).toEqual([]);
    expect(toRunConversation(messages, { continuesSession: true, historyIsNew: true }).history).toHaveLength(2);
    expect(runInstructions({ content: "x", instructions: [], history: [] })).toBeUndefined();
  });

  it("refuses a conversation that does not end with a user message with text", () => {
    expect(() => toRunConversation([{ role: "assistant", text: "hi" }], { continuesSession: false })).toThrow(
      /last message must come from the user/,
    );
    expect(() => toRunConversation([{ role: "user", text: "  " }], { continuesSession: false })).toThrow(/empty/);
    expect(() => toRunConversation([], { continuesSession: false })).toThrow(/last message/);
  });

  it("reads text parts and refuses any other part, naming where", () => {
    expect(
      contentText(
        [
          { type: "text", text: "a" },
          { type: "input_text", text: "b" },
        ],
        "p",
      ),
    ).toBe("ab");
    expect(contentText(null, "p")).toBe("");
    expect(() => contentText([{ type: "input_image", image_url: "x" }], "input.0.content")).toThrow(
      /input\.0\.content\.0: content part type 'input_image'/,
    );
  });
});

describe("the text streamed from a run", () => {
  it("passes deltas on, sets a later message off with a blank line, and sends stored text its deltas did not carry", () => {
    const text = new RunText();
    const pieces = [
      start("a", 1),
      delta("a", "Let me ", 2),
      delta("a", "check.", 3),
      stored("a", "Let me check.", 4),
      start("b", 5),
      stored("b", "Done: 42.", 6),
    ].flatMap((f) => text.push(f));
    expect(pieces).toEqual(["Let me ", "check.", "\n\nDone: 42."]);
    expect(text.text).toBe("Let me check.\n\nDone: 42.");
    // A message with no text (a tool call only) adds nothing and no separator.
    const quiet = new RunText();
    expect([stored("t", "", 1), start("c", 2), delta("c", "Hi", 3)].flatMap((f) => quiet.push(f))).toEqual(["Hi"]);
  });
});

describe("response ids", () => {
  it("carry the session and the run, and anything else is not one", () => {
    for (const [session, run] of [
      ["ses_abc", "run_1"],
      ["task:tct_9.x-y", "run_Z-_"],
    ] as const) {
      expect(parseResponseId(responseId(session, run))).toEqual({ sessionId: session, runId: run });
    }
    for (const bad of ["resp_", "resp_@@@", "chatcmpl-1", `resp_${btoa("no-slash")}`, `resp_${btoa("bad id/run").replace(/=+$/, "")}`]) {
      expect(parseResponseId(bad), bad).toBeNull();
    }
  });
});

describe("OpenAI error fields", () => {
  it("maps statuses to OpenAI's types and finds the offending field", () => {
    expect([400, 401, 403, 404, 409, 413, 429, 502].map(openAiErrorType)).toEqual([
      "invalid_request_error",
      "authentication_error",
      "permission_error",
      "not_found_error",
      "conflict_error",
      "invalid_request_error",
      "rate_limit_error",
      "server_error",
    ]);
    expect(paramOf([{ path: "messages.0.role", message: "x" }])).toBe("messages.0.role");
    expect(paramOf([{ path: "(root)", message: "x" }])).toBeNull();
    expect(paramOf({ field: "messages", limit_bytes: 1 })).toBe("messages");
    expect(paramOf({ param: "tools" })).toBe("tools");
    expect(paramOf(undefined)).toBeNull();
  });
});
