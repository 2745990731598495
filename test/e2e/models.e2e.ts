/**
 * The real `@ai-sdk/openai-compatible` provider, as `resolveModels` builds it, against the scripted
 * model server over HTTP: streaming text, tool calls across a small tool loop, main → fallback,
 * raw JSON tool calls, scripted failures, non-streaming calls and cancellation. Runs in Node; the
 * session loop's own e2e tests drive the same server through wrangler dev.
 */
import { describe, expect, inject, it } from "vitest";
import { generateText, streamText, type ModelMessage } from "ai";
import { createOpenAICompatible } from "@ai-sdk/openai-compatible";
import { resolveModels, type ResolvedModels } from "../../src/runtime/agent/providers.ts";
import { isAbortError, ProviderError, runModelStep, type StepCallbacks } from "../../src/runtime/agent/model-step.ts";
import { toModelMessages } from "../../src/runtime/agent/model-messages.ts";
import { ToolRegistry } from "../../src/runtime/tools/registry.ts";
import { builtinTools } from "../../src/runtime/tools/builtins/index.ts";
import { executeToolCall } from "../../src/runtime/tools/executor.ts";
import { composeConfigSchema, type ModelEntry } from "../../src/storage/config/schema.ts";
import type { Env } from "../../src/storage/env.ts";
import type { Message } from "../../src/runtime/session/events.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const server = scriptedModelClient(modelUrl);
const registry = new ToolRegistry(builtinTools());
/** No secrets and no D1 needed: entries below have no api_key_secret. The scripted server is on loopback. */
const noBindings = { BEAVER_ALLOW_PRIVATE_EGRESS: "true" } as Env;

const entry = (id: string): ModelEntry => ({ provider: "openai-compatible", id, base_url: `${modelUrl}/v1` });

// The core configuration schema (model sections, defaults): the app's composed schema imports the runtime's
// entry, whose Durable Object class needs `cloudflare:workers`, which Node cannot load.
const CoreConfigSchema = composeConfigSchema([]);

async function models(main: string, fallback?: string): Promise<ResolvedModels> {
  const config = CoreConfigSchema.parse({ model: entry(main), ...(fallback ? { fallback_model: entry(fallback) } : {}) });
  return resolveModels(noBindings, "ws-e2e", config);
}

function recorder() {
  const events: { kind: string; value: unknown }[] = [];
  const callbacks: StepCallbacks = {
    onStart: (v) => events.push({ kind: "start", value: v }),
    onTextDelta: (v) => events.push({ kind: "text", value: v }),
    onReasoningDelta: (v) => events.push({ kind: "reasoning", value: v }),
    onToolCallDelta: (v) => events.push({ kind: "tool", value: v }),
    onAbandon: (v) => events.push({ kind: "abandon", value: v }),
  };
  return { events, callbacks };
}

function step(m: ResolvedModels, messages: ModelMessage[], callbacks = recorder().callbacks, signal = new AbortController().signal) {
  return runModelStep({ models: m, system: "You are a test.", messages, tools: registry, signal, callbacks });
}

describe("scripted model server through the real openai-compatible provider", () => {
  it("streams text with usage, and records what the model was sent", async () => {
    const provider = createOpenAICompatible({ name: "scripted", baseURL: `${modelUrl}/v1`, apiKey: "sk-e2e-key", includeUsage: true });
    const deltas: string[] = [];
    const result = streamText({ model: provider.chatModel("echo:e2e-text"), prompt: "hello there world" });
    for await (const d of result.textStream) deltas.push(d);
    expect(deltas.join("")).toBe("echo: hello there world");
    expect(deltas.length).toBeGreaterThan(1);
    expect(await result.finishReason).toBe("stop");
    expect((await result.usage).inputTokens).toBeGreaterThan(0);

    const [req] = await server.requests("echo:e2e-text");
    expect(req?.authorization).toBe("Bearer sk-e2e-key");
    expect(req?.body).toMatchObject({ model: "echo:e2e-text", stream: true, stream_options: { include_usage: true } });
  });

  it("answers non-streaming requests too", async () => {
    const provider = createOpenAICompatible({ name: "scripted", baseURL: `${modelUrl}/v1` });
    const result = await generateText({ model: provider.chatModel("echo:e2e-plain"), prompt: "plain" });
    expect(result.text).toBe("echo: plain");
    expect(result.usage.totalTokens).toBeGreaterThan(0);
  });

  it("drives a tool loop: tools-2 calls echo twice, then answers; tool results go back with their call ids", async () => {
    const m = await models("tools-2:e2e-loop");
    const log: Message[] = [{ role: "user", content: "loop please" }];
    const toolDeltaNames: (string | undefined)[] = [];
    for (let i = 0; i < 3; i++) {
      const { events, callbacks } = recorder();
      const out = await step(m, toModelMessages(log), callbacks);
      toolDeltaNames.push(...events.filter((e) => e.kind === "tool").map((e) => (e.value as { tool_name?: string }).tool_name));
      log.push({ role: "assistant", text: out.text, tool_calls: out.tool_calls, finish_reason: out.finish_reason });
      if (out.tool_calls.length === 0) {
        expect(i).toBe(2);
        expect(out.text).toBe("done after 2 tool calls");
        break;
      }
      expect(out.finish_reason).toBe("tool-calls");
      expect(out.tool_calls).toEqual([{ id: expect.any(String), name: "echo", args: { text: `call ${i + 1} of 2` } }]);
      for (const call of out.tool_calls) {
        const ctx = {
          env: noBindings,
          workspaceId: "ws-e2e",
          sessionId: "s",
          runId: "r",
          toolCallId: call.id,
          signal: new AbortController().signal,
          data: {},
          emitUpdate: () => {},
        };
        const res = await executeToolCall(registry, call, ctx);
        log.push({ role: "tool_result", tool_call_id: call.id, tool_name: call.name, content: res.content, is_error: !res.ok });
      }
    }
    expect(toolDeltaNames.filter(Boolean)).toEqual(["echo", "echo"]);

    const reqs = await server.requests("tools-2:e2e-loop");
    expect(reqs).toHaveLength(3);
    const tools = reqs[0]!.body.tools as {
      type: string;
      function: { name: string; parameters: { properties: Record<string, unknown> } };
    }[];
    expect(tools.map((t) => t.function.name).sort()).toEqual(["current_time", "echo"]);
    expect(tools.find((t) => t.function.name === "echo")!.function.parameters.properties).toHaveProperty("text");
    const last = reqs[2]!.body.messages;
    expect(last[0]).toEqual({ role: "system", content: "You are a test." });
    const firstCallId = (log[1] as { tool_calls: { id: string }[] }).tool_calls[0]!.id;
    expect(last.find((msg) => msg.role === "tool")).toMatchObject({ tool_call_id: firstCallId, content: "call 1 of 2" });
  });

  it("falls back when main is down, and fails with ProviderError when both are", async () => {
    const { events, callbacks } = recorder();
    const out = await step(await models("down:e2e", "echo:e2e-fallback"), [{ role: "user", content: "anyone?" }], callbacks);
    expect(out).toMatchObject({
      text: "echo: anyone?",
      answered_by: "fallback",
      model: "echo:e2e-fallback",
      provider: "openai-compatible",
    });
    expect(events.find((e) => e.kind === "abandon")?.value).toMatchObject({ role: "main", error: expect.stringContaining("HTTP 500") });

    const err = await step(await models("down:e2e-a", "down:e2e-b"), [{ role: "user", content: "x" }]).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ProviderError);
    expect((err as ProviderError).attempts.map((a) => a.model)).toEqual(["down:e2e-a", "down:e2e-b"]);
  });

  it("turns a tool call written as JSON text into a structured call", async () => {
    const out = await step(await models("json-tool:e2e"), [{ role: "user", content: "ping" }]);
    expect(out.tool_calls).toEqual([{ id: expect.stringMatching(/^call_raw_/), name: "echo", args: { text: "ping" } }]);
    expect(out.text).toBe("");
  });

  it("plays scripted steps in order: an HTTP failure, then reasoning, text and malformed tool arguments", async () => {
    await server.script("scripted:e2e", [
      { status: 503 },
      { reasoning: "thinking it over", text: "scripted answer" },
      { tool_calls: [{ name: "echo", arguments: "{broken" }] },
    ]);
    const m = await models("scripted:e2e");
    const failed = await runModelStep({
      models: m,
      system: "",
      messages: [{ role: "user", content: "1" }],
      tools: registry,
      signal: new AbortController().signal,
      maxRetries: 0,
      callbacks: recorder().callbacks,
    }).catch((e: unknown) => e);
    expect((failed as ProviderError).attempts[0]!.error).toContain("HTTP 503");

    const ok = await step(m, [{ role: "user", content: "2" }]);
    expect(ok.text).toBe("scripted answer");
    expect(ok.reasoning).toBe("thinking it over");

    const bad = await step(m, [{ role: "user", content: "3" }]);
    expect(bad.tool_calls).toHaveLength(1);
    expect(bad.tool_calls[0]!.name).toBe("echo");
    const res = await executeToolCall(registry, bad.tool_calls[0]!, {
      env: noBindings,
      workspaceId: "w",
      sessionId: "s",
      runId: "r",
      toolCallId: "t",
      signal: new AbortController().signal,
      data: {},
      emitUpdate: () => {},
    });
    expect(res.error?.code).toBe("invalid_arguments");
  });

  it("stops streaming promptly when the step is aborted", async () => {
    await server.script("slow:e2e", [{ text: "one two three four five six seven eight nine ten", chunk_delay_ms: 200 }]);
    const controller = new AbortController();
    const { events, callbacks } = recorder();
    setTimeout(() => controller.abort(), 500);
    const err = await step(await models("slow:e2e"), [{ role: "user", content: "go" }], callbacks, controller.signal).catch(
      (e: unknown) => e,
    );
    expect(isAbortError(err)).toBe(true);
    // Promptly: the stream was left mid-way (ten words), not read to its end.
    const streamed = events.filter((e) => e.kind === "text").length;
    expect(streamed).toBeGreaterThan(0);
    expect(streamed).toBeLessThan(10);
  });

  it("answers 404 for a model id with no script and no rule", async () => {
    const res = await fetch(`${modelUrl}/v1/chat/completions`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ model: "nothing-here", messages: [] }),
    });
    expect(res.status).toBe(404);
    expect(((await res.json()) as { error: { message: string } }).error.message).toContain("nothing-here");
  });
});
