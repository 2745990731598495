/**
 * OpenAI's chat completions wire format for a Beaver run (docs/openai-api.md): the completion object,
 * stream chunks, the usage chunk of `stream_options.include_usage`, and the finish reasons. The `id`
 * is `chatcmpl-<run id>`; the session and run travel in `X-Beaver-Session-Id` / `X-Beaver-Run-Id`
 * headers and in a `beaver` field, which OpenAI clients ignore.
 */
import type { RunResult, Usage } from "../../../runtime/index.ts";

export interface CompletionBase {
  id: string;
  created: number;
  model: string;
}

export function completionBase(runId: string, model: string, now = Date.now()): CompletionBase {
  return { id: `chatcmpl-${runId}`, created: Math.floor(now / 1000), model };
}

/** OpenAI's finish reasons: Beaver's run ends with the model's own reason (`stop`, `length`, …). */
export function finishReason(beaverReason: string): "stop" | "length" | "content_filter" {
  if (beaverReason === "length") return "length";
  if (beaverReason === "content-filter" || beaverReason === "content_filter") return "content_filter";
  return "stop";
}

export function chatUsage(usage: Usage) {
  return {
    prompt_tokens: usage.input_tokens,
    completion_tokens: usage.output_tokens,
    total_tokens: usage.total_tokens,
    prompt_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
    completion_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
  };
}

export function beaverInfo(result: RunResult) {
  return { session_id: result.session_id, run_id: result.run_id, provider: result.provider, model: result.model };
}

export function chatCompletion(base: CompletionBase, result: RunResult) {
  return {
    ...base,
    object: "chat.completion" as const,
    system_fingerprint: null,
    choices: [
      {
        index: 0,
        message: { role: "assistant" as const, content: result.output_text, refusal: null },
        logprobs: null,
        finish_reason: finishReason(result.finish_reason),
      },
    ],
    usage: chatUsage(result.usage),
    beaver: beaverInfo(result),
  };
}

/** One `chat.completion.chunk`; with `include_usage` every chunk but the last carries `usage: null`, as OpenAI's do. */
export function chatChunk(base: CompletionBase, delta: Record<string, unknown>, finish: string | null, includeUsage: boolean) {
  return {
    ...base,
    object: "chat.completion.chunk" as const,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
    ...(includeUsage ? { usage: null } : {}),
  };
}

/** The last chunk of `stream_options.include_usage`: no choices, the run's usage. */
export function usageChunk(base: CompletionBase, usage: Usage) {
  return { ...base, object: "chat.completion.chunk" as const, system_fingerprint: null, choices: [], usage: chatUsage(usage) };
}

export const sseData = (value: unknown): string => `data: ${typeof value === "string" ? value : JSON.stringify(value)}\n\n`;
