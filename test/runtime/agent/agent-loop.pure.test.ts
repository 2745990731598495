// The agent loop over its ports (src/runtime/agent/agent-loop.ts), driven by a fake stream without workerd:
// tool calls, steer and follow-up, cancel, the iteration limit, the fallback model, a call written as text, resume.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { LoopStop, MAX_PARALLEL_TOOLS, toolBatches } from "../../../src/runtime/agent/agent-loop.ts";
import { defineTool, fail, ok } from "../../../src/runtime/tools/spec.ts";
import { failingModel, models, textParts, toolCallParts } from "../../support/mock-models.ts";
import { loopHarness, scriptedModel } from "../../support/loop-harness.ts";

const calls: string[] = [];
const echo = defineTool({
  name: "echo",
  description: "Echo the text back.",
  input: z.object({ text: z.string() }),
  idempotent: true,
  async execute({ text }) {
    calls.push(`echo:${text}`);
    return ok(text);
  },
});
const send = defineTool({
  name: "send",
  description: "Send a message somewhere (not idempotent).",
  input: z.object({ to: z.string() }),
  async execute({ to }) {
    calls.push(`send:${to}`);
    return ok(`sent to ${to}`);
  },
});

async function stopOf(p: Promise<unknown>): Promise<LoopStop> {
  const err = await p.then(
    () => null,
    (e: unknown) => e,
  );
  expect(err).toBeInstanceOf(LoopStop);
  return err as LoopStop;
}

describe("agent loop", () => {
  it("answers without tools: one turn, deltas under the persisted message's id, state filled in", async () => {
    const h = loopHarness({ models: models(scriptedModel([textParts("Hel", "lo")])) });
    await expect(h.run()).resolves.toEqual({ status: "completed" });
    expect(h.state).toMatchObject({ output_text: "Hello", finish_reason: "stop", steps: 1, tool_iterations: 0, model: "main-model" });
    expect(h.frames.map((f) => f.type)).toEqual(["turn_start", "message_start", "text_delta", "text_delta", "turn_end", "turn_finish"]);
    // The clock port is the harness's fixed 1,000 ms: the turn's duration is measured with it.
    expect(h.frames.at(-1)).toMatchObject({ type: "turn_finish", turn_index: 0, duration_ms: 0 });
    const start = h.frames.find((f) => f.type === "message_start")!;
    const last = h.messages().at(-1)!;
    expect(last).toMatchObject({ role: "assistant", text: "Hello" });
    expect(start).toMatchObject({ event_id: expect.stringMatching(/^evt_/) });
  });

  it("runs a tool call, persists its result and asks the model again with it", async () => {
    calls.length = 0;
    const model = scriptedModel([toolCallParts("c1", "echo", '{"text":"ping"}'), textParts("done")]);
    const h = loopHarness({ models: models(model), tools: [echo] });
    await h.run();
    expect(calls).toEqual(["echo:ping"]);
    expect(h.messages().map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    expect(h.state).toMatchObject({ tool_iterations: 1, steps: 2, output_text: "done" });
    const secondPrompt = JSON.stringify(model.prompts[1]);
    expect(secondPrompt).toContain("ping");
    expect(model.prompts[1]!.some((m) => m.role === "tool")).toBe(true);
    const types = h.frames.map((f) => f.type);
    expect(types.indexOf("tool_execution_start")).toBeLessThan(types.indexOf("tool_execution_end"));
  });

  it("takes a steer message queued during a tool into the next model step", async () => {
    const model = scriptedModel([toolCallParts("c1", "steerable", "{}"), textParts("ok, shorter")]);
    const ref: { h?: ReturnType<typeof loopHarness> } = {};
    const steerable = defineTool({
      name: "steerable",
      description: "A tool during which the user interjects.",
      input: z.object({}),
      async execute() {
        ref.h!.steer("make it shorter");
        return ok("working");
      },
    });
    const h = (ref.h = loopHarness({ models: models(model), tools: [steerable] }));
    await h.run();
    expect(h.logged().map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "user", "assistant"]);
    expect(h.logged()[3]).toEqual({ role: "user", content: "make it shorter", meta: { source: "steer" } });
    // The context builder joins a steer to the tool result before it as a reminder (docs/sessions.md).
    const lastTool = model.prompts[1]!.filter((m) => m.role === "tool").at(-1);
    expect(JSON.stringify(lastTool)).toContain("make it shorter");
  });

  it("a follow-up queued while the answer streams keeps the run going for one more step", async () => {
    const model = scriptedModel([textParts("first answer"), textParts("second answer")]);
    const h = loopHarness({ models: models(model) });
    const original = h.ports.model.step;
    h.ports.model.step = async (req) => {
      const out = await original(req);
      if (model.prompts.length === 1) h.steer("and then?", "followUp");
      return out;
    };
    await h.run();
    expect(model.prompts).toHaveLength(2);
    expect(h.state.output_text).toBe("second answer");
    expect(h.logged().at(-2)).toEqual({ role: "user", content: "and then?", meta: { source: "followUp" } });
  });

  it("a cancel during a tool ends the run cancelled without another model step", async () => {
    const model = scriptedModel([toolCallParts("c1", "slow", "{}"), textParts("never")]);
    const ref: { h?: ReturnType<typeof loopHarness> } = {};
    const slow = defineTool({
      name: "slow",
      description: "Waits until cancelled.",
      input: z.object({}),
      execute: (_args, ctx) =>
        new Promise((resolve) => {
          ctx.signal.addEventListener("abort", () => resolve(fail("cancelled", "stopped")));
          ref.h!.cancel();
        }),
    });
    const h = (ref.h = loopHarness({ models: models(model), tools: [slow] }));
    const stop = await stopOf(h.run());
    expect(stop.outcome).toEqual({ status: "cancelled" });
    expect(model.prompts).toHaveLength(1);
    expect(h.messages().at(-1)).toMatchObject({ role: "tool_result", is_error: true });
  });

  it("stops at the tool-iteration limit, naming the setting", async () => {
    const model = scriptedModel([toolCallParts("c1", "echo", '{"text":"a"}'), toolCallParts("c2", "echo", '{"text":"b"}')]);
    const h = loopHarness({ models: models(model), tools: [echo], maxToolIterations: 2 });
    const stop = await stopOf(h.run());
    expect(stop.outcome).toEqual({
      status: "failed",
      error: {
        code: "max_tool_iterations",
        message: "The run stopped after 2 tool iterations (runtime.max_tool_iterations) without a final answer",
      },
    });
    expect(h.state.tool_iterations).toBe(2);
    expect(model.prompts).toHaveLength(2);
  });

  it("asks the fallback model when the main one fails, withdrawing the main attempt's message", async () => {
    const fallback = scriptedModel([textParts("from fallback")]);
    const h = loopHarness({ models: models(failingModel(503, "overloaded"), fallback) });
    await h.run();
    expect(h.state).toMatchObject({ output_text: "from fallback", model: "fallback-model", provider: "anthropic" });
    const types = h.frames.map((f) => f.type);
    expect(types.slice(0, 4)).toEqual(["turn_start", "message_start", "message_cancelled", "message_start"]);
    expect(types).not.toContain("turn_error");
    const persisted = h.messages().at(-1);
    const lastStart = h.frames.filter((f) => f.type === "message_start").at(-1)!;
    expect(persisted).toMatchObject({ role: "assistant", model: "fallback-model" });
    expect(lastStart).toMatchObject({ model: "fallback-model" });
  });

  it("turns a tool call written as text into a real call", async () => {
    calls.length = 0;
    const model = scriptedModel([textParts('{"name": "echo", "arguments": {"text": "raw"}}'), textParts("echoed")]);
    const h = loopHarness({ models: models(model), tools: [echo] });
    await h.run();
    expect(calls).toEqual(["echo:raw"]);
    const assistant = h.messages()[1]!;
    expect(assistant).toMatchObject({ role: "assistant", text: "", tool_calls: [{ name: "echo", args: { text: "raw" } }] });
    // The JSON was never shown as an answer.
    expect(h.frames.filter((f) => f.type === "text_delta").map((f) => ("delta" in f ? f.delta : ""))).toEqual(["echoed"]);
  });

  it("a refused call is answered with the gate's error and never executed", async () => {
    calls.length = 0;
    const model = scriptedModel([toolCallParts("c1", "send", '{"to":"boss"}'), textParts("could not send")]);
    const h = loopHarness({ models: models(model), tools: [send], gate: () => ({ run: false, result: fail("blocked", "not allowed") }) });
    await h.run();
    expect(calls).toEqual([]);
    expect(h.messages()[2]).toMatchObject({ role: "tool_result", is_error: true, content: "Error (blocked): not allowed" });
  });

  it("on resume, an interrupted non-idempotent call is answered `interrupted`, an idempotent one runs again", async () => {
    calls.length = 0;
    const model = scriptedModel([textParts("recovered")]);
    const h = loopHarness({
      models: models(model),
      tools: [echo, send],
      prior: () => [
        {
          role: "assistant",
          text: "",
          tool_calls: [
            { id: "c1", name: "send", args: { to: "boss" } },
            { id: "c2", name: "echo", args: { text: "again" } },
          ],
        },
      ],
      started: { c1: "evt_started_1", c2: "evt_started_2" },
    });
    await h.run();
    expect(calls).toEqual(["echo:again"]);
    const results = h.messages().filter((m) => m.role === "tool_result");
    expect(results[0]).toMatchObject({ tool_call_id: "c1", is_error: true, content: expect.stringContaining("interrupted") });
    expect(results[1]).toMatchObject({ tool_call_id: "c2", is_error: false, content: "again" });
    expect(h.state.output_text).toBe("recovered");
  });

  it("runs a step's read-only calls in parallel, a write alone, and keeps the results in call order", async () => {
    const log: string[] = [];
    let inFlight = 0;
    let most = 0;
    const releases: (() => void)[] = [];
    const read = defineTool({
      name: "read",
      description: "Read something (read-only).",
      input: z.object({ key: z.string() }),
      readOnly: true,
      async execute({ key }) {
        inFlight++;
        most = Math.max(most, inFlight);
        log.push(`start:${key}`);
        // Each read waits until released; released newest first, so completion order is reversed.
        await new Promise<void>((resolve) => releases.push(resolve));
        inFlight--;
        log.push(`end:${key}`);
        return ok(`value of ${key}`);
      },
    });
    const write = defineTool({
      name: "write",
      description: "Write something.",
      input: z.object({ key: z.string() }),
      async execute({ key }) {
        log.push(`write:${key} while ${inFlight} reads run`);
        return ok(`wrote ${key}`);
      },
    });
    const model = scriptedModel([
      [
        ...toolCallParts("r1", "read", '{"key":"a"}'),
        ...toolCallParts("r2", "read", '{"key":"b"}'),
        ...toolCallParts("w1", "write", '{"key":"c"}'),
        ...toolCallParts("r3", "read", '{"key":"d"}'),
      ],
      textParts("done"),
    ]);
    const h = loopHarness({ models: models(model), tools: [read, write] });
    const running = h.run();
    // Release pending reads, newest first, whenever some are waiting.
    const releaser = setInterval(
      () =>
        releases
          .splice(0)
          .reverse()
          .forEach((r) => r()),
      1,
    );
    await running.finally(() => clearInterval(releaser));
    expect(most).toBe(2);
    expect(log.slice(0, 2)).toEqual(["start:a", "start:b"]);
    expect(log).toContain("write:c while 0 reads run");
    expect(log.indexOf("write:c while 0 reads run")).toBeGreaterThan(log.indexOf("end:a"));
    expect(log.indexOf("start:d")).toBeGreaterThan(log.indexOf("write:c while 0 reads run"));
    // The log reads in call order whatever order the reads finished in.
    const results = h.messages().filter((m) => m.role === "tool_result");
    expect(results.map((m) => (m.role === "tool_result" ? `${m.tool_call_id}=${m.content}` : ""))).toEqual([
      "r1=value of a",
      "r2=value of b",
      "w1=wrote c",
      "r3=value of d",
    ]);
    // Live starts name the result each will be written under; ends follow call order.
    const starts = h.frames.filter((f) => f.type === "tool_execution_start");
    expect(starts[1]).toMatchObject({ tool_call_id: "r2", parent_id: (starts[0] as { event_id: string }).event_id });
    expect(h.frames.filter((f) => f.type === "tool_execution_end").map((f) => ("tool_call_id" in f ? f.tool_call_id : ""))).toEqual([
      "r1",
      "r2",
      "w1",
      "r3",
    ]);
  });

  it("cuts batches at writes and at MAX_PARALLEL_TOOLS; unknown tools run alone", () => {
    const registry = { get: (name: string) => (name.startsWith("r") ? { readOnly: true } : name === "w" ? {} : undefined) } as never;
    const call = (name: string, i: number) => ({ id: `c${i}`, name, args: {} });
    const names = ["r", "r", "w", "r", "x", ...Array.from({ length: MAX_PARALLEL_TOOLS + 1 }, () => "r")];
    const batches = toolBatches(names.map(call), registry);
    expect(batches.map((b) => b.length)).toEqual([2, 1, 1, 1, MAX_PARALLEL_TOOLS, 1]);
  });
});
