/**
 * Starting and following one Beaver run for the OpenAI-compatible routes, through the same session
 * client and streams as `/api/sessions/:id/messages` (docs/openai-api.md): a new session per request
 * unless the request names one, the run queued durably before anything is answered, its typed frames
 * (`SessionClient.submitFrames`) encoded once as OpenAI's events, and its result read once they end.
 */
import type { Env } from "../../../storage/env.ts";
import { SessionClient, excerpt, type FrameReader, type RunResult, type SubmitRunInput } from "../../../runtime/index.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import type { ConfigAndRevisionRow } from "../../../storage/config/store.ts";
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
  if (named !== undefined) return (await SessionClient.of(env, named).view(workspaceId)).id;
  await enforceQuota(env, workspaceId, "sessions");
  return (await SessionClient.create(env, { workspaceId, title: excerpt(fresh.title, 80), metadata: fresh.metadata })).id;
}

/**
 * Queues the run and waits for its result (non-streaming answers) in one call to the session, as
 * `?wait=true` does; a run still going after the wait is 503 with where to follow it. `preread`: the
 * config row read beside the rate limits (run-preread.ts).
 */
export async function runToEnd(env: Env, sessionId: string, input: SubmitRunInput, preread?: ConfigAndRevisionRow): Promise<RunResult> {
  const {
    submitted: { run_id },
    result,
  } = await SessionClient.of(env, sessionId).submitAndWait(input, WAIT_TIMEOUT_MS, preread);
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
  /** The run's typed frames (hidden run facts excluded) until its stream ends. */
  frames: FrameReader;
  /** The run's result, read after its frames ended. */
  result(): Promise<RunResult>;
}

/** Queues the run, subscribed to its frames before it can start. */
export async function streamRun(env: Env, sessionId: string, input: SubmitRunInput, preread?: ConfigAndRevisionRow): Promise<StreamedRun> {
  const session = SessionClient.of(env, sessionId);
  const { submitted, frames } = await session.submitFrames(input, preread);
  const runId = submitted.run_id;
  return { runId, frames, result: () => session.waitForRun(runId, WAIT_TIMEOUT_MS, input.workspace_id) };
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
