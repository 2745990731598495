/**
 * How the rest of Beaver talks to sessions (routes, the toolchain dispatcher, cron jobs): create a
 * session, submit a run, wait for it, read it. Each call goes to the session's Durable Object and
 * turns its `Outcome` back into a value or an `AppError`.
 *
 * Session ids are global (the DO is addressed by id); a session remembers its workspace and answers
 * 404 to any other. Ids are `ses_…` by default; callers may choose their own (e.g. `task:<id>`).
 */
import type { Env } from "../../storage/env.ts";
import type { RunResult, SubmitRunInput } from "./contract.ts";
import type { RunView, SessionObject as SessionDO, SessionView } from "./session-object.ts";
import type { SubmitOutcome } from "./run-queue.ts";
import { unwrap } from "../../kernel/outcome.ts";
import { readStreamFailure } from "./stream-failure.ts";
import { AppError } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { DEFAULT_LIMITS, limitsOf } from "../../storage/limits.ts";
import { sha256Hex } from "../../kernel/hash.ts";

export type { SessionView, RunView, SubmitOutcome };

/** Session ids: letters, digits and `_ - . :` (so `task:<id>` works), 1–128 characters. */
export const SESSION_ID_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

/** Default longest message a run accepts, in UTF-8 bytes (a larger one answers 413; BEAVER_LIMITS.message_bytes overrides). */
export const MAX_MESSAGE_BYTES = DEFAULT_LIMITS.message_bytes;

/**
 * Re-types a SessionDO RPC result from the DO's own method signature. workers-types maps RPC return
 * types through `Serializable`, which turns JSON fields typed `unknown` (metadata, tool args) into
 * `never`; the values themselves cross RPC intact (structured clone).
 */
export async function rpc<K extends keyof SessionDO>(
  _method: K,
  result: Promise<unknown>,
): Promise<SessionDO[K] extends (...args: never[]) => infer R ? Awaited<R> : never> {
  return (await result) as SessionDO[K] extends (...args: never[]) => infer R ? Awaited<R> : never;
}

/** The SESSIONS binding, typed by the class this layer owns (Env itself names no class). */
export function sessionNamespace(env: Env): DurableObjectNamespace<SessionDO> {
  return env.SESSIONS as unknown as DurableObjectNamespace<SessionDO>;
}

export function sessionStub(env: Env, sessionId: string): DurableObjectStub<SessionDO> {
  if (!SESSION_ID_PATTERN.test(sessionId)) throw new AppError("not_found", "Session not found");
  return sessionNamespace(env).get(sessionNamespace(env).idFromName(sessionId));
}

export interface CreateSessionInput {
  workspaceId: string;
  /** Defaults to a new `ses_…` id. An id already used in the same workspace returns that session. */
  id?: string;
  title?: string;
  metadata?: Record<string, unknown>;
  /** An isolated session: kept in its Durable Object only, never listed or searched (evaluation runs). */
  isolated?: boolean;
}

/** Creates a session (or returns the existing one with that id in the same workspace; another workspace's → 409). */
export async function createSession(env: Env, input: CreateSessionInput): Promise<SessionView & { created: boolean }> {
  const sessionId = input.id ?? newId("ses");
  if (!SESSION_ID_PATTERN.test(sessionId)) throw new AppError("validation_failed", `Invalid session id '${sessionId}'`);
  const stub = sessionStub(env, sessionId);
  const out = unwrap(
    await rpc(
      "create",
      stub.create({
        workspaceId: input.workspaceId,
        sessionId,
        title: input.title ?? "",
        metadata: input.metadata ?? {},
        ...(input.isolated ? { isolated: true } : {}),
      }),
    ),
  );
  return { ...out.session, created: out.created };
}

export async function getSession(env: Env, workspaceId: string, sessionId: string): Promise<SessionView> {
  return unwrap(await rpc("view", sessionStub(env, sessionId).view(workspaceId)));
}

/**
 * 413 when a message is over `limitBytes` (the operator's `message_bytes`, storage/limits.ts; the
 * default when the caller has no environment at hand). `field` names the body field the client sent.
 */
export function assertMessageSize(content: string, limitBytes: number = MAX_MESSAGE_BYTES, field = "content"): void {
  const bytes = new TextEncoder().encode(content).byteLength;
  if (bytes > limitBytes) {
    throw new AppError("payload_too_large", `Message content is ${bytes} bytes; the limit is ${limitBytes}`, {
      details: { field, limit_bytes: limitBytes },
    });
  }
}

/**
 * Queues a run (durably, before answering). `input.idempotency_key` returns the earlier run with that
 * key; `source: "steer"` during a running run joins it instead. A closed session → 409.
 */
export async function submitRun(env: Env, sessionId: string, input: SubmitRunInput): Promise<SubmitOutcome> {
  assertMessageSize(input.content, limitsOf(env).message_bytes);
  return unwrap(await rpc("submit", sessionStub(env, sessionId).submit(input)));
}

/** `submitRun` then `waitForRun` in one round trip to the session (docs/performance.md): what a caller that waits anyway uses. */
export async function submitAndWait(
  env: Env,
  sessionId: string,
  input: SubmitRunInput,
  timeoutMs: number,
): Promise<{ submitted: SubmitOutcome; result: RunResult }> {
  assertMessageSize(input.content, limitsOf(env).message_bytes);
  return unwrap(await rpc("submitAndWait", sessionStub(env, sessionId).submitAndWait(input, timeoutMs)));
}

/**
 * The fingerprint an `Idempotency-Key` is bound to (`SubmitRunInput.idempotency_fingerprint`): a hash
 * of what a client's message says — content, source and client id, in a fixed order — and not of how
 * it asked to be answered (`?wait`, `Accept`), so the same message repeated any way is the same request.
 */
export async function messageFingerprint(message: Pick<SubmitRunInput, "content" | "source" | "client_id">): Promise<string> {
  const canonical = JSON.stringify(["message/v1", message.content, message.source ?? null, message.client_id ?? null]);
  return `sha256:${await sha256Hex(canonical)}`;
}

/** The run's result once it ends, or its current state (status queued/running) after `timeoutMs`. */
export async function waitForRun(env: Env, sessionId: string, runId: string, timeoutMs: number, workspaceId?: string): Promise<RunResult> {
  return unwrap(await rpc("waitForRun", sessionStub(env, sessionId).waitForRun(runId, timeoutMs, workspaceId)));
}

export async function getRun(env: Env, sessionId: string, runId: string, workspaceId?: string): Promise<RunView> {
  return unwrap(await rpc("getRun", sessionStub(env, sessionId).getRun(runId, workspaceId)));
}

/** Renames and/or archives a session (a person's changes; docs/sessions.md, "Rename, archive, delete"). */
export async function updateSession(
  env: Env,
  workspaceId: string,
  sessionId: string,
  changes: { title?: string; archived?: boolean },
  clientId: string,
): Promise<SessionView> {
  return unwrap(await rpc("update", sessionStub(env, sessionId).update(workspaceId, changes, clientId)));
}

/** Deletes a session's log in its Durable Object; the caller removes the D1 copy (`deleteSessionRows`). */
export async function purgeSession(env: Env, workspaceId: string, sessionId: string): Promise<void> {
  unwrap(await rpc("purge", sessionStub(env, sessionId).purge(workspaceId)));
}

export async function cancelRun(env: Env, sessionId: string, workspaceId: string, runId?: string) {
  return unwrap(await rpc("cancel", sessionStub(env, sessionId).cancel(workspaceId, runId)));
}

/**
 * Calls the session's stream endpoint (`/stream`, `/submit`): a stream or WebSocket answer is handed
 * back as it is; a failure (the DO speaks outcomes, not HTTP) is thrown as the AppError it carried.
 */
export async function fetchSessionStream(env: Env, sessionId: string, request: Request): Promise<Response> {
  const res = await sessionStub(env, sessionId).fetch(request);
  const failure = await readStreamFailure(res);
  if (failure) unwrap(failure);
  return res;
}
