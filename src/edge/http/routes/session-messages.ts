/**
 * `POST /api/sessions/:id/messages`: talk to a session. The run is queued durably before anything
 * is answered. Three ways to get the answer: `Accept: text/event-stream` streams that run's events
 * (transient and persistent, each with its seq) until it ends; `?wait=true` answers the run's
 * result when it ends; otherwise 202 with the run id. `Idempotency-Key` returns the same run for the
 * same message, and 422 `idempotency_key_reused` for a different one (docs/sessions.md, Idempotency).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { limitRuns } from "../rate-limit.ts";
import { prereadRunConfig, runPreread } from "../run-preread.ts";
import { MAX_MESSAGE_BYTES, assertMessageSize, messageFingerprint, type SubmitRunInput } from "../../../runtime/index.ts";
import { limitsOf } from "../../../storage/limits.ts";
import { sentByData } from "../../../kernel/sent-by.ts";
import { Flag, RequestedSkills, RunResultSchema, SessionIdParam, SubmitAccepted, sessionFor } from "./session-schemas.ts";

/** How long `?wait=true` holds the request before answering 202 with the run's current state. */
export const WAIT_TIMEOUT_MS = 120_000;

export const MessageBody = z.strictObject({
  content: z
    .string()
    .min(1)
    .describe(`The message (at most ${MAX_MESSAGE_BYTES} bytes of UTF-8 by default, BEAVER_LIMITS.message_bytes; larger answers 413)`),
  client_id: z.string().min(1).max(100).optional(),
  source: z.enum(["steer", "followUp"]).optional().describe("steer: join the running run; followUp: queue as a follow-up task"),
  skills: RequestedSkills.optional(),
  toolset: z
    .enum(["default", "code"])
    .optional()
    .describe("code: the run also gets the session workspace's file tools and shell (docs/workspace.md); default: the chat tool set"),
});

const post = createRoute({
  method: "post",
  path: "/{id}/messages",
  tags: ["sessions"],
  summary: "Send a message: starts (or queues) a run (rate limited per token and per workspace: 429 with Retry-After)",
  middleware: [requireScope("member"), prereadRunConfig, limitRuns] as const,
  request: {
    params: SessionIdParam,
    query: z.strictObject({ wait: Flag.optional() }),
    headers: z.object({ "idempotency-key": z.string().min(1).max(200).optional() }),
    body: jsonBody(MessageBody),
  },
  responses: {
    200: {
      description: "With ?wait=true: the run's result. With Accept: text/event-stream: the run's events as SSE until it ends.",
      content: { "application/json": { schema: RunResultSchema }, "text/event-stream": { schema: z.string() } },
    },
    202: jsonResponse(SubmitAccepted.extend({ result: RunResultSchema.optional() }), "Queued (or still running after the wait)"),
    ...errorResponses(404, 409, 413, 422, 429),
  },
});

export const messageRoutes = newRouter().openapi(post, async (c) => {
  const { id } = c.req.valid("param");
  const body = c.req.valid("json");
  assertMessageSize(body.content, limitsOf(c.env).message_bytes);
  const { session, workspaceId } = sessionFor(c, id);
  const idempotencyKey = c.req.valid("header")["idempotency-key"];
  const input: SubmitRunInput = {
    workspace_id: workspaceId,
    content: body.content,
    tool_data: sentByData(c.get("principal").tokenId),
    ...(body.client_id !== undefined ? { client_id: body.client_id } : {}),
    ...(body.source !== undefined ? { source: body.source } : {}),
    ...(body.skills && body.skills.length > 0 ? { skills: [...new Set(body.skills)] } : {}),
    ...(body.toolset !== undefined ? { toolset: body.toolset } : {}),
    ...(idempotencyKey !== undefined ? { idempotency_key: idempotencyKey, idempotency_fingerprint: await messageFingerprint(body) } : {}),
  };

  const preread = await runPreread(c);
  if ((c.req.header("Accept") ?? "").includes("text/event-stream")) {
    // The session face's SSE, written once by the session and passed on as it is (docs/sessions.md).
    const res = await session.submitSse(input, preread);
    return new Response(res.body, { status: 200, headers: res.headers });
  }

  if (c.req.valid("query").wait) {
    // One hop to the session: queue, then wait (docs/performance.md).
    const { submitted, result } = await session.submitAndWait(input, WAIT_TIMEOUT_MS, preread);
    if (result.status === "queued" || result.status === "running")
      return c.json({ session_id: id, ...submitted, status: result.status, result }, 202);
    return c.json(result, 200);
  }
  const submitted = await session.submit(input, preread);
  return c.json({ session_id: id, ...submitted }, 202);
});
