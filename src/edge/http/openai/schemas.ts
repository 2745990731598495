/**
 * Request bodies of the OpenAI-compatible routes as Beaver reads them (docs/openai-api.md). Loose on
 * purpose: OpenAI clients send many optional fields (temperature, top_p, user, …) that a Beaver run
 * decides for itself, so unknown fields are accepted and ignored; the fields Beaver reads are
 * validated, and the ones it cannot honour (client tools, several choices, JSON modes, background
 * responses) are refused with a 400 naming them (`refusals` below).
 */
import { z } from "@hono/zod-openapi";
import { refused } from "./conversation.ts";
import type { ClientMessage } from "./conversation.ts";
import { contentText } from "./conversation.ts";

const ROLES = ["system", "developer", "user", "assistant", "tool", "function"] as const;

const TextPart = z.looseObject({ type: z.string().max(64), text: z.string().optional() });
const Content = z.union([z.string(), z.array(TextPart).max(1000), z.null()]);

const ChatMessage = z.looseObject({
  role: z.enum(ROLES),
  content: Content.optional(),
  name: z.string().max(256).optional(),
  tool_calls: z.array(z.unknown()).optional(),
  tool_call_id: z.string().optional(),
});

const Model = z.string().min(1).max(200).describe("`beaver`, the workspace's main model id, or `agent:<id>` (GET /v1/models)");
const ClientTools = z.array(z.unknown()).optional().describe("Client-side tools are not supported: a non-empty list answers 400");

export const ChatCompletionRequest = z
  .looseObject({
    model: Model,
    messages: z.array(ChatMessage).min(1).max(1000),
    stream: z.boolean().nullable().optional(),
    stream_options: z.looseObject({ include_usage: z.boolean().optional() }).nullable().optional(),
    n: z.number().int().nullable().optional().describe("Only 1"),
    tools: ClientTools,
    functions: ClientTools,
    tool_choice: z.unknown().optional(),
    function_call: z.unknown().optional(),
    response_format: z.looseObject({ type: z.string() }).nullable().optional().describe("Only `text`"),
  })
  .openapi("ChatCompletionRequest");
export type ChatCompletionRequest = z.infer<typeof ChatCompletionRequest>;

const InputItem = z.looseObject({
  type: z.string().max(64).optional(),
  role: z.enum(ROLES).optional(),
  content: Content.optional(),
});

export const ResponseRequest = z
  .looseObject({
    model: Model,
    input: z.union([z.string(), z.array(InputItem).min(1).max(1000)]),
    instructions: z.string().nullable().optional(),
    previous_response_id: z.string().max(512).nullable().optional().describe("Continues the session of that response"),
    stream: z.boolean().nullable().optional(),
    tools: ClientTools,
    tool_choice: z.unknown().optional(),
    conversation: z.unknown().optional().describe("Not supported: use previous_response_id"),
    background: z.boolean().nullable().optional().describe("Only false"),
    store: z.boolean().nullable().optional(),
  })
  .openapi("ResponseRequest");
export type ResponseRequest = z.infer<typeof ResponseRequest>;

/** A tool_choice that asks for no client tool: absent, null, "none" or "auto" (with no tools, auto means none). */
function noToolChoice(choice: unknown): boolean {
  return choice === undefined || choice === null || choice === "none" || choice === "auto";
}

/** 400 for what a chat completion request asks that Beaver does not do. */
export function chatRefusals(body: ChatCompletionRequest): void {
  if (body.tools && body.tools.length > 0)
    throw refused("tools", "client-side tools are not supported; Beaver's own tools run on the server (docs/openai-api.md)");
  if (body.functions && body.functions.length > 0) throw refused("functions", "client-side functions are not supported");
  if (!noToolChoice(body.tool_choice)) throw refused("tool_choice", "client-side tools are not supported");
  if (!noToolChoice(body.function_call)) throw refused("function_call", "client-side functions are not supported");
  if (body.n !== undefined && body.n !== null && body.n !== 1) throw refused("n", "only one choice (n = 1) is supported");
  if (body.response_format && body.response_format.type !== "text") throw refused("response_format", "only text answers are supported");
}

/** The chat messages as text; client tool calls and results are refused (Beaver never asked a client to run a tool). */
export function chatMessages(body: ChatCompletionRequest): ClientMessage[] {
  return body.messages.map((m, i) => {
    if (m.role === "tool" || m.role === "function" || (m.tool_calls && m.tool_calls.length > 0))
      throw refused(`messages.${i}`, "client-side tool calls and results are not supported");
    return { role: m.role, text: contentText(m.content, `messages.${i}.content`) };
  });
}

export function responseRefusals(body: ResponseRequest): void {
  if (body.tools && body.tools.length > 0)
    throw refused("tools", "client-side tools are not supported; Beaver's own tools run on the server (docs/openai-api.md)");
  if (!noToolChoice(body.tool_choice)) throw refused("tool_choice", "client-side tools are not supported");
  if (body.conversation !== undefined && body.conversation !== null)
    throw refused("conversation", "conversations are not supported; continue with previous_response_id");
  if (body.background === true) throw refused("background", "background responses are not supported");
}

/** The input items as messages: a string is one user message; only message items are taken. */
export function responseMessages(body: ResponseRequest): ClientMessage[] {
  if (typeof body.input === "string") return [{ role: "user", text: body.input }];
  return body.input.map((item, i) => {
    const type = item.type ?? "message";
    if (type === "function_call" || type === "function_call_output" || type === "custom_tool_call_output")
      throw refused(`input.${i}`, "client-side tool calls and results are not supported");
    if (type !== "message" || item.role === undefined || item.role === "tool" || item.role === "function")
      throw refused(`input.${i}`, `input items of type '${type}' are not supported; send messages with text`);
    return { role: item.role, text: contentText(item.content, `input.${i}.content`) };
  });
}
