import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun, getRun } from "../../../src/runtime/session/service.ts";
import type { MessageEvent, PersistentEvent } from "../../../src/runtime/session/events.ts";
import { isHidden } from "../../../src/runtime/session/events.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  doEvents,
  readSse,
  registerModel,
  registerToolset,
  scriptedWorkspace,
  text,
  toolCalls,
  until,
} from "../../support/sessions.ts";
import { call, json } from "../../support/api.ts";
import { z } from "zod";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";

const messages = (events: PersistentEvent[]) => events.filter((e): e is MessageEvent => e.type === "message").map((e) => e.message);

async function runOnce(ws: { id: string }, content: string, extra: Record<string, unknown> = {}) {
  const session = await createSession(env, { workspaceId: ws.id });
  const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content, ...extra });
  const result = await waitForRun(env, session.id, run_id, 10_000);
  return { sessionId: session.id, runId: run_id, result, events: await doEvents(session.id, ws.id) };
}

describe("agent loop: a turn", () => {
  it("answers a no-tool turn: run facts hidden, user and assistant messages visible, seq strictly increasing", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("Hello", " there")]));
    const { result, events, runId, sessionId } = await runOnce(ws, "hi");
    expect(result).toMatchObject({
      status: "completed",
      output_text: "Hello there",
      finish_reason: "stop",
      tool_iterations: 0,
      provider: "openai-compatible",
      session_id: sessionId,
      run_id: runId,
    });
    expect(result.usage).toEqual({ input_tokens: 10, output_tokens: 4, total_tokens: 14 });
    expect(events.map((e) => e.type)).toEqual([
      "run_started",
      "system_prompt_snapshotted",
      // No skill matched "hi": no skill_activation_snapshotted (seed backend-flow.md §4.5).
      "message",
      "message",
      "run_completed",
    ]);
    expect(events.every((e) => e.run_id === runId)).toBe(true);
    for (const e of events.filter(isHidden)) expect(e.parent_id).toBeNull();
    const [user, assistant] = events.filter((e) => e.type === "message");
    expect(user!.parent_id).toBeNull();
    expect(assistant!.parent_id).toBe(user!.id);
    const seqs = events.map((e) => e.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
    expect(messages(events)[1]).toMatchObject({
      role: "assistant",
      text: "Hello there",
      provider: "openai-compatible",
      usage: { total_tokens: 14 },
    });
    const prompt = events.find((e) => e.type === "system_prompt_snapshotted");
    expect(prompt).toMatchObject({ prompt: expect.stringContaining("# Runtime context") });
    expect(ws.main.calls).toHaveLength(1);
  });

  it("runs tool calls through the executor and feeds the results back until the model answers", async () => {
    const main = new ScriptedModel([
      toolCalls({ id: "c1", name: "echo", args: { text: "one" } }, { id: "c2", name: "echo", args: { text: "two" } }),
      text("done"),
    ]);
    const ws = await scriptedWorkspace(main);
    const { result, events } = await runOnce(ws, "echo twice");
    expect(result).toMatchObject({ status: "completed", output_text: "done", tool_iterations: 1 });
    const msgs = messages(events);
    expect(msgs.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result", "assistant"]);
    expect(msgs[2]).toMatchObject({ role: "tool_result", tool_call_id: "c1", content: "one", is_error: false });
    expect(msgs[3]).toMatchObject({ tool_call_id: "c2", content: "two" });
    // The second model call saw both results.
    expect(main.promptText(1)).toContain("two");
  });

  it("a failing tool is a result the model reads, not a crashed run", async () => {
    const main = new ScriptedModel([toolCalls({ id: "c1", name: "no_such_tool", args: {} }), text("recovered")]);
    const ws = await scriptedWorkspace(main);
    const { result, events } = await runOnce(ws, "go");
    expect(result.status).toBe("completed");
    expect(messages(events)[2]).toMatchObject({ role: "tool_result", is_error: true, content: expect.stringContaining("unknown_tool") });
  });

  it("falls back when the main provider fails and records who answered", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ fail: 500 }]), { fallback: new ScriptedModel([text("from fallback")]) });
    const { result, events } = await runOnce(ws, "hi");
    expect(result).toMatchObject({ status: "completed", output_text: "from fallback", model: expect.stringMatching(/^fallback-/) });
    expect(messages(events)[1]).toMatchObject({ role: "assistant", model: expect.stringMatching(/^fallback-/) });
  });

  it("a main model failing mid-stream is withdrawn from live clients before the fallback answers", async () => {
    const broken: LanguageModelV4StreamPart[] = [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "half an ans" },
      { type: "error", error: new Error("connection reset") },
    ];
    const ws = await scriptedWorkspace(new ScriptedModel([broken]), { fallback: new ScriptedModel([text("a whole answer")]) });
    const session = await createSession(env, { workspaceId: ws.id });
    const watching = readSse(await call("GET", `/api/sessions/${session.id}/stream`, { token: ws.read }), (f) => f.type === "runtime_end");
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi" });
    const frames = await watching;
    const starts = frames.filter((f) => f.type === "message_start") as unknown as { event_id: string; model: string }[];
    expect(starts).toHaveLength(2);
    expect(starts[0]!.model).toMatch(/^main-/);
    expect(starts[1]!.model).toMatch(/^fallback-/);
    const cancelled = frames.find((f) => f.type === "message_cancelled");
    expect(cancelled).toMatchObject({ event_id: starts[0]!.event_id, reason: "error", run_id });
    expect(frames.indexOf(cancelled!)).toBeLessThan(
      frames.findIndex((f) => f.type === "message_start" && (f as { event_id: string }).event_id === starts[1]!.event_id),
    );
    const assistant = messages(await doEvents(session.id, ws.id)).filter((m) => m.role === "assistant");
    expect(assistant).toEqual([expect.objectContaining({ text: "a whole answer", model: starts[1]!.model })]);
    const persisted = frames.find((f) => f.persistent && f.type === "message" && f.message.role === "assistant") as
      { id: string } | undefined;
    expect(persisted?.id).toBe(starts[1]!.event_id);
  });

  it("provider failure after fallback ends the run with run_failed and a visible assistant error", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ fail: 500 }]), { fallback: new ScriptedModel([{ fail: 503 }]) });
    const { result, events } = await runOnce(ws, "hi");
    expect(result).toMatchObject({ status: "failed", error: { code: "provider_error" } });
    expect(events.at(-1)).toMatchObject({ type: "run_failed", error: { code: "provider_error" } });
    const last = messages(events).at(-1);
    expect(last).toMatchObject({ role: "assistant", error: { code: "provider_error" } });
  });

  it("no model configured fails fast with no_model_configured", async () => {
    const { newWorkspace } = await import("../../support/api.ts");
    const ws = await newWorkspace();
    const { result, events } = await runOnce(ws, "hi");
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "no_model_configured", message: expect.stringContaining("PUT /api/config") },
    });
    expect(events.map((e) => e.type)).toContain("run_failed");
  });

  it("stops at runtime.max_tool_iterations with a failed run", async () => {
    const main = new ScriptedModel((i) => toolCalls({ id: `c${i}`, name: "echo", args: { text: `${i}` } }));
    const ws = await scriptedWorkspace(main, { runtime: { max_tool_iterations: 2 } });
    const { result, events } = await runOnce(ws, "loop forever");
    expect(result).toMatchObject({ status: "failed", tool_iterations: 2, error: { code: "max_tool_iterations" } });
    expect(main.calls).toHaveLength(2);
    expect(events.at(-1)).toMatchObject({ type: "run_failed", error: { code: "max_tool_iterations" } });
    expect(messages(events).at(-1)).toMatchObject({ role: "assistant", error: { code: "max_tool_iterations" } });
  });

  it("lets a run raise its own tool iteration limit above runtime.max_tool_iterations", async () => {
    const main = new ScriptedModel((i) => (i < 4 ? toolCalls({ id: `c${i}`, name: "echo", args: { text: `${i}` } }) : text("finished")));
    const ws = await scriptedWorkspace(main, { runtime: { max_tool_iterations: 2 } });
    const raised = await runOnce(ws, "work", { max_tool_iterations: 5 });
    expect(raised.result).toMatchObject({ status: "completed", tool_iterations: 4, output_text: "finished" });
    const looping = new ScriptedModel((i) => toolCalls({ id: `c${i}`, name: "echo", args: { text: `${i}` } }));
    const lowered = await runOnce(await scriptedWorkspace(looping, { runtime: { max_tool_iterations: 5 } }), "work", {
      max_tool_iterations: 1,
    });
    expect(lowered.result).toMatchObject({
      status: "failed",
      tool_iterations: 1,
      error: { code: "max_tool_iterations", message: expect.stringContaining("this run's") },
    });
  });

  it("sends the model at most runtime.max_context_messages of history, in whole groups", async () => {
    const main = new ScriptedModel((i) => text(`answer ${i}`));
    const ws = await scriptedWorkspace(main, { runtime: { max_context_messages: 3 } });
    const session = await createSession(env, { workspaceId: ws.id });
    for (const content of ["q0", "q1", "q2"]) {
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content });
      await waitForRun(env, session.id, run_id, 10_000);
    }
    const sent = main.calls[2]!.prompt.filter((m) => m.role !== "system").map(
      (m) => `${m.role}: ${(m.content as { type: string; text?: string }[]).map((p) => p.text ?? p.type).join("")}`,
    );
    expect(sent).toEqual(["user: q1", "assistant: answer 1", "user: q2"]);
  });

  it("tools see the run's own configuration: current_time tells the zone the system prompt told", async () => {
    const gate = deferred();
    const main = new ScriptedModel([
      { parts: toolCalls({ id: "t1", name: "current_time", args: {} }), gate: gate.promise },
      text("it is late"),
    ]);
    const ws = await scriptedWorkspace(main, { runtime: { timezone: "Asia/Tokyo" } });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "what time is it?" });
    await until(() => main.calls.length === 1, 5_000, "model call");
    // The workspace changes its zone while the run is under way; the run keeps the one it started with.
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    expect(
      (await call("PUT", "/api/config", { token: ws.admin, body: { ...config, runtime: { timezone: "Europe/Berlin" } } })).status,
    ).toBe(200);
    gate.resolve();
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
    const events = await doEvents(session.id, ws.id);
    expect(events.find((e) => e.type === "system_prompt_snapshotted")).toMatchObject({
      prompt: expect.stringContaining("Time zone: Asia/Tokyo"),
    });
    expect(messages(events).find((m) => m.role === "tool_result")).toMatchObject({
      tool_name: "current_time",
      content: expect.stringContaining("timezone: Asia/Tokyo"),
    });
  });

  it("streams thinking deltas and a tool's progress updates as transient frames, never stored", async () => {
    const progress = defineTool({
      name: "progress_tool",
      description: "reports progress",
      input: z.strictObject({}),
      async execute(_args, ctx) {
        ctx.emitUpdate({ done: 1, of: 2 });
        ctx.emitUpdate({ done: 2, of: 2 });
        return ok("finished");
      },
    });
    const toolset = registerToolset("progress-probe", [progress]);
    const reasoning: LanguageModelV4StreamPart[] = [
      { type: "reasoning-start", id: "r" },
      { type: "reasoning-delta", id: "r", delta: "let me " },
      { type: "reasoning-delta", id: "r", delta: "think" },
      { type: "reasoning-end", id: "r" },
    ];
    const ws = await scriptedWorkspace(
      new ScriptedModel([[...reasoning, ...toolCalls({ id: "p1", name: "progress_tool", args: {} })], text("ok")]),
    );
    const session = await createSession(env, { workspaceId: ws.id });
    const watching = readSse(await call("GET", `/api/sessions/${session.id}/stream`, { token: ws.read }), (f) => f.type === "runtime_end");
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "go", toolset });
    const frames = await watching;
    const start = frames.find((f) => f.type === "message_start") as { event_id: string } | undefined;
    const thinking = frames.filter((f) => f.type === "thinking_delta");
    expect(thinking.map((f) => (f as { delta: string }).delta).join("")).toBe("let me think");
    expect(thinking.every((f) => (f as { event_id: string }).event_id === start!.event_id && f.run_id === run_id)).toBe(true);
    const toolStart = frames.find((f) => f.type === "tool_execution_start") as { event_id: string } | undefined;
    const updates = frames.filter((f) => f.type === "tool_execution_update");
    expect(updates.map((f) => (f as { partial: unknown }).partial)).toEqual([
      { done: 1, of: 2 },
      { done: 2, of: 2 },
    ]);
    expect(updates.every((f) => (f as { event_id: string; tool_call_id: string }).event_id === toolStart!.event_id)).toBe(true);
    const stored = await doEvents(session.id, ws.id);
    expect(stored.map((e) => e.type)).not.toContain("tool_execution_update");
    expect(messages(stored).find((m) => m.role === "assistant")).toMatchObject({ reasoning: "let me think" });
  });

  it("honours toolset, tool_data, system_prompt_extra and model_override", async () => {
    const probe = countingTool("probe_tool");
    const toolset = registerToolset("loop-probe", [probe.spec]);
    const override = new ScriptedModel([toolCalls({ id: "p1", name: "probe_tool", args: { n: 1 } }), text("ok")]);
    const ws = await scriptedWorkspace(new ScriptedModel([text("main should not answer")]));
    const overrideId = registerModel(override);
    const { result } = await runOnce(ws, "use the probe", {
      toolset,
      tool_data: { task_id: "t-1" },
      system_prompt_extra: "EXTRA TASK INSTRUCTIONS",
      model_override: { provider: "openai-compatible", id: overrideId, base_url: "http://override.test/v1" },
    });
    expect(result).toMatchObject({ status: "completed", output_text: "ok", model: overrideId });
    expect(probe.state.runs).toBe(1);
    expect(probe.state.seenData).toEqual([{ task_id: "t-1" }]);
    expect(override.promptText(0)).toContain("EXTRA TASK INSTRUCTIONS");
    expect(ws.main.calls).toHaveLength(0);
  });
});

describe("agent loop: the run queue", () => {
  it("the same Idempotency-Key returns the same run", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("once")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const a = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi", idempotency_key: "k-1" });
    const b = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi", idempotency_key: "k-1" });
    expect(b.run_id).toBe(a.run_id);
    expect(b.deduplicated).toBe(true);
    await waitForRun(env, session.id, a.run_id, 10_000);
    const c = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi", idempotency_key: "k-1" });
    expect(c).toMatchObject({ run_id: a.run_id, status: "completed" });
    expect(ws.main.calls).toHaveLength(1);
  });

  it("concurrent submits run one after another: no run's events interleave with another's", async () => {
    const main = new ScriptedModel((i) =>
      i % 2 === 0 ? toolCalls({ id: `c${i}`, name: "echo", args: { text: `x${i}` } }) : text(`answer ${i}`),
    );
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const submitted = await Promise.all([1, 2, 3].map((n) => submitRun(env, session.id, { workspace_id: ws.id, content: `q${n}` })));
    const results = await Promise.all(submitted.map((s) => waitForRun(env, session.id, s.run_id, 10_000)));
    expect(results.map((r) => r.status)).toEqual(["completed", "completed", "completed"]);
    const events = await doEvents(session.id, ws.id);
    const order = events.map((e) => e.run_id);
    // Each run's events form one contiguous block.
    const blocks = order.filter((id, i) => i === 0 || order[i - 1] !== id);
    expect(blocks).toEqual(submitted.map((s) => s.run_id));
    // Each run starts where the previous ended: the conversation is one path.
    const visible = events.filter((e) => !isHidden(e));
    for (let i = 1; i < visible.length; i++) expect(visible[i]!.parent_id).toBe(visible[i - 1]!.id);
  });

  it("cancel aborts the running step: message_cancelled, run ends cancelled", async () => {
    const main = new ScriptedModel([
      {
        before: [
          { type: "text-start", id: "t" },
          { type: "text-delta", id: "t", delta: "partial" },
        ],
        hang: true,
      },
    ]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "long task" });
    await until(() => main.calls.length === 1, 5_000, "model call");
    const watching = readSse(await call("GET", `/api/sessions/${session.id}/stream`, { token: ws.read }), (f) => f.type === "runtime_end");
    const { cancelRun } = await import("../../../src/runtime/session/service.ts");
    expect(await cancelRun(env, session.id, ws.id)).toMatchObject({ run_id, status: "running" });
    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result).toMatchObject({ status: "cancelled", finish_reason: "cancelled" });
    const events = await doEvents(session.id, ws.id);
    expect(events.at(-1)).toMatchObject({ type: "run_completed", result: { status: "cancelled" } });
    expect(messages(events).map((m) => m.role)).toEqual(["user"]);
    expect((await getRun(env, session.id, run_id)).status).toBe("cancelled");
    // Live clients were told to drop the half-written message, and why the run ended.
    const frames = await watching;
    const start = frames.find((f) => f.type === "message_start") as { event_id: string } | undefined;
    expect(frames.find((f) => f.type === "message_cancelled")).toMatchObject({ event_id: start!.event_id, reason: "user_cancel", run_id });
    expect(frames.at(-1)).toMatchObject({ type: "runtime_end", reason: "cancelled", run_id });
  });

  it("cancelling a queued run by id through the API ends it before it starts", async () => {
    const gate = deferred();
    const main = new ScriptedModel([{ parts: text("first"), gate: gate.promise }, text("never")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const first = await submitRun(env, session.id, { workspace_id: ws.id, content: "one" });
    const second = await submitRun(env, session.id, { workspace_id: ws.id, content: "two" });
    expect(second.status).toBe("queued");
    const res = await call("POST", `/api/sessions/${session.id}/cancel`, { token: ws.member, body: { run_id: second.run_id } });
    expect(await json(res)).toEqual({ run_id: second.run_id, status: "cancelled" });
    gate.resolve();
    expect((await waitForRun(env, session.id, first.run_id, 10_000)).status).toBe("completed");
    expect(await waitForRun(env, session.id, second.run_id, 1_000)).toMatchObject({ status: "cancelled", finish_reason: "cancelled" });
    expect(main.calls).toHaveLength(1);
    expect((await doEvents(session.id, ws.id)).filter((e) => e.run_id === second.run_id)).toEqual([]);
    const run = await json<{ status: string }>(await call("GET", `/api/sessions/${session.id}/runs/${second.run_id}`, { token: ws.read }));
    expect(run).toMatchObject({ id: second.run_id, status: "cancelled" });
  });

  it("a steer message joins the running run and reaches the model as a <system-reminder>", async () => {
    const slow = countingTool("slow_tool");
    const gate = deferred();
    slow.state.gate = gate.promise;
    const toolset = registerToolset("steer-probe", [slow.spec]);
    const main = new ScriptedModel([toolCalls({ id: "s1", name: "slow_tool", args: {} }), text("adjusted")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "start", toolset });
    await until(() => slow.state.runs === 1, 5_000, "tool start");
    const steer = await submitRun(env, session.id, { workspace_id: ws.id, content: "also mention penguins", source: "steer" });
    expect(steer).toMatchObject({ run_id, steered: true });
    gate.resolve();
    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "adjusted" });
    expect(main.promptText(1)).toMatch(/system-reminder[^]*penguins/);
    const events = await doEvents(session.id, ws.id);
    const steerEvent = events.find((e) => e.type === "message" && e.message.role === "user" && e.message.meta?.source === "steer");
    expect(steerEvent?.run_id).toBe(run_id);
  });

  it("a steer message repeated with its idempotency key joins the run once", async () => {
    const slow = countingTool("slow_tool");
    const gate = deferred();
    slow.state.gate = gate.promise;
    const toolset = registerToolset("steer-once", [slow.spec]);
    const ws = await scriptedWorkspace(new ScriptedModel([toolCalls({ id: "s1", name: "slow_tool", args: {} }), text("adjusted")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "start", toolset });
    await until(() => slow.state.runs === 1, 5_000, "tool start");
    const steer = { workspace_id: ws.id, content: "also mention penguins", source: "steer" as const, idempotency_key: "steer-1" };
    expect(await submitRun(env, session.id, steer)).toMatchObject({ run_id, steered: true, deduplicated: false });
    expect(await submitRun(env, session.id, steer)).toMatchObject({ run_id, steered: true, deduplicated: true });
    gate.resolve();
    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    expect(await submitRun(env, session.id, steer)).toMatchObject({ run_id, status: "completed", deduplicated: true });
    const steers = messages(await doEvents(session.id, ws.id)).filter((m) => m.role === "user" && m.meta?.source === "steer");
    expect(steers).toEqual([{ role: "user", content: "also mention penguins", meta: { source: "steer" } }]);
  });

  it("a followUp during a run is queued as the next run", async () => {
    const gate = deferred();
    const main = new ScriptedModel([{ parts: text("first"), gate: gate.promise }, text("second")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const first = await submitRun(env, session.id, { workspace_id: ws.id, content: "one" });
    await until(() => main.calls.length === 1, 5_000, "model call");
    const follow = await submitRun(env, session.id, { workspace_id: ws.id, content: "two", source: "followUp" });
    expect(follow).toMatchObject({ status: "queued", steered: false });
    expect(follow.run_id).not.toBe(first.run_id);
    gate.resolve();
    expect((await waitForRun(env, session.id, follow.run_id, 10_000)).output_text).toBe("second");
  });
});
