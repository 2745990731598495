/**
 * The AI SDK UI message stream (docs/ui-stream.md): `POST /api/ui/chat` takes what `useChat` with
 * `DefaultChatTransport({ api: "/api/ui/chat" })` sends (`id` = the Beaver session id, `messages`,
 * `trigger`, `messageId`), submits the last user message as a run (the session keeps the history)
 * and answers that run as UI message chunks; `GET /api/ui/chat/:id/stream` replays and follows the
 * session's active run (204 when none), which is how `resume: true` continues after a reload.
 */
import { sentByData } from "../../../kernel/sent-by.ts";
import { createRoute, z } from "@hono/zod-openapi";
import type { Env } from "../../../storage/env.ts";
import { newRouter, jsonBody, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { limitRuns } from "../rate-limit.ts";
import { prereadRunConfig, runPreread } from "../run-preread.ts";
import { AppError } from "../../../kernel/errors.ts";
import { limitsOf } from "../../../storage/limits.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import {
  SESSION_ID_PATTERN,
  SessionClient,
  aiSdk,
  UiChunkMapper,
  assertMessageSize,
  messageFingerprint,
  type BeaverUIChunk,
  type FrameReader,
  type SubmitRunInput,
} from "../../../runtime/index.ts";
import { RequestedSkills } from "./session-schemas.ts";

/** The client id runs started here carry (so the log says where a message came from). */
const UI_CLIENT_ID = "ui";

const UIPart = z.object({ type: z.string().min(1).max(100), text: z.string().optional() }).passthrough();
const UIMessage = z
  .object({
    id: z.string().min(1).max(150),
    role: z.enum(["system", "user", "assistant"]),
    parts: z.array(UIPart).max(1000),
  })
  .passthrough()
  .openapi("UIMessage");

/** What DefaultChatTransport sends: its own fields, plus whatever `body` the app adds (unknown keys are ignored). */
const UIChatBody = z.object({
  id: z.string().regex(SESSION_ID_PATTERN).describe("The chat id: a Beaver session id (created in your workspace when new)"),
  messages: z.array(UIMessage).min(1).max(10_000).describe("The chat's messages; only the last one (a user message) is submitted"),
  trigger: z.enum(["submit-message", "regenerate-message"]).default("submit-message"),
  messageId: z.string().max(150).optional(),
  skills: RequestedSkills.optional(),
});

const streamResponse = {
  description: "The run as an AI SDK UI message stream (SSE; header `x-vercel-ai-ui-message-stream: v1`)",
  content: { "text/event-stream": { schema: z.string() } },
};

const post = createRoute({
  method: "post",
  path: "/",
  tags: ["ui"],
  summary: "AI SDK UI chat: submit the last user message to the session `id` and stream the run as UI message chunks",
  middleware: [requireScope("member"), prereadRunConfig, limitRuns] as const,
  request: { body: jsonBody(UIChatBody) },
  responses: { 200: streamResponse, ...errorResponses(404, 409, 413, 422, 429) },
});

const resume = createRoute({
  method: "get",
  path: "/{id}/stream",
  tags: ["ui"],
  summary: "AI SDK UI chat: the session's active run from its start, then live (204 when no run is active)",
  middleware: [requireScope("read")] as const,
  request: { params: z.object({ id: z.string().regex(SESSION_ID_PATTERN) }) },
  responses: { 200: streamResponse, 204: { description: "No active run" }, ...errorResponses(404) },
});

/** The text of a UI message: its text parts, joined by blank lines. */
function textOf(message: z.infer<typeof UIMessage>): string {
  return message.parts
    .filter((p) => p.type === "text" && typeof p.text === "string")
    .map((p) => p.text as string)
    .join("\n\n");
}

/** The session, created in the caller's workspace when it does not exist yet (after the quota check). */
async function ensureSession(env: Env, workspaceId: string, sessionId: string): Promise<SessionClient> {
  const session = SessionClient.of(env, sessionId);
  try {
    await session.view(workspaceId);
    return session;
  } catch (err) {
    if (!(err instanceof AppError) || err.code !== "not_found") throw err;
  }
  await enforceQuota(env, workspaceId, "sessions");
  try {
    return (await SessionClient.create(env, { workspaceId, id: sessionId })).client;
  } catch (err) {
    // The id is another workspace's session: answered like any object of another workspace.
    if (err instanceof AppError && err.code === "conflict") throw new AppError("not_found", "Session not found");
    throw err;
  }
}

/** One run's typed frames, encoded once as UI message chunks, ending with `finish`. */
function uiChunks(session: SessionClient, workspaceId: string, runId: string, frames: FrameReader) {
  const mapper = new UiChunkMapper(session.id, runId);
  return new ReadableStream<BeaverUIChunk>({
    start(controller) {
      for (const chunk of mapper.start()) controller.enqueue(chunk);
    },
    async pull(controller) {
      // A pull that enqueues nothing is not called again: read frames until one maps to a chunk.
      for (;;) {
        const frame = await frames.next();
        if (frame === null) break;
        const chunks = mapper.push(frame);
        for (const chunk of chunks) controller.enqueue(chunk);
        if (chunks.length > 0) return;
      }
      // The session ends its answer after the run's last frame; the run's stored result settles `finish`.
      const run = await session.getRun(runId, workspaceId).catch(() => null);
      const result = run?.result;
      const ending = result
        ? {
            status: result.status,
            usage: result.usage,
            provider: result.provider,
            model: result.model,
            ...(result.error ? { error: result.error } : {}),
          }
        : undefined;
      for (const chunk of mapper.finish(ending)) controller.enqueue(chunk);
      controller.close();
    },
    cancel(reason) {
      // The client left: the run goes on; `GET …/stream` picks it up again.
      return frames.cancel(reason);
    },
  });
}

async function uiResponse(stream: ReadableStream<BeaverUIChunk>, sessionId: string, runId: string): Promise<Response> {
  // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { createUIMessageStreamResponse } = await aiSdk();
  return createUIMessageStreamResponse({
    stream,
    headers: { "x-beaver-session-id": sessionId, "x-beaver-run-id": runId },
  });
}

export const uiChatRoutes = newRouter()
  .openapi(post, async (c) => {
    const body = c.req.valid("json");
    const workspaceId = c.get("principal").workspaceId;
    if (body.trigger === "regenerate-message")
      throw new AppError(
        "unprocessable",
        "Regenerate is not supported: rewind the session (POST /api/sessions/{id}/rewind) and send again",
      );
    const last = body.messages[body.messages.length - 1]!;
    if (last.role !== "user") throw new AppError("validation_failed", "The last message must be the user's message to submit");
    const content = textOf(last);
    if (content.trim() === "") throw new AppError("validation_failed", "The last user message has no text part");
    // Before creating a session: a refused message must not leave an empty one behind.
    assertMessageSize(content, limitsOf(c.env).message_bytes, "messages");
    const session = await ensureSession(c.env, workspaceId, body.id);

    const input: SubmitRunInput = {
      workspace_id: workspaceId,
      content,
      client_id: UI_CLIENT_ID,
      tool_data: sentByData(c.get("principal").tokenId),
      ...(body.skills && body.skills.length > 0 ? { skills: [...new Set(body.skills)] } : {}),
      // The UI message id keys the run: a retried request follows the run it started instead of starting another.
      idempotency_key: `ui:${last.id}`,
      idempotency_fingerprint: await messageFingerprint({ content, client_id: UI_CLIENT_ID }),
    };
    const { submitted, frames } = await session.submitFrames(input, await runPreread(c));
    return uiResponse(uiChunks(session, workspaceId, submitted.run_id, frames), body.id, submitted.run_id);
  })
  .openapi(resume, async (c) => {
    const { id } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    const session = SessionClient.of(c.env, id);
    const runId = (await session.view(workspaceId)).active_run_id;
    if (runId === null) return c.body(null, 204);
    const frames = await session.followRun(workspaceId, runId, UI_CLIENT_ID);
    return uiResponse(uiChunks(session, workspaceId, runId, frames), id, runId);
  });
