/**
 * The OpenAI-compatible API under /v1 (docs/openai-api.md): `POST /v1/chat/completions`,
 * `POST /v1/responses` and `GET /v1/models`, so OpenAI clients (the `openai` SDK, Open WebUI,
 * LibreChat, Continue) talk to Beaver unchanged. Each request is one Beaver run in a session — a new
 * one unless `X-Beaver-Session-Id` or `previous_response_id` names one — through the same session
 * service and streams as /api/sessions; Beaver's tools run on the server. Authenticated with Beaver
 * bearer tokens like /api; errors in OpenAI's shape (openai/errors.ts).
 */
import { sentByData } from "../../../kernel/sent-by.ts";
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { limitRuns } from "../rate-limit.ts";
import { prereadRunConfig, runPreread } from "../run-preread.ts";
import { AppError } from "../../../kernel/errors.ts";
import { limitsOf } from "../../../storage/limits.ts";
import { assertMessageSize, SESSION_ID_PATTERN, SessionClient, type SubmitRunInput } from "../../../runtime/index.ts";
import { runInstructions, toRunConversation, type ClientMessage, type RunConversation } from "../openai/conversation.ts";
import { listModelTargets, resolveModel, type ModelTarget } from "../openai/models.ts";
import {
  ChatCompletionRequest,
  ResponseRequest,
  chatMessages,
  chatRefusals,
  responseMessages,
  responseRefusals,
} from "../openai/schemas.ts";
import { SESSION_HEADER, SSE_HEADERS, runFailure, runToEnd, sessionForRequest, sseBody, streamRun } from "../openai/runs.ts";
import { RunText } from "../openai/run-text.ts";
import { chatChunk, chatCompletion, completionBase, finishReason, sseData, usageChunk } from "../openai/chat-format.ts";
import { parseResponseId, responseId } from "../openai/response-id.ts";
import { ResponseEvents, messageItem, outputText, responseObject, type ResponseMeta } from "../openai/responses-format.ts";

const OpenAiError = z
  .object({
    error: z.object({ message: z.string(), type: z.string(), code: z.string(), param: z.string().nullable() }),
  })
  .openapi("OpenAIError");

/** The usual error statuses, documented in OpenAI's error shape. */
function openAiErrors(...statuses: (404 | 409 | 413 | 415 | 422 | 429 | 502 | 503)[]) {
  const out: Record<number, { description: string; content: { "application/json": { schema: typeof OpenAiError } } }> = {};
  for (const [status, entry] of Object.entries(errorResponses(...statuses))) {
    out[Number(status)] = { description: entry.description, content: { "application/json": { schema: OpenAiError } } };
  }
  return out;
}

const SessionHeader = z.object({
  "x-beaver-session-id": z
    .string()
    .regex(SESSION_ID_PATTERN)
    .optional()
    .describe("Continue this session (its own log is the history; earlier messages the client resends are ignored)"),
});

const chat = createRoute({
  method: "post",
  path: "/chat/completions",
  tags: ["openai"],
  summary: "OpenAI chat completions: one Beaver run (SSE chunks with stream: true)",
  description:
    "Answers `X-Beaver-Session-Id` and `X-Beaver-Run-Id`. A new session per request unless `X-Beaver-Session-Id` names one. Client tools are refused (400).",
  middleware: [requireScope("member"), prereadRunConfig, limitRuns] as const,
  request: { headers: SessionHeader, body: jsonBody(ChatCompletionRequest) },
  responses: {
    200: {
      description: "A chat.completion, or with stream: true its chunks as SSE ending with `data: [DONE]`",
      content: { "application/json": { schema: z.record(z.string(), z.unknown()) }, "text/event-stream": { schema: z.string() } },
    },
    ...openAiErrors(404, 409, 413, 415, 422, 429, 502, 503),
  },
});

const responses = createRoute({
  method: "post",
  path: "/responses",
  tags: ["openai"],
  summary: "OpenAI Responses: one Beaver run; previous_response_id continues its session (SSE events with stream: true)",
  middleware: [requireScope("member"), prereadRunConfig, limitRuns] as const,
  request: { headers: SessionHeader, body: jsonBody(ResponseRequest) },
  responses: {
    200: {
      description: "A response object, or with stream: true its events as SSE (response.created … response.completed)",
      content: { "application/json": { schema: z.record(z.string(), z.unknown()) }, "text/event-stream": { schema: z.string() } },
    },
    ...openAiErrors(404, 409, 413, 415, 422, 429, 502, 503),
  },
});

const ModelObject = z.object({
  id: z.string(),
  object: z.literal("model"),
  created: z.number(),
  owned_by: z.string(),
  description: z.string(),
});

const models = createRoute({
  method: "get",
  path: "/models",
  tags: ["openai"],
  summary: "The model names this workspace accepts: beaver, the main model's id, agent:<id>",
  middleware: [requireScope("read")] as const,
  responses: { 200: jsonResponse(z.object({ object: z.literal("list"), data: z.array(ModelObject) }), "Models"), ...openAiErrors() },
});

const model = createRoute({
  method: "get",
  path: "/models/{model}",
  tags: ["openai"],
  summary: "One model name this workspace accepts (404 for any other)",
  middleware: [requireScope("read")] as const,
  request: {
    params: z.object({
      model: z
        .string()
        .min(1)
        .max(200)
        .openapi({ param: { name: "model", in: "path" } }),
    }),
  },
  responses: { 200: jsonResponse(ModelObject, "Model"), ...openAiErrors(404) },
});

/** The run input for a conversation: sizes checked (413 naming the field) before any session is created. */
function runInput(c: Context<AppEnv>, target: ModelTarget, conversation: RunConversation, field: string): SubmitRunInput {
  const limit = limitsOf(c.env).message_bytes;
  assertMessageSize(conversation.content, limit, field);
  const extra = runInstructions(conversation);
  if (extra !== undefined) assertMessageSize(extra, limit, field);
  return {
    workspace_id: c.get("principal").workspaceId,
    content: conversation.content,
    client_id: "openai",
    tool_data: sentByData(c.get("principal").tokenId),
    ...(extra !== undefined ? { system_prompt_extra: extra } : {}),
    ...(target.model_override ? { model_override: target.model_override } : {}),
    ...(target.pinned_skills ? { pinned_skills: target.pinned_skills } : {}),
  };
}

function runHeaders(sessionId: string, runId: string): Record<string, string> {
  return { [SESSION_HEADER]: sessionId, "X-Beaver-Run-Id": runId };
}

export const openAiRoutes = newRouter()
  .openapi(chat, async (c) => {
    const body = c.req.valid("json");
    const named = c.req.valid("header")["x-beaver-session-id"];
    chatRefusals(body);
    const messages = chatMessages(body);
    const conversation = toRunConversation(messages, { continuesSession: named !== undefined });
    const workspaceId = c.get("principal").workspaceId;
    const target = await resolveModel(c.env, workspaceId, body.model);
    const input = runInput(c, target, conversation, "messages");
    const sessionId = await sessionForRequest(c.env, workspaceId, named, {
      title: conversation.content,
      metadata: { source: "openai", api: "chat.completions", model: body.model },
    });

    if (body.stream !== true) {
      const result = await runToEnd(c.env, sessionId, input, await runPreread(c));
      if (result.status !== "completed") throw runFailure(result);
      return c.json(chatCompletion(completionBase(result.run_id, body.model), result), 200, runHeaders(sessionId, result.run_id));
    }

    const run = await streamRun(c.env, sessionId, input, await runPreread(c));
    const base = completionBase(run.runId, body.model);
    const includeUsage = body.stream_options?.include_usage === true;
    async function* chunks(): AsyncGenerator<string> {
      yield sseData(chatChunk(base, { role: "assistant", content: "" }, null, includeUsage));
      const text = new RunText();
      for await (const frame of run.frames) {
        for (const piece of text.push(frame)) yield sseData(chatChunk(base, { content: piece }, null, includeUsage));
      }
      const result = await run.result();
      if (result.status !== "completed") {
        // OpenAI's clients raise an `error` object met in the stream as an API error.
        const err = runFailure(result);
        yield sseData({ error: { message: err.message, type: "server_error", code: err.code, param: null } });
      } else {
        yield sseData(chatChunk(base, {}, finishReason(result.finish_reason), includeUsage));
        if (includeUsage) yield sseData(usageChunk(base, result.usage));
      }
      yield sseData("[DONE]");
    }
    return new Response(sseBody(chunks()), { status: 200, headers: { ...SSE_HEADERS, ...runHeaders(sessionId, run.runId) } });
  })
  .openapi(responses, async (c) => {
    const body = c.req.valid("json");
    const workspaceId = c.get("principal").workspaceId;
    responseRefusals(body);
    const messages: ClientMessage[] = responseMessages(body);
    const previous = body.previous_response_id ?? undefined;
    const named = c.req.valid("header")["x-beaver-session-id"];
    if (previous !== undefined && named !== undefined)
      throw new AppError("bad_request", "Send previous_response_id or X-Beaver-Session-Id, not both", {
        details: { param: "previous_response_id" },
      });
    const instructions = body.instructions ?? null;
    if (instructions !== null) messages.unshift({ role: "developer", text: instructions });
    // With previous_response_id the input holds only new items; with a named session the client may resend history.
    const conversation = toRunConversation(messages, {
      continuesSession: previous !== undefined || named !== undefined,
      historyIsNew: previous !== undefined,
    });
    const target = await resolveModel(c.env, workspaceId, body.model);
    const input = runInput(c, target, conversation, "input");
    const sessionId =
      previous !== undefined
        ? await previousSession(c, previous)
        : await sessionForRequest(c.env, workspaceId, named, {
            title: conversation.content,
            metadata: { source: "openai", api: "responses", model: body.model },
          });
    const metaFor = (runId: string): ResponseMeta => ({
      id: responseId(sessionId, runId),
      messageId: `msg_${runId}`,
      created_at: Math.floor(Date.now() / 1000),
      model: body.model,
      instructions,
      previous_response_id: previous ?? null,
      beaver: { session_id: sessionId, run_id: runId },
    });

    if (body.stream !== true) {
      const result = await runToEnd(c.env, sessionId, input, await runPreread(c));
      if (result.status !== "completed") throw runFailure(result);
      const meta = metaFor(result.run_id);
      return c.json(
        responseObject(meta, { status: "completed", text: result.output_text, usage: result.usage }),
        200,
        runHeaders(sessionId, result.run_id),
      );
    }

    const run = await streamRun(c.env, sessionId, input, await runPreread(c));
    const meta = metaFor(run.runId);
    const ids = { item_id: meta.messageId, output_index: 0, content_index: 0 };
    async function* events(): AsyncGenerator<string> {
      const out = new ResponseEvents();
      yield out.event("response.created", { response: responseObject(meta, { status: "in_progress", text: null }) });
      yield out.event("response.in_progress", { response: responseObject(meta, { status: "in_progress", text: null }) });
      yield out.event("response.output_item.added", { output_index: 0, item: messageItem(meta, null, "in_progress") });
      yield out.event("response.content_part.added", { ...ids, part: outputText("") });
      const text = new RunText();
      for await (const frame of run.frames) {
        for (const delta of text.push(frame)) yield out.event("response.output_text.delta", { ...ids, delta, logprobs: [] });
      }
      const result = await run.result();
      yield out.event("response.output_text.done", { ...ids, text: text.text, logprobs: [] });
      yield out.event("response.content_part.done", { ...ids, part: outputText(text.text) });
      yield out.event("response.output_item.done", { output_index: 0, item: messageItem(meta, text.text, "completed") });
      if (result.status === "completed") {
        yield out.event("response.completed", {
          response: responseObject(meta, { status: "completed", text: text.text, usage: result.usage }),
        });
      } else {
        const err = runFailure(result);
        yield out.event("response.failed", {
          response: responseObject(meta, {
            status: "failed",
            text: text.text,
            usage: result.usage,
            error: { code: err.code, message: err.message },
          }),
        });
      }
    }
    return new Response(sseBody(events()), { status: 200, headers: { ...SSE_HEADERS, ...runHeaders(sessionId, run.runId) } });
  })
  .openapi(models, async (c) => {
    const targets = await listModelTargets(c.env, c.get("principal").workspaceId);
    return c.json({ object: "list" as const, data: targets.map(modelObject) }, 200);
  })
  .openapi(model, async (c) => {
    const target = await resolveModel(c.env, c.get("principal").workspaceId, c.req.valid("param").model);
    return c.json(modelObject(target), 200);
  });

function modelObject(t: ModelTarget) {
  return { id: t.id, object: "model" as const, created: t.created, owned_by: t.owned_by, description: t.description };
}

/**
 * The session `previous_response_id` names, for this workspace (another workspace's answers 404). A
 * session's responses form one line: continuing from one that is no longer the session's latest run
 * would silently drop what came after it, so that is 409 (branch the session with /api instead).
 */
async function previousSession(c: Context<AppEnv>, previous: string): Promise<string> {
  const workspaceId = c.get("principal").workspaceId;
  const parsed = parseResponseId(previous);
  const notFound = new AppError("not_found", `No response '${previous}' in this workspace`, { details: { param: "previous_response_id" } });
  if (!parsed) throw notFound;
  const session = SessionClient.of(c.env, parsed.sessionId);
  try {
    await session.getRun(parsed.runId, workspaceId);
  } catch (err) {
    if (err instanceof AppError && err.code === "not_found") throw notFound;
    throw err;
  }
  const [latest] = await session.listRuns(workspaceId, 1);
  if (latest && latest.id !== parsed.runId) {
    const latestId = responseId(parsed.sessionId, latest.id);
    throw new AppError(
      "conflict",
      `previous_response_id is not the latest response of its session (that is ${latestId}); Beaver continues a session in one line (branch it with POST /api/sessions/{id}/branch)`,
      { details: { param: "previous_response_id", session_id: parsed.sessionId, latest_response_id: latestId } },
    );
  }
  return parsed.sessionId;
}
