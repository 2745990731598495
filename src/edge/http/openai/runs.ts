/**
 * Starting and following one Beaver run for the OpenAI-compatible routes, through the same session
 * service and streams as `/api/sessions/:id/messages` (docs/openai-api.md): a new session per request
 * unless the request names one, the run queued durably before anything is answered, its frames read
 * from the session's SSE answer, and its result read once its stream ends.
 */
import type { Env } from "../../../storage/env.ts";
import type { RunResult, SubmitRunInput } from "../../../runtime/session/contract.ts";
import type { StreamFrame } from "../../../runtime/session/events.ts";
import { createSession, fetchSessionStream, getSession, submitRun, waitForRun } from "../../../runtime/session/service.ts";
import { WORKSPACE_HEADER } from "../../../runtime/session/session-object.ts";
import { excerpt } from "../../../runtime/session/message-text.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import { AppError } from "../../../kernel/errors.ts";
import { runErrorHttpCode } from "../routes/chat.ts";
import { WAIT_TIMEOUT_MS } from "../routes/session-messages.ts";

/** The header naming a session to continue, and answering the session a request used. */
export const SESSION_HEADER = "X-Beaver-Session-Id";

/** The session a request runs in: the one it names (it must exist in the workspace), or a new one. */
export async function sessionForRequest(
  env: Env,
  workspaceId: string,
  named: string | undefined,
  fresh: { title: string; metadata: Record<string, unknown> },
): Promise<string> {
  if (named !== undefined) return (await getSession(env, workspaceId, named)).id;
  await enforceQuota(env, workspaceId, "sessions");
  return (await createSession(env, { workspaceId, title: excerpt(fresh.title, 80), metadata: fresh.metadata })).id;
}

/** Queues the run and waits for its result (non-streaming answers); a run still going after the wait is 503 with where to follow it. */
export async function runToEnd(env: Env, sessionId: string, input: SubmitRunInput): Promise<RunResult> {
  const { run_id } = await submitRun(env, sessionId, input);
  const result = await waitForRun(env, sessionId, run_id, WAIT_TIMEOUT_MS, input.workspace_id);
  if (result.status === "queued" || result.status === "running") {
    throw new AppError("upstream_unavailable", "The run did not finish in time; follow it at /api/sessions/{id}/runs/{run_id}", {
      details: { session_id: sessionId, run_id },
      retryAfter: 5,
    });
  }
  return result;
}

/** A finished run that did not complete, as the error an HTTP answer carries. */
export function runFailure(result: RunResult): AppError {
  const error = result.error ?? { code: "cancelled", message: "The run was cancelled" };
  return new AppError(runErrorHttpCode(error.code), error.message, {
    details: { session_id: result.session_id, run_id: result.run_id, run_error_code: error.code },
  });
}

export interface StreamedRun {
  runId: string;
  /** The run's frames (hidden run facts excluded) until its stream ends. */
  frames: AsyncGenerator<StreamFrame>;
  /** The run's result, read after its frames ended. */
  result(): Promise<RunResult>;
}

/** Queues the run through the session's SSE submit endpoint, subscribed to its frames before it can start. */
export async function streamRun(env: Env, sessionId: string, input: SubmitRunInput): Promise<StreamedRun> {
  const res = await fetchSessionStream(
    env,
    sessionId,
    new Request("https://session/submit", {
      method: "POST",
      headers: { "Content-Type": "application/json", [WORKSPACE_HEADER]: input.workspace_id },
      body: JSON.stringify(input),
    }),
  );
  const runId = res.headers.get("X-Run-Id") ?? "";
  return {
    runId,
    frames: sseFrames(res.body),
    result: () => waitForRun(env, sessionId, runId, WAIT_TIMEOUT_MS, input.workspace_id),
  };
}

/** The JSON `data:` of each event of an SSE body (comments and keep-alives skipped). */
export async function* sseFrames(body: ReadableStream<Uint8Array> | null): AsyncGenerator<StreamFrame> {
  if (!body) return;
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  try {
    for (;;) {
      const { value, done } = await reader.read();
      if (done) return;
      buffer += decoder.decode(value, { stream: true });
      let end: number;
      while ((end = buffer.indexOf("\n\n")) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const data = block
          .split("\n")
          .filter((line) => line.startsWith("data: "))
          .map((line) => line.slice(6))
          .join("\n");
        if (data !== "") yield JSON.parse(data) as StreamFrame;
      }
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}

/**
 * A response body from an async generator of SSE text; a client that goes away stops the generator
 * (the run itself goes on in its session, as with any stream).
 */
export function sseBody(chunks: AsyncGenerator<string>): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      const { value, done } = await chunks.next();
      if (done) controller.close();
      else controller.enqueue(encoder.encode(value));
    },
    async cancel() {
      await chunks.return(undefined);
    },
  });
}

export const SSE_HEADERS = { "Content-Type": "text/event-stream; charset=utf-8", "Cache-Control": "no-cache, no-transform" };
