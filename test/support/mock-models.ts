/**
 * Mock language models for agent tests: streams of real `LanguageModelV4` parts fed through the
 * `ai` SDK's `MockLanguageModelV4`, and handles wrapping them as `resolveModels` would.
 */
import { APICallError, simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4StreamPart } from "@ai-sdk/provider";
import type { ModelHandle, ResolvedModels } from "../../src/runtime/agent/providers.ts";
import type { ProviderKind } from "../../src/storage/config/schema.ts";

export const USAGE = {
  inputTokens: { total: 7, noCache: 7, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 5, text: 5, reasoning: undefined },
};

export const finish = (reason: "stop" | "tool-calls" | "length" = "stop"): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified: reason, raw: reason },
  usage: USAGE,
});

export function textParts(...deltas: string[]): LanguageModelV4StreamPart[] {
  return [
    { type: "text-start", id: "t1" },
    ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t1", delta })),
    { type: "text-end", id: "t1" },
  ];
}

export function toolCallParts(id: string, toolName: string, argsJson: string, chunks = 2): LanguageModelV4StreamPart[] {
  const size = Math.ceil(argsJson.length / chunks);
  const deltas: LanguageModelV4StreamPart[] = [];
  for (let i = 0; i < argsJson.length; i += size) deltas.push({ type: "tool-input-delta", id, delta: argsJson.slice(i, i + size) });
  return [
    { type: "tool-input-start", id, toolName },
    ...deltas,
    { type: "tool-input-end", id },
    { type: "tool-call", toolCallId: id, toolName, input: argsJson },
  ];
}

/** A model that streams `parts` (a finish part is appended unless one is present). */
export function streamingModel(
  parts: LanguageModelV4StreamPart[],
  opts: { chunkDelayMs?: number; modelId?: string } = {},
): MockLanguageModelV4 {
  const chunks = parts.some((p) => p.type === "finish" || p.type === "error") ? parts : [...parts, finish()];
  return new MockLanguageModelV4({
    modelId: opts.modelId ?? "mock",
    doStream: async () => ({
      stream: simulateReadableStream({ chunks, chunkDelayInMs: opts.chunkDelayMs ?? null, initialDelayInMs: null }),
    }),
  });
}

/** A model whose request fails with an HTTP error before anything streams. */
export function failingModel(status = 500, message = "Internal Server Error"): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async () => {
      throw new APICallError({
        message,
        url: "https://model.test/v1/chat/completions",
        requestBodyValues: {},
        statusCode: status,
        isRetryable: false,
      });
    },
  });
}

export function handle(
  model: MockLanguageModelV4,
  role: ModelHandle["role"],
  provider: ProviderKind = "openai-compatible",
  modelId = `${role}-model`,
): ModelHandle {
  return { role, provider, modelId, model };
}

export function models(main: MockLanguageModelV4, fallback?: MockLanguageModelV4): ResolvedModels {
  return { main: handle(main, "main"), fallback: fallback ? handle(fallback, "fallback", "anthropic") : null, auxiliary: null };
}
