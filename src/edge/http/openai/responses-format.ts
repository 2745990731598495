/**
 * OpenAI's Responses wire format for a Beaver run (docs/openai-api.md): the response object (one
 * assistant message with one `output_text` part) and the stream events, each with its
 * `sequence_number`. The response id names the session and the run (response-id.ts).
 */
import type { Usage } from "../../../runtime/index.ts";

export interface ResponseMeta {
  id: string;
  /** The output message's id. */
  messageId: string;
  created_at: number;
  model: string;
  instructions: string | null;
  previous_response_id: string | null;
  beaver: { session_id: string; run_id: string };
}

export type ResponseStatus = "in_progress" | "completed" | "failed" | "cancelled";

export function responseUsage(usage: Usage) {
  return {
    input_tokens: usage.input_tokens,
    input_tokens_details: { cached_tokens: usage.cache_read_tokens ?? 0 },
    output_tokens: usage.output_tokens,
    output_tokens_details: { reasoning_tokens: usage.reasoning_tokens ?? 0 },
    total_tokens: usage.total_tokens,
  };
}

export function outputText(text: string) {
  return { type: "output_text" as const, text, annotations: [] as unknown[], logprobs: [] as unknown[] };
}

export function messageItem(meta: ResponseMeta, text: string | null, status: "in_progress" | "completed") {
  return {
    id: meta.messageId,
    type: "message" as const,
    status,
    role: "assistant" as const,
    content: text === null ? [] : [outputText(text)],
  };
}

/** The response object; `text` null while nothing is written yet. */
export function responseObject(
  meta: ResponseMeta,
  state: { status: ResponseStatus; text: string | null; usage?: Usage; error?: { code: string; message: string } },
) {
  return {
    id: meta.id,
    object: "response" as const,
    created_at: meta.created_at,
    status: state.status,
    error: state.error ?? null,
    incomplete_details: null,
    instructions: meta.instructions,
    model: meta.model,
    output: state.text === null ? [] : [messageItem(meta, state.text, state.status === "in_progress" ? "in_progress" : "completed")],
    parallel_tool_calls: false,
    previous_response_id: meta.previous_response_id,
    tool_choice: "none" as const,
    tools: [] as unknown[],
    store: true,
    text: { format: { type: "text" as const } },
    usage: state.usage ? responseUsage(state.usage) : null,
    metadata: {},
    beaver: meta.beaver,
  };
}

/** Numbers the stream's events and writes each as `event: <type>` + `data: <json>`. */
export class ResponseEvents {
  #seq = 0;

  event(type: string, fields: Record<string, unknown>): string {
    const data = { type, sequence_number: this.#seq++, ...fields };
    return `event: ${type}\ndata: ${JSON.stringify(data)}\n\n`;
  }
}
