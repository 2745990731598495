import { describe, expect, it } from "vitest";
import { z } from "zod";
import {
  cacheProviderOptions,
  isAbortError,
  modelInstructions,
  ProviderError,
  runModelStep,
  toUsage,
  type StepCallbacks,
} from "../../../src/runtime/agent/model-step.ts";
import type { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { ProviderKind } from "../../../src/storage/config/schema.ts";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import { builtinTools } from "../../../src/runtime/tools/builtins/index.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";
import { failingModel, finish, handle, models, streamingModel, textParts, toolCallParts } from "../../support/mock-models.ts";
import type { ModelMessage } from "ai";
import type { ResolvedModels } from "../../../src/runtime/agent/providers.ts";
import { statusOf } from "../../../src/edge/http/errors.ts";

type Recorded = { kind: string; value: unknown };

function recorder(): { events: Recorded[]; callbacks: StepCallbacks } {
  const events: Recorded[] = [];
  return {
    events,
    callbacks: {
      onStart: (info) => events.push({ kind: "start", value: info }),
      onTextDelta: (d) => events.push({ kind: "text", value: d }),
      onReasoningDelta: (d) => events.push({ kind: "reasoning", value: d }),
      onToolCallDelta: (d) => events.push({ kind: "tool", value: d }),
      onAbandon: (info) => events.push({ kind: "abandon", value: info }),
    },
  };
}

const registry = new ToolRegistry(builtinTools());
const messages: ModelMessage[] = [{ role: "user", content: "hello" }];

function step(
  m: ResolvedModels,
  callbacks: StepCallbacks,
  extra: { signal?: AbortSignal; tools?: ToolRegistry; maxOutputTokens?: number } = {},
) {
  return runModelStep({
    models: m,
    system: "SYSTEM PROMPT",
    messages,
    tools: extra.tools ?? registry,
    signal: extra.signal ?? new AbortController().signal,
    maxOutputTokens: extra.maxOutputTokens,
    callbacks,
  });
}

describe("runModelStep: streaming", () => {
  it("streams text deltas in order and reports text, usage, finish reason and who answered", async () => {
    const { events, callbacks } = recorder();
    const out = await step(models(streamingModel(textParts("Hel", "lo", " there"))), callbacks);
    expect(events).toEqual([
      { kind: "start", value: { provider: "openai-compatible", model: "main-model", role: "main" } },
      { kind: "text", value: "Hel" },
      { kind: "text", value: "lo" },
      { kind: "text", value: " there" },
    ]);
    expect(out).toEqual({
      text: "Hello there",
      tool_calls: [],
      finish_reason: "stop",
      usage: { input_tokens: 7, output_tokens: 5, total_tokens: 12 },
      provider: "openai-compatible",
      model: "main-model",
      answered_by: "main",
    });
  });

  it("streams reasoning separately from text", async () => {
    const { events, callbacks } = recorder();
    const out = await step(
      models(
        streamingModel([
          { type: "reasoning-start", id: "r1" },
          { type: "reasoning-delta", id: "r1", delta: "think " },
          { type: "reasoning-delta", id: "r1", delta: "hard" },
          { type: "reasoning-end", id: "r1" },
          ...textParts("answer"),
        ]),
      ),
      callbacks,
    );
    expect(events.filter((e) => e.kind === "reasoning").map((e) => e.value)).toEqual(["think ", "hard"]);
    expect(out.reasoning).toBe("think hard");
    expect(out.text).toBe("answer");
  });

  it("streams tool call deltas and returns the structured calls with parsed arguments", async () => {
    const { events, callbacks } = recorder();
    const out = await step(
      models(
        streamingModel([
          ...toolCallParts("call_1", "echo", '{"text":"hi there"}', 3),
          ...toolCallParts("call_2", "current_time", "{}", 1),
          finish("tool-calls"),
        ]),
      ),
      callbacks,
    );
    const toolDeltas = events
      .filter((e) => e.kind === "tool")
      .map((e) => e.value as { tool_call_id: string; tool_name?: string; delta: string });
    expect(toolDeltas[0]).toEqual({ tool_call_id: "call_1", tool_name: "echo", delta: "" });
    expect(
      toolDeltas
        .filter((d) => d.tool_call_id === "call_1")
        .map((d) => d.delta)
        .join(""),
    ).toBe('{"text":"hi there"}');
    expect(toolDeltas.filter((d) => d.tool_name !== undefined).map((d) => d.tool_name)).toEqual(["echo", "current_time"]);
    expect(out.tool_calls).toEqual([
      { id: "call_1", name: "echo", args: { text: "hi there" } },
      { id: "call_2", name: "current_time", args: {} },
    ]);
    expect(out.finish_reason).toBe("tool-calls");
  });

  it("passes calls to unknown tools and unparsable arguments through for the executor to answer", async () => {
    const { callbacks } = recorder();
    const out = await step(
      models(
        streamingModel([
          ...toolCallParts("c1", "no_such_tool", '{"a":1}'),
          ...toolCallParts("c2", "echo", "{not json"),
          finish("tool-calls"),
        ]),
      ),
      callbacks,
    );
    expect(out.tool_calls).toEqual([
      { id: "c1", name: "no_such_tool", args: { a: 1 } },
      { id: "c2", name: "echo", args: "{not json" },
    ]);
  });

  it("sends the system prompt, the messages, tool declarations and the output limit to the model", async () => {
    const main = streamingModel(textParts("ok"));
    const strict = defineTool({
      name: "lookup",
      description: "Look a key up",
      input: z.strictObject({ key: z.string().min(1) }),
      execute: async () => ok("v"),
    });
    await step(models(main), recorder().callbacks, { tools: new ToolRegistry([strict]), maxOutputTokens: 321 });
    const call = main.doStreamCalls[0]!;
    expect(call.prompt[0]).toEqual({ role: "system", content: "SYSTEM PROMPT" });
    expect(call.prompt[1]).toMatchObject({ role: "user", content: [{ type: "text", text: "hello" }] });
    expect(call.maxOutputTokens).toBe(321);
    expect(call.tools).toHaveLength(1);
    expect(call.tools![0]).toMatchObject({
      type: "function",
      name: "lookup",
      description: "Look a key up",
      inputSchema: {
        type: "object",
        properties: { key: { type: "string", minLength: 1 } },
        required: ["key"],
        additionalProperties: false,
      },
    });
  });

  it("uses the model's max_tokens when the caller gives no limit, and declares no tools for an empty registry", async () => {
    const main = streamingModel(textParts("ok"));
    const m = models(main);
    m.main.maxTokens = 99;
    await step(m, recorder().callbacks, { tools: new ToolRegistry([]) });
    expect(main.doStreamCalls[0]!.maxOutputTokens).toBe(99);
    expect(main.doStreamCalls[0]!.tools ?? []).toEqual([]);
  });
});

describe("runModelStep: fallback", () => {
  it("abandons a main model that fails before streaming and records that the fallback answered", async () => {
    const { events, callbacks } = recorder();
    const out = await step(models(failingModel(503, "Service Unavailable"), streamingModel(textParts("from ", "fallback"))), callbacks);
    expect(events).toEqual([
      { kind: "start", value: { provider: "openai-compatible", model: "main-model", role: "main" } },
      { kind: "abandon", value: { role: "main", error: "HTTP 503: Service Unavailable" } },
      { kind: "start", value: { provider: "anthropic", model: "fallback-model", role: "fallback" } },
      { kind: "text", value: "from " },
      { kind: "text", value: "fallback" },
    ]);
    expect(out).toMatchObject({ text: "from fallback", provider: "anthropic", model: "fallback-model", answered_by: "fallback" });
  });

  it("abandons a main model that fails mid-stream; the step result holds only the fallback's output", async () => {
    const { events, callbacks } = recorder();
    const broken = streamingModel([...textParts("partial"), { type: "error", error: new Error("connection reset") }]);
    const out = await step(models(broken, streamingModel(textParts("clean"))), callbacks);
    expect(events.map((e) => e.kind)).toEqual(["start", "text", "abandon", "start", "text"]);
    expect(events[2]!.value).toEqual({ role: "main", error: "connection reset" });
    expect(out.text).toBe("clean");
    expect(out.answered_by).toBe("fallback");
  });

  it("throws ProviderError naming both attempts when main and fallback fail", async () => {
    const { events, callbacks } = recorder();
    const err = await step(models(failingModel(500), failingModel(429, "Too Many Requests")), callbacks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    const pe = err as ProviderError;
    expect(pe.code).toBe("provider_error");
    expect(statusOf(pe.code)).toBe(502);
    expect(pe.attempts).toEqual([
      { role: "main", provider: "openai-compatible", model: "main-model", error: "HTTP 500: Internal Server Error" },
      { role: "fallback", provider: "anthropic", model: "fallback-model", error: "HTTP 429: Too Many Requests" },
    ]);
    expect(pe.message).toContain("main openai-compatible/main-model");
    expect(pe.message).toContain("fallback anthropic/fallback-model");
    expect(events.filter((e) => e.kind === "abandon")).toHaveLength(1);
  });

  it("throws ProviderError without abandoning when there is no fallback", async () => {
    const { events, callbacks } = recorder();
    const err = await step(models(failingModel(500)), callbacks).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).attempts).toHaveLength(1);
    expect(events.map((e) => e.kind)).toEqual(["start"]);
  });
});

describe("runModelStep: abort", () => {
  it("rejects promptly with an abort error mid-stream and does not try the fallback", async () => {
    const { events, callbacks } = recorder();
    const controller = new AbortController();
    const slow = streamingModel(textParts("a", "b", "c", "d", "e", "f"), { chunkDelayMs: 100 });
    const fallback = streamingModel(textParts("fallback"));
    setTimeout(() => controller.abort(), 150);
    const err = await step(models(slow, fallback), callbacks, { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    // Promptly: the stream was left mid-way, not read to its end.
    expect(events.filter((e) => e.kind === "text").length).toBeLessThan(6);
    expect(fallback.doStreamCalls).toHaveLength(0);
    expect(events.some((e) => e.kind === "abandon")).toBe(false);
  });

  it("does not start at all when already aborted", async () => {
    const { events, callbacks } = recorder();
    const controller = new AbortController();
    controller.abort();
    const main = streamingModel(textParts("x"));
    const err = await step(models(main), callbacks, { signal: controller.signal }).catch((e: unknown) => e);
    expect(isAbortError(err)).toBe(true);
    expect(events).toEqual([]);
    expect(main.doStreamCalls).toHaveLength(0);
  });
});

describe("runModelStep: raw tool calls written as text", () => {
  it("converts a step whose whole text is a JSON call into a structured call", async () => {
    const out = await step(models(streamingModel(textParts('{"name":"echo",', '"arguments":{"text":"hi"}}'))), recorder().callbacks);
    expect(out.tool_calls).toEqual([{ id: expect.stringMatching(/^call_raw_/), name: "echo", args: { text: "hi" } }]);
    expect(out.text).toBe("");
    expect(out.finish_reason).toBe("tool-calls");
  });

  it("keeps the prose around <tool_call> tags as the step text", async () => {
    const out = await step(
      models(streamingModel(textParts('Let me check.\n<tool_call>{"name":"current_time","arguments":{}}</tool_call>'))),
      recorder().callbacks,
    );
    expect(out.tool_calls.map((c) => c.name)).toEqual(["current_time"]);
    expect(out.text).toBe("Let me check.");
  });

  it("leaves prose that contains JSON alone", async () => {
    const text = 'Here is the config you asked for: {"name":"echo","arguments":{"text":"hi"}}';
    const out = await step(models(streamingModel(textParts(text))), recorder().callbacks);
    expect(out.tool_calls).toEqual([]);
    expect(out.text).toBe(text);
    expect(out.finish_reason).toBe("stop");
  });

  it("gives identical raw calls in different steps different ids", async () => {
    const json = '{"name":"echo","arguments":{"text":"hi"}}';
    const a = await step(models(streamingModel(textParts(json))), recorder().callbacks);
    const b = await step(models(streamingModel(textParts(json))), recorder().callbacks);
    expect(a.tool_calls[0]!.id).not.toBe(b.tool_calls[0]!.id);
  });
});

describe("runModelStep: what live clients see of raw tool calls", () => {
  const textOf = (events: Recorded[]) =>
    events
      .filter((e) => e.kind === "text")
      .map((e) => e.value)
      .join("");

  it("never streams a JSON call written as text", async () => {
    const { events, callbacks } = recorder();
    const out = await step(models(streamingModel(textParts('  {"name":', '"echo","arguments":{"text":"hi"}}'))), callbacks);
    expect(out.tool_calls).toHaveLength(1);
    expect(textOf(events)).toBe("");
  });

  it("streams prose as it comes, holding back only a possible <tool_call> tag", async () => {
    const { events, callbacks } = recorder();
    const out = await step(
      models(streamingModel(textParts("Let me check.", " <tool", '_call>{"name":"current_time","arguments":{}}</tool_call>'))),
      callbacks,
    );
    expect(out.tool_calls.map((c) => c.name)).toEqual(["current_time"]);
    expect(events.filter((e) => e.kind === "text").map((e) => e.value)).toEqual(["Let me check.", " "]);
  });

  it("releases held JSON-looking text at the end when it is not a call", async () => {
    const { events, callbacks } = recorder();
    const json = '{"answer": 42}';
    const out = await step(models(streamingModel(textParts('{"answer"', ": 42}"))), callbacks);
    expect(out.text).toBe(json);
    expect(textOf(events)).toBe(json);
  });
});

describe("runModelStep: silent models", () => {
  it("fails an attempt that sends nothing within the idle timeout and asks the fallback", async () => {
    const { events, callbacks } = recorder();
    const silent = streamingModel(textParts("late"), { chunkDelayMs: 400 });
    const out = await runModelStep({
      models: models(silent, streamingModel(textParts("from fallback"))),
      system: "S",
      messages,
      tools: registry,
      signal: new AbortController().signal,
      idleTimeoutMs: 100,
      callbacks,
    });
    expect(out.answered_by).toBe("fallback");
    expect(out.text).toBe("from fallback");
    const abandon = events.find((e) => e.kind === "abandon")?.value as { error: string };
    expect(abandon.error).toMatch(/no response from the model/);
  });

  it("keeps an attempt whose parts keep coming, however long it runs in all", async () => {
    const { callbacks } = recorder();
    // Each part within the idle timeout, the whole stream several times longer than it.
    const slow = streamingModel(textParts(..."one two three four five six seven eight".split(/(?= )/)), { chunkDelayMs: 40 });
    const out = await runModelStep({
      models: models(slow, streamingModel(textParts("from fallback"))),
      system: "S",
      messages,
      tools: registry,
      signal: new AbortController().signal,
      idleTimeoutMs: 100,
      callbacks,
    });
    expect(out.answered_by).toBe("main");
    expect(out.text).toBe("one two three four five six seven eight");
  });
});

describe("runModelStep: prompt cache hints and usage details", () => {
  const system = "STABLE PART\n\nVOLATILE PART";
  const cache = { stableChars: "STABLE PART\n\n".length, key: "ses_cache" };
  const usageParts = (): LanguageModelV4StreamPart[] => [
    ...textParts("ok").filter((p) => p.type !== "finish"),
    {
      type: "finish",
      finishReason: { unified: "stop", raw: "stop" },
      usage: {
        inputTokens: { total: 100, noCache: 20, cacheRead: 70, cacheWrite: 10 },
        outputTokens: { total: 30, text: 12, reasoning: 18 },
      },
    },
  ];

  function run(model: MockLanguageModelV4, provider: ProviderKind) {
    return runModelStep({
      models: { main: handle(model, "main", provider), fallback: null, auxiliary: null },
      system,
      messages,
      tools: registry,
      signal: new AbortController().signal,
      cache,
      callbacks: recorder().callbacks,
    });
  }

  it("anthropic: the stable prefix is its own system block with an ephemeral cache breakpoint, the volatile rest follows", async () => {
    const model = streamingModel(usageParts());
    await run(model, "anthropic");
    const prompt = model.doStreamCalls[0]!.prompt;
    expect(prompt.slice(0, 2)).toEqual([
      { role: "system", content: "STABLE PART", providerOptions: { anthropic: { cacheControl: { type: "ephemeral" } } } },
      { role: "system", content: "VOLATILE PART" },
    ]);
  });

  it("openai: one system message and a promptCacheKey per session", async () => {
    const model = streamingModel(usageParts());
    await run(model, "openai");
    const call = model.doStreamCalls[0]!;
    expect(call.prompt.filter((m) => m.role === "system")).toEqual([{ role: "system", content: system }]);
    expect(call.providerOptions).toEqual({ openai: { promptCacheKey: "ses_cache" } });
  });

  it("openai-compatible: one system message, no cache hints", async () => {
    const model = streamingModel(usageParts());
    await run(model, "openai-compatible");
    const call = model.doStreamCalls[0]!;
    expect(call.prompt.filter((m) => m.role === "system")).toEqual([{ role: "system", content: system }]);
    expect(call.providerOptions?.openai).toBeUndefined();
    expect(JSON.stringify(call.prompt)).not.toContain("cacheControl");
  });

  it("records cache-read, cache-write and reasoning tokens from the step's usage", async () => {
    const out = await run(streamingModel(usageParts()), "anthropic");
    expect(out.usage).toEqual({
      input_tokens: 100,
      output_tokens: 30,
      total_tokens: 130,
      cache_read_tokens: 70,
      cache_write_tokens: 10,
      reasoning_tokens: 18,
    });
  });

  it("modelInstructions and cacheProviderOptions send nothing without a cache", () => {
    expect(modelInstructions({ provider: "anthropic" }, system, undefined)).toBe(system);
    expect(cacheProviderOptions({ provider: "openai" }, undefined)).toBeUndefined();
    expect(toUsage({ inputTokens: 3, outputTokens: 4, totalTokens: undefined })).toEqual({
      input_tokens: 3,
      output_tokens: 4,
      total_tokens: 7,
    });
  });
});
