/**
 * Extension hooks as pure functions (docs/extensions.md): beforeToolCall/afterToolCall and the context
 * hooks chain in registration order, a throwing beforeToolCall blocks (fail closed), and subscribers are
 * isolated from each other and from the caller.
 */
import { describe, expect, it } from "vitest";
import {
  notifySubscribers,
  runAfterToolCall,
  runBeforeToolCall,
  runMessageHook,
  type Extension,
  type HookContext,
} from "../../../src/runtime/extensions.ts";
import { DEFAULT_CONFIG } from "../../../src/storage/config/schema.ts";
import { ok } from "../../../src/runtime/tools/spec.ts";
import type { Message, StreamFrame } from "../../../src/runtime/session/events.ts";

const ctx: HookContext = {
  env: {} as HookContext["env"],
  workspaceId: "ws",
  sessionId: "ses",
  runId: "run",
  config: DEFAULT_CONFIG,
  data: {},
};
const call = { toolCallId: "c1", name: "echo", args: { text: "a" } };

describe("beforeToolCall chain", () => {
  it("runs in registration order, each layer seeing the previous layer's arguments", async () => {
    const seen: unknown[] = [];
    const exts: Extension[] = [
      {
        name: "one",
        beforeToolCall: (c) => (seen.push(c.args), { action: "continue", args: { text: `${(c.args as { text: string }).text}b` } }),
      },
      { name: "quiet", beforeToolCall: (c) => void seen.push(c.args) },
      {
        name: "two",
        beforeToolCall: async (c) => (seen.push(c.args), { action: "continue", args: { text: `${(c.args as { text: string }).text}c` } }),
      },
    ];
    expect(await runBeforeToolCall(exts, call, ctx)).toEqual({ action: "continue", args: { text: "abc" } });
    expect(seen).toEqual([{ text: "a" }, { text: "ab" }, { text: "ab" }]);
  });

  it("the first block or approval request ends the chain", async () => {
    let later = 0;
    const blocker: Extension = { name: "guard", beforeToolCall: () => ({ action: "block", reason: "not today" }) };
    const asker: Extension = { name: "asker", beforeToolCall: () => ({ action: "require_approval" }) };
    const after: Extension = { name: "after", beforeToolCall: () => void later++ };
    expect(await runBeforeToolCall([blocker, after], call, ctx)).toEqual({
      action: "block",
      reason: "not today",
      code: "blocked",
      by: "guard",
    });
    expect(await runBeforeToolCall([asker, blocker, after], call, ctx)).toMatchObject({
      action: "require_approval",
      by: "asker",
      args: call.args,
    });
    expect(later).toBe(0);
    expect(await runBeforeToolCall([after], call, ctx)).toEqual({ action: "continue", args: call.args });
    expect(later).toBe(1);
  });

  it("a layer that throws blocks the call (fail closed)", async () => {
    const broken: Extension = {
      name: "broken",
      beforeToolCall: () => {
        throw new Error("boom");
      },
    };
    expect(await runBeforeToolCall([broken], call, ctx)).toMatchObject({ action: "block", code: "hook_failed", by: "broken" });
  });
});

describe("afterToolCall chain", () => {
  it("rewrites in order; returning nothing keeps the result; a throwing layer is skipped", async () => {
    const exts: Extension[] = [
      { name: "upper", afterToolCall: (_c, r) => ({ ...r, content: r.content.toUpperCase() }) },
      {
        name: "broken",
        afterToolCall: () => {
          throw new Error("boom");
        },
      },
      { name: "keep", afterToolCall: () => undefined },
      { name: "suffix", afterToolCall: async (_c, r) => ({ ...r, content: `${r.content}!` }) },
    ];
    expect(await runAfterToolCall(exts, call, ok("done"), ctx)).toEqual({ ok: true, content: "DONE!" });
  });
});

describe("message hooks", () => {
  const messages: Message[] = [{ role: "user", content: "hi" }];
  it("chain transformContext (and convertToLlm) in order; a throwing layer is skipped", async () => {
    const exts: Extension[] = [
      { name: "a", transformContext: (m) => [...m, { role: "user", content: "a" }] },
      {
        name: "broken",
        transformContext: () => {
          throw new Error("boom");
        },
      },
      { name: "b", transformContext: async (m) => [...m, { role: "user", content: "b" }], convertToLlm: (m) => m.slice(1) },
    ];
    const out = await runMessageHook(exts, "transformContext", messages, ctx);
    expect(out.map((m) => (m.role === "user" ? m.content : ""))).toEqual(["hi", "a", "b"]);
    expect(await runMessageHook(exts, "convertToLlm", out, ctx)).toEqual(out.slice(1));
  });
});

describe("subscribers", () => {
  const frame = {
    persistent: false,
    type: "turn_start",
    turn_index: 0,
    seq: 1,
    session_id: "ses",
    client_id: "beaver",
    ts: 1,
    run_id: "run",
  } as StreamFrame;

  it("are isolated: a throwing (at once or later) or never-finishing subscriber does not stop the others or the caller", async () => {
    const got: string[] = [];
    let done!: () => void;
    const allDone = new Promise<void>((r) => (done = r));
    const exts: Extension[] = [
      {
        name: "throws",
        onEvent: () => {
          throw new Error("sync boom");
        },
      },
      { name: "rejects", onEvent: async () => Promise.reject(new Error("async boom")) },
      { name: "hangs", onEvent: () => new Promise<void>(() => undefined) },
      { name: "a", onEvent: (f) => void got.push(`a:${f.type}`) },
      {
        name: "b",
        onEvent: (f) => {
          got.push(`b:${f.type}`);
          done();
        },
      },
    ];
    // Returns at once: nothing is awaited, and no subscriber runs inside the caller's turn.
    expect(notifySubscribers(exts, frame, { sessionId: "ses", workspaceId: "ws" })).toBeUndefined();
    expect(got).toEqual([]);
    await allDone;
    expect(got).toEqual(["a:turn_start", "b:turn_start"]);
  });
});
