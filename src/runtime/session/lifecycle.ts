/**
 * A session's lifecycle rules (docs/sessions.md, "Stop, close and retry"), as data in and data out:
 * which statuses take messages, what a message still queued when the session stops ends with, and
 * what a retry of a failed run submits. The SessionDO applies them (session-object.ts).
 *
 * open → stopping (new messages refused, the running run may finish until the deadline, then it is
 * cancelled) → stopped → closed. Close goes through stop (with no grace) when it was not stopped yet.
 */
import type { SubmitRunInput } from "./contract.ts";
import type { RunRow, SessionInfo } from "./do-storage.ts";
import { AppError } from "../../kernel/errors.ts";

/** How long a stop lets the running run finish by default (seed backend-flow.md §6.4: shutdown timeout 5 s). */
export const STOP_DEFAULT_TIMEOUT_MS = 5_000;
/** The longest grace a stop may give (a stop answers when the session stopped, so this bounds the request). */
export const STOP_MAX_TIMEOUT_MS = 60_000;
/** After the grace, how long a stop waits for the cancelled run to end before answering `stopping`. */
export const STOP_CANCEL_WAIT_MS = 5_000;

/** Refuses a message to a session that is stopping, stopped (409 `session_stopping`) or closed (409 `session_closed`). */
export function assertAcceptsMessages(session: SessionInfo): void {
  if (session.status === "closed") throw new AppError("session_closed", "The session is closed");
  if (session.status === "stopping" || session.status === "stopped")
    throw new AppError("session_stopping", `The session is ${session.status}; it takes no new messages`, {
      details: { status: session.status },
    });
}

/** The error a message still queued when the session stopped ends with (its run's `error`): never dropped silently. */
export const STOPPED_BEFORE_RUNNING = {
  code: "session_stopping",
  message: "The session was stopped before this message ran; it was not sent to the model",
} as const;

/**
 * What a retry of `run` submits (docs/sessions.md, "Retry"): the same input as a new run, with no
 * idempotency key (it is a new request) and `retry_of` naming the failed run. Only a failed run can
 * be retried (409 otherwise: a completed run has its answer, an open one is still going, a cancelled
 * one was stopped on purpose).
 */
export function retryInput(run: RunRow, clientId: string | undefined): SubmitRunInput {
  if (run.status !== "failed")
    throw new AppError("conflict", `Only a failed run can be retried; run ${run.id} is ${run.status}`, {
      details: { run_id: run.id, status: run.status },
    });
  const { idempotency_key: _key, idempotency_fingerprint: _fingerprint, retry_of: _previous, ...input } = run.input;
  return { ...input, ...(clientId !== undefined ? { client_id: clientId } : {}), retry_of: run.id };
}
