// Every event type's handler: what it sends to the model, shows to clients, indexes and does to the leaf.
import { describe, expect, it } from "vitest";
import type { PersistentEvent, VisibleEvent } from "../../../src/runtime/session/events.ts";
import { HIDDEN_TYPES } from "../../../src/runtime/session/events.ts";
import {
  HANDLERS,
  UnknownEventTypeError,
  convertToDisplay,
  convertToLlm,
  handlerFor,
  leafAfter,
  navigationTarget,
  type EventOf,
  type HandlerRegistry,
} from "../../../src/runtime/session/event-handlers.ts";
import { samples } from "../../support/log-samples.ts";
import { SYSTEM_REMINDER_NOTE } from "../../../src/runtime/session/system-reminder.ts";

const lookup = (id: string): VisibleEvent | undefined => (id === "m1" ? samples.message : undefined);
const ctx = { lookup };

describe("handler registry", () => {
  it("has exactly one handler per persistent type", () => {
    expect(Object.keys(HANDLERS).sort()).toEqual(Object.keys(samples).sort());
  });

  it("does not compile without a handler for every type", () => {
    // @ts-expect-error a registry missing types is a type error
    const incomplete: HandlerRegistry = { message: HANDLERS.message };
    expect(Object.keys(incomplete)).toEqual(["message"]);
  });

  it("refuses an event type it has no handler for", () => {
    const alien = { ...samples.custom, type: "from_the_future" } as unknown as PersistentEvent;
    expect(() => handlerFor(alien)).toThrow(UnknownEventTypeError);
    expect(() => convertToLlm(alien, ctx)).toThrow(/from_the_future/);
  });
});

describe("message", () => {
  it("includes user, assistant and tool_result messages as they are", () => {
    const assistant: EventOf<"message"> = {
      ...samples.message,
      message: { role: "assistant", text: "Let me look.", tool_calls: [{ id: "c1", name: "read", args: { path: "a" } }] },
    };
    const result: EventOf<"message"> = {
      ...samples.message,
      message: { role: "tool_result", tool_call_id: "c1", tool_name: "read", content: "file body", is_error: false },
    };
    for (const event of [samples.message, assistant, result]) {
      expect(convertToLlm(event, ctx)).toEqual({ action: "include", message: event.message });
    }
  });

  it("turns steer and followUp into a reminder to merge, with the message itself as the fallback", () => {
    for (const source of ["steer", "followUp"] as const) {
      const message = { role: "user" as const, content: "use the other API", meta: { source } };
      const action = convertToLlm({ ...samples.message, message }, ctx);
      expect(action.action).toBe("merge_prev");
      if (action.action !== "merge_prev") return;
      expect(action.content).toMatch(/^<system-reminder>\n[\s\S]*use the other API\n<\/system-reminder>$/);
      expect(action.content).toContain(source === "steer" ? "while you were working" : "follow-up task");
      expect(action.standalone).toBe(message);
    }
  });

  it("skips an empty assistant turn (the visible error that ends a failed run)", () => {
    const failed: EventOf<"message"> = {
      ...samples.message,
      message: { role: "assistant", text: "", tool_calls: [], error: { code: "provider_error", message: "503" } },
    };
    expect(convertToLlm(failed, ctx)).toEqual({ action: "skip" });
    const display = convertToDisplay(failed, ctx);
    expect(display).toMatchObject({ kind: "assistant", text: "", error: { code: "provider_error" } });
  });

  it("displays each role as its own kind with its metadata", () => {
    expect(convertToDisplay(samples.message, ctx)).toEqual({
      event_id: "m1",
      seq: 10,
      ts: 1_700_000_000_000,
      client_id: "cli_1",
      run_id: "run_1",
      type: "message",
      kind: "user",
      text: "hello there",
    });
    const steer = convertToDisplay({ ...samples.message, message: { role: "user", content: "wait", meta: { source: "steer" } } }, ctx);
    expect(steer).toMatchObject({ kind: "user", text: "wait", source: "steer" });
    const assistant = convertToDisplay(
      {
        ...samples.message,
        message: {
          role: "assistant",
          text: "Done.",
          reasoning: "thought",
          tool_calls: [],
          model: "m",
          provider: "p",
          usage: { input_tokens: 1, output_tokens: 2, total_tokens: 3 },
          finish_reason: "stop",
        },
      },
      ctx,
    );
    expect(assistant).toMatchObject({
      kind: "assistant",
      text: "Done.",
      reasoning: "thought",
      model: "m",
      provider: "p",
      finish_reason: "stop",
    });
    const result = convertToDisplay(
      { ...samples.message, message: { role: "tool_result", tool_call_id: "c9", tool_name: "bash", content: "exit 1", is_error: true } },
      ctx,
    );
    expect(result).toMatchObject({ kind: "tool_result", text: "exit 1", tool_call_id: "c9", tool_name: "bash", is_error: true });
  });
});

describe("navigation and metadata events", () => {
  it("rewind and branch are skipped by the model and shown as notices naming their target", () => {
    expect(convertToLlm(samples.rewind, ctx)).toEqual({ action: "skip" });
    expect(convertToLlm(samples.branch, ctx)).toEqual({ action: "skip" });
    expect(convertToDisplay(samples.rewind, ctx)).toMatchObject({
      kind: "notice",
      notice: "rewind",
      target_event_id: "m1",
      text: "Rewound to “hello there”",
    });
    expect(convertToDisplay(samples.branch, ctx)).toMatchObject({ kind: "notice", notice: "branch", target_event_id: "m1" });
    expect(convertToDisplay(samples.branch, ctx)?.text).toContain("“hello there”");
    expect(convertToDisplay(samples.rewind, { lookup: () => undefined })?.text).toBe("Rewound to m1");
  });

  it("rewind and branch move the leaf to their target; they are navigation markers", () => {
    expect(leafAfter(samples.rewind)).toBe("m1");
    expect(leafAfter(samples.branch)).toBe("m1");
    expect(navigationTarget(samples.rewind)).toBe("m1");
    expect(navigationTarget(samples.branch)).toBe("m1");
  });

  it("compact is a barrier whose summary is a reminder message", () => {
    const action = convertToLlm(samples.compact, ctx);
    expect(action).toMatchObject({ action: "barrier", summary: { role: "user" } });
    if (action.action !== "barrier" || action.summary.role !== "user") throw new Error("expected a user summary");
    expect(action.summary.content).toContain("we fixed the bug");
    expect(action.summary.content).toMatch(/^<system-reminder>/);
    expect(convertToDisplay(samples.compact, ctx)).toMatchObject({
      kind: "notice",
      notice: "compact",
      text: "we fixed the bug",
      details: { compacted_through: "m1", tokens_before: 900, tokens_after: 90 },
    });
  });

  it("channel_inject and session_info are skipped and shown as notices", () => {
    expect(convertToLlm(samples.channel_inject, ctx)).toEqual({ action: "skip" });
    expect(convertToLlm(samples.session_info, ctx)).toEqual({ action: "skip" });
    expect(convertToDisplay(samples.channel_inject, ctx)).toMatchObject({
      kind: "notice",
      notice: "channel",
      text: "From telegram",
      details: { channel: "telegram", external_id: "tg-42", metadata: { chat: "ops" } },
    });
    expect(convertToDisplay(samples.session_info, ctx)).toMatchObject({
      kind: "notice",
      notice: "session_info",
      text: "Session settings changed (model: gpt-5, title: Bug hunt)",
      details: { changes: { model: "gpt-5", title: "Bug hunt" } },
    });
  });

  it("custom stays out of the model's context; custom_message goes in", () => {
    expect(convertToLlm(samples.custom, ctx)).toEqual({ action: "skip" });
    expect(convertToLlm(samples.custom_message, ctx)).toEqual({ action: "include", message: samples.custom_message.message });
    expect(convertToDisplay(samples.custom, ctx)).toMatchObject({
      kind: "custom",
      custom_kind: "bookmark",
      data: { label: "here" },
      text: "",
    });
    expect(convertToDisplay(samples.custom_message, ctx)).toMatchObject({
      kind: "custom",
      custom_kind: "memory_recall",
      message: samples.custom_message.message,
      data: { memory_ids: ["mem_1"] },
      text: samples.custom_message.message.role === "user" ? samples.custom_message.message.content : "",
    });
  });

  it("every visible non-navigation event becomes the leaf itself", () => {
    for (const type of ["message", "compact", "channel_inject", "session_info", "custom", "custom_message"] as const) {
      const event = samples[type];
      expect(leafAfter(event)).toBe(event.id);
      expect(navigationTarget(event)).toBeNull();
    }
  });
});

describe("hidden run facts", () => {
  it("are skipped, never displayed and never move the leaf", () => {
    for (const type of HIDDEN_TYPES) {
      const event = samples[type];
      expect(convertToLlm(event, ctx)).toEqual({ action: "skip" });
      expect(convertToDisplay(event, ctx)).toBeNull();
      expect(leafAfter(event)).toBeNull();
      expect(navigationTarget(event)).toBeNull();
    }
  });
});

describe("system prompt note", () => {
  it("explains <system-reminder> to the model", () => {
    expect(SYSTEM_REMINDER_NOTE).toContain("<system-reminder>");
  });
});
