/**
 * `POST /api/sessions/:id/fork`, `/stop` and `/runs/:run_id/retry` (docs/sessions.md, "Fork" and
 * "Stop, close and retry"): a new session from a branch of this one, a graceful stop, and a failed
 * run's input run again. Another workspace's session answers 404.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { limitRuns } from "../rate-limit.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import { assertFieldSize } from "../../../storage/limits.ts";
import { STOP_MAX_TIMEOUT_MS } from "../../../runtime/index.ts";
import { RunIdParam, SessionIdParam, SessionSchema, SubmitAccepted, sessionFor } from "./session-schemas.ts";

const ClientId = z.string().min(1).max(100);

/** An optional JSON body: an absent body is `{}`, a present one is validated like any other. */
function optionalBody<T extends z.ZodType>(schema: T) {
  return { required: false, content: { "application/json": { schema } } };
}

const ForkBody = z.strictObject({
  event_id: z.string().min(1).max(100).optional().describe("The last event of the copied branch (default: the active leaf)"),
  title: z.string().trim().min(1).optional().describe("Default: the source's title; at most session_title_bytes (1 KiB)"),
  client_id: ClientId.optional(),
});

const fork = createRoute({
  method: "post",
  path: "/{id}/fork",
  tags: ["sessions"],
  summary:
    "Fork: a new session whose history is this one's branch up to event_id (default: the active leaf), with the workspace files as they were there",
  middleware: [requireScope("member")] as const,
  request: { params: SessionIdParam, body: optionalBody(ForkBody) },
  responses: { 201: jsonResponse(SessionSchema, "The new session (forked_from names the source)"), ...errorResponses(404, 413, 422, 429) },
});

const StopBody = z.strictObject({
  timeout_ms: z
    .number()
    .int()
    .min(0)
    .max(STOP_MAX_TIMEOUT_MS)
    .optional()
    .describe("How long the running run may finish before it is cancelled (default 5000)"),
  client_id: ClientId.optional(),
});

const stop = createRoute({
  method: "post",
  path: "/{id}/stop",
  tags: ["sessions"],
  summary:
    "Stop: refuse new messages (409 session_stopping), end queued ones as failures, let the running run finish within timeout_ms, then cancel it",
  middleware: [requireScope("member")] as const,
  request: { params: SessionIdParam, body: optionalBody(StopBody) },
  responses: { 200: jsonResponse(SessionSchema, "The session, stopped (or still stopping)"), ...errorResponses(404, 409) },
});

const retry = createRoute({
  method: "post",
  path: "/{id}/runs/{run_id}/retry",
  tags: ["sessions"],
  summary: "Run a failed run's input again as a new run (409 for a run that did not fail)",
  middleware: [requireScope("member"), limitRuns] as const,
  request: { params: RunIdParam, body: optionalBody(z.strictObject({ client_id: ClientId.optional() })) },
  responses: { 202: jsonResponse(SubmitAccepted, "The new run, queued"), ...errorResponses(404, 409, 429) },
});

/** These routes accept an empty POST: the JSON body only when one was sent. */
const hasJson = (c: { req: { header(name: string): string | undefined } }) =>
  c.req.header("Content-Type")?.includes("application/json") === true;

export const sessionLifecycleRoutes = newRouter()
  .openapi(fork, async (c) => {
    const body = hasJson(c) ? c.req.valid("json") : {};
    assertFieldSize(c.env, "title", body.title, "session_title_bytes");
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    await session.view(workspaceId);
    await enforceQuota(c.env, workspaceId, "sessions");
    const { client: _client, ...forked } = await session.fork(workspaceId, {
      ...(body.event_id !== undefined ? { eventId: body.event_id } : {}),
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.client_id !== undefined ? { clientId: body.client_id } : {}),
    });
    return c.json(forked, 201);
  })
  .openapi(stop, async (c) => {
    const body = hasJson(c) ? c.req.valid("json") : {};
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.stop(workspaceId, body.timeout_ms, body.client_id ?? "api"), 200);
  })
  .openapi(retry, async (c) => {
    const { id, run_id } = c.req.valid("param");
    const body = hasJson(c) ? c.req.valid("json") : {};
    const { session, workspaceId } = sessionFor(c, id);
    return c.json({ session_id: id, ...(await session.retry(workspaceId, run_id, body.client_id)) }, 202);
  });
