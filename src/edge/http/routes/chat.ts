/**
 * `POST /api/chat {message, session_id?}`: one-shot chat (docs/sessions.md, "Runs: a durable queue").
 * It creates a session when none is given, runs one turn and answers the run's result; a failed run
 * answers the HTTP error for its code (no model → 422, provider down → 502…), so a chat client sees the
 * same errors as any other route.
 */
import { sentByData } from "../../../kernel/sent-by.ts";
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { limitRuns } from "../rate-limit.ts";
import { prereadRunConfig, runPreread } from "../run-preread.ts";
import { limitsOf } from "../../../storage/limits.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import { AppError, type ErrorCode } from "../../../kernel/errors.ts";
import { SESSION_ID_PATTERN, SessionClient, assertMessageSize, excerpt } from "../../../runtime/index.ts";
import { WAIT_TIMEOUT_MS } from "./session-messages.ts";
import { RequestedSkills } from "./session-schemas.ts";

const ChatResponse = z
  .object({
    session_id: z.string(),
    run_id: z.string(),
    output_text: z.string(),
    finish_reason: z.string(),
    tool_iterations: z.number(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    usage: z.object({
      input_tokens: z.number(),
      output_tokens: z.number(),
      total_tokens: z.number(),
      cache_read_tokens: z.number().optional(),
      cache_write_tokens: z.number().optional(),
      reasoning_tokens: z.number().optional(),
    }),
  })
  .openapi("ChatResponse");

const chat = createRoute({
  method: "post",
  path: "/",
  tags: ["chat"],
  summary: "One turn: send a message (to a new or existing session) and get the answer",
  middleware: [requireScope("member"), prereadRunConfig, limitRuns] as const,
  request: {
    body: jsonBody(
      z.strictObject({
        message: z.string().min(1),
        session_id: z.string().regex(SESSION_ID_PATTERN).optional(),
        skills: RequestedSkills.optional(),
      }),
    ),
  },
  responses: { 200: jsonResponse(ChatResponse, "The answer"), ...errorResponses(404, 409, 413, 422, 429, 502, 503) },
});

/** A failed run's error code as an HTTP error code (also for /v1: src/edge/http/openai/runs.ts). */
export function runErrorHttpCode(code: string): ErrorCode {
  switch (code) {
    case "no_model_configured":
    case "provider_error":
    case "upstream_unavailable":
    case "egress_refused":
      return code;
    case "cancelled":
      return "conflict";
    case "max_tool_iterations":
    case "run_token_budget":
      return "unprocessable";
    default:
      return "internal";
  }
}

export const chatRoutes = newRouter().openapi(chat, async (c) => {
  const body = c.req.valid("json");
  const workspaceId = c.get("principal").workspaceId;
  // Before creating a session: a refused message must not leave an empty one behind.
  assertMessageSize(body.message, limitsOf(c.env).message_bytes, "message");
  if (body.session_id === undefined) await enforceQuota(c.env, workspaceId, "sessions");
  const session =
    body.session_id !== undefined
      ? SessionClient.of(c.env, body.session_id)
      : (await SessionClient.create(c.env, { workspaceId, title: excerpt(body.message, 80) })).client;
  const sessionId = session.id;
  const {
    submitted: { run_id },
    result,
  } = await session.submitAndWait(
    {
      workspace_id: workspaceId,
      content: body.message,
      client_id: "chat",
      tool_data: sentByData(c.get("principal").tokenId),
      ...(body.skills && body.skills.length > 0 ? { skills: [...new Set(body.skills)] } : {}),
    },
    WAIT_TIMEOUT_MS,
    await runPreread(c),
  );
  if (result.status === "queued" || result.status === "running") {
    throw new AppError("upstream_unavailable", "The run did not finish in time; follow it at /api/sessions/{id}/runs/{run_id}", {
      details: { session_id: sessionId, run_id },
      retryAfter: 5,
    });
  }
  if (result.status !== "completed") {
    const error = result.error ?? { code: "cancelled", message: "The run was cancelled" };
    throw new AppError(runErrorHttpCode(error.code), error.message, {
      details: { session_id: sessionId, run_id, run_error_code: error.code },
    });
  }
  return c.json(
    {
      session_id: sessionId,
      run_id,
      output_text: result.output_text,
      finish_reason: result.finish_reason,
      tool_iterations: result.tool_iterations,
      provider: result.provider,
      model: result.model,
      usage: result.usage,
    },
    200,
  );
});
