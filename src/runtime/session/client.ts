/**
 * `SessionClient`: the one way the rest of Beaver talks to a session's Durable Object (docs/sessions.md,
 * "Talking to a session"). It owns the whole protocol: the RPC methods and their `Outcome`s (turned
 * back into values or `AppError`s), the stream endpoints with their internal URLs and headers
 * (protocol.ts), and the typed frames a stream carries. Routes, the faces (sessions, OpenAI, AI SDK
 * UI), the schedules and the task machinery hold a client, never a stub.
 *
 * Session ids are global (the DO is addressed by id); a session remembers its workspace and answers
 * 404 to any other. A malformed id is simply not found.
 */
import type { Env } from "../../storage/env.ts";
import type { SubmitRunInput } from "./contract.ts";
import type { ConfigAndRevisionRow } from "../../storage/config/store.ts";
import type { SessionObject as SessionDO } from "./session-object.ts";
import { unwrap, type Outcome } from "../../kernel/outcome.ts";
import { AppError } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { limitsOf } from "../../storage/limits.ts";
import { readStreamFailure } from "./stream-failure.ts";
import { SESSION_ID_PATTERN, assertMessageSize } from "./session-input.ts";
import { FrameReader, streamRequest, submitRequest, submittedOf, type StreamQuery, type SubmittedRun } from "./protocol.ts";

/** The SessionDO's RPC methods that answer an `Outcome` (the client's methods of the same names). */
export type SessionRpcMethod =
  | "create"
  | "view"
  | "close"
  | "submit"
  | "submitAndWait"
  | "getRun"
  | "listRuns"
  | "waitForRun"
  | "cancel"
  | "cancelByKey"
  | "decideApproval"
  | "context"
  | "transcript"
  | "tree"
  | "events"
  | "rewind"
  | "branch"
  | "compact"
  | "useTicket"
  | "update"
  | "purge"
  | "files"
  | "fileContent"
  | "filesArchive"
  | "fileChanges"
  | "forkExport"
  | "recordFork"
  | "stop"
  | "retry";

/**
 * What a SessionDO RPC method answers, taken from the DO's own signature and unwrapped from its
 * `Outcome`. workers-types maps a stub's results through `Serializable`, which turns JSON fields typed
 * `unknown` (metadata, tool args) into `never`; the values cross RPC intact (structured clone), so
 * the client re-types them from the class (test/runtime/session-client.pure.test.ts checks it).
 */
export type SessionResult<K extends SessionRpcMethod> = Awaited<ReturnType<SessionDO[K]>> extends Outcome<infer T> ? T : never;

export interface CreateSessionInput {
  workspaceId: string;
  /** Defaults to a new `ses_…` id. An id already used in the same workspace returns that session. */
  id?: string;
  title?: string;
  metadata?: Record<string, unknown>;
  /** An isolated session: kept in its Durable Object only, never listed or searched (evaluation runs). */
  isolated?: boolean;
  /** The outbound channel the session posts each run's result to (docs/channels.md); must be configured (422 otherwise). */
  channel?: string;
}

/** What `SessionClient.fork` makes: a new session from a branch of this one (docs/sessions.md, "Fork"). */
export interface ForkInput {
  /** The last event of the copied branch (default: the source's active leaf). */
  eventId?: string;
  /** Default: the source's title. */
  title?: string;
  clientId?: string;
}

/** Options of a session's live stream (`GET /api/sessions/:id/stream`). */
export type LiveStreamOptions = Omit<StreamQuery, "encoding" | "runId">;

/** A run started (or joined) through a stream: its id and its typed frames until it ends. */
export interface StreamedRun {
  submitted: SubmittedRun;
  frames: FrameReader;
}

/** The SESSIONS binding, typed by the class this layer owns (Env itself names no class). */
export function sessionNamespace(env: Env): DurableObjectNamespace<SessionDO> {
  return env.SESSIONS as unknown as DurableObjectNamespace<SessionDO>;
}

/** The raw stub, for tests that look inside the object (`runInDurableObject`); Beaver's own code uses `SessionClient`. */
export function sessionStub(env: Env, sessionId: string): DurableObjectStub<SessionDO> {
  if (!SESSION_ID_PATTERN.test(sessionId)) throw new AppError("not_found", "Session not found");
  return sessionNamespace(env).get(sessionNamespace(env).idFromName(sessionId));
}

export class SessionClient {
  readonly id: string;
  readonly #env: Env;
  readonly #stub: DurableObjectStub<SessionDO>;

  private constructor(env: Env, sessionId: string) {
    this.id = sessionId;
    this.#env = env;
    this.#stub = sessionStub(env, sessionId);
  }

  /** The client of session `sessionId` (a malformed id → 404, like a missing session). */
  static of(env: Env, sessionId: string): SessionClient {
    return new SessionClient(env, sessionId);
  }

  /** Creates a session (or returns the existing one with that id in the same workspace; another workspace's → 409). */
  static async create(env: Env, input: CreateSessionInput): Promise<SessionResult<"view"> & { created: boolean; client: SessionClient }> {
    const sessionId = input.id ?? newId("ses");
    if (!SESSION_ID_PATTERN.test(sessionId)) throw new AppError("validation_failed", `Invalid session id '${sessionId}'`);
    const client = new SessionClient(env, sessionId);
    const out = await client.#call("create", {
      workspaceId: input.workspaceId,
      sessionId,
      title: input.title ?? "",
      metadata: input.metadata ?? {},
      ...(input.isolated ? { isolated: true } : {}),
      ...(input.channel !== undefined ? { channel: input.channel } : {}),
    });
    return { ...out.session, created: out.created, client };
  }

  /**
   * Forks this session (docs/sessions.md, "Fork"): a new session whose history is this one's branch up
   * to `eventId` (default: the active leaf), with the workspace files as they were at that event;
   * `forked_from` on the new one, the fork recorded on this one. An event this session lacks → 422.
   */
  async fork(workspaceId: string, input: ForkInput = {}): Promise<SessionResult<"view"> & { client: SessionClient }> {
    const exported = await this.#call("forkExport", workspaceId, input.eventId);
    const source = await this.view(workspaceId);
    const sessionId = newId("ses");
    const client = new SessionClient(this.#env, sessionId);
    const out = await client.#call("create", {
      workspaceId,
      sessionId,
      title: input.title ?? source.title,
      metadata: source.metadata,
      fork: exported,
    });
    await this.#call("recordFork", workspaceId, { session_id: sessionId, event_id: exported.origin.event_id }, input.clientId ?? "api");
    return { ...out.session, client };
  }

  // ---- RPC ----------------------------------------------------------------------------------------

  async #call<K extends SessionRpcMethod>(method: K, ...args: Parameters<SessionDO[K]>): Promise<SessionResult<K>> {
    const stub = this.#stub as unknown as Record<K, (...a: Parameters<SessionDO[K]>) => Promise<unknown>>;
    return unwrap((await stub[method](...args)) as Outcome<SessionResult<K>>);
  }

  view(workspaceId: string): Promise<SessionResult<"view">> {
    return this.#call("view", workspaceId);
  }

  /** Closes the session; one not stopped yet is stopped first with no grace (docs/sessions.md, "Stop, close and retry"). */
  close(workspaceId: string, clientId: string): Promise<SessionResult<"close">> {
    return this.#call("close", workspaceId, clientId);
  }

  /**
   * Stops the session: new messages answer 409 `session_stopping`, queued ones end as failures, the
   * running run may finish within `timeoutMs` (default 5 s), then it is cancelled. A closed session → 409.
   */
  stop(workspaceId: string, timeoutMs: number | undefined, clientId: string): Promise<SessionResult<"stop">> {
    return this.#call("stop", workspaceId, timeoutMs, clientId);
  }

  /** Re-runs a failed run's input as a new run (`retry_of` names the failed one); a run that did not fail → 409. */
  retry(workspaceId: string, runId: string, clientId?: string): Promise<SessionResult<"retry">> {
    return this.#call("retry", workspaceId, runId, clientId);
  }

  /**
   * Queues a run (durably, before answering). `input.idempotency_key` returns the earlier run with that
   * key; `source: "steer"` during a running run joins it instead. A closed session → 409; a message over
   * the operator's `message_bytes` → 413. `preread`, here and in the other submits: the workspace's
   * config row the edge read beside the request's rate limits (edge/http/run-preread.ts), which the
   * run uses when it opens at once.
   */
  submit(input: SubmitRunInput, preread?: ConfigAndRevisionRow): Promise<SessionResult<"submit">> {
    assertMessageSize(input.content, limitsOf(this.#env).message_bytes);
    return this.#call("submit", input, preread);
  }

  /** `submit` then `waitForRun` in one round trip to the session (docs/performance.md): what a caller that waits anyway uses. */
  submitAndWait(input: SubmitRunInput, timeoutMs: number, preread?: ConfigAndRevisionRow): Promise<SessionResult<"submitAndWait">> {
    assertMessageSize(input.content, limitsOf(this.#env).message_bytes);
    return this.#call("submitAndWait", input, timeoutMs, preread);
  }

  /** The run's result once it ends, or its current state (status queued/running) after `timeoutMs`. */
  waitForRun(runId: string, timeoutMs: number, workspaceId?: string): Promise<SessionResult<"waitForRun">> {
    return this.#call("waitForRun", runId, timeoutMs, workspaceId);
  }

  getRun(runId: string, workspaceId?: string): Promise<SessionResult<"getRun">> {
    return this.#call("getRun", runId, workspaceId);
  }

  listRuns(workspaceId: string, limit: number): Promise<SessionResult<"listRuns">> {
    return this.#call("listRuns", workspaceId, limit);
  }

  cancel(workspaceId: string, runId?: string): Promise<SessionResult<"cancel">> {
    return this.#call("cancel", workspaceId, runId);
  }

  /** Cancels the run submitted under `idempotencyKey` (null when there is none). */
  cancelByKey(workspaceId: string, idempotencyKey: string): Promise<SessionResult<"cancelByKey">> {
    return this.#call("cancelByKey", workspaceId, idempotencyKey);
  }

  decideApproval(...args: Parameters<SessionDO["decideApproval"]>): Promise<SessionResult<"decideApproval">> {
    return this.#call("decideApproval", ...args);
  }

  context(workspaceId: string): Promise<SessionResult<"context">> {
    return this.#call("context", workspaceId);
  }

  transcript(workspaceId: string, limit?: number): Promise<SessionResult<"transcript">> {
    return this.#call("transcript", workspaceId, limit);
  }

  tree(workspaceId: string): Promise<SessionResult<"tree">> {
    return this.#call("tree", workspaceId);
  }

  /** Events from the DO's own log (the source of truth; the HTTP API lists D1's copy). */
  events(workspaceId: string, afterSeq: number, limit: number, includeHidden: boolean): Promise<SessionResult<"events">> {
    return this.#call("events", workspaceId, afterSeq, limit, includeHidden);
  }

  rewind(workspaceId: string, targetEventId: string, clientId: string): Promise<SessionResult<"rewind">> {
    return this.#call("rewind", workspaceId, targetEventId, clientId);
  }

  branch(workspaceId: string, leafEventId: string, clientId: string): Promise<SessionResult<"branch">> {
    return this.#call("branch", workspaceId, leafEventId, clientId);
  }

  /** Renames and/or archives the session (docs/sessions.md, "Rename, archive, delete"). */
  update(
    workspaceId: string,
    changes: { title?: string; archived?: boolean; channel?: string | null },
    clientId: string,
  ): Promise<SessionResult<"update">> {
    return this.#call("update", workspaceId, changes, clientId);
  }

  /** Deletes the session's log in its Durable Object; the caller removes the D1 copy (`deleteSessionRows`). */
  purge(workspaceId: string): Promise<SessionResult<"purge">> {
    return this.#call("purge", workspaceId);
  }

  /** The workspace's files at the active leaf or at `eventId` (docs/workspace.md, "API"). */
  files(workspaceId: string, eventId?: string): Promise<SessionResult<"files">> {
    return this.#call("files", workspaceId, eventId);
  }

  /** One workspace file's bytes at the active leaf or at `eventId`. */
  fileContent(workspaceId: string, path: string, eventId?: string): Promise<SessionResult<"fileContent">> {
    return this.#call("fileContent", workspaceId, path, eventId);
  }

  /** The workspace's files as a gzip-compressed tar stream. */
  filesArchive(workspaceId: string, eventId?: string): Promise<SessionResult<"filesArchive">> {
    return this.#call("filesArchive", workspaceId, eventId);
  }

  /** The file-changing events on the path to the active leaf, with the tree each left. */
  fileChanges(workspaceId: string): Promise<SessionResult<"fileChanges">> {
    return this.#call("fileChanges", workspaceId);
  }

  compact(workspaceId: string, clientId: string, keepTokens?: number): Promise<SessionResult<"compact">> {
    return this.#call("compact", workspaceId, clientId, keepTokens);
  }

  /** Spends a stream ticket's nonce; false when it was used before. */
  useTicket(workspaceId: string, nonce: string, expiresAt: number): Promise<SessionResult<"useTicket">> {
    return this.#call("useTicket", workspaceId, nonce, expiresAt);
  }

  /** Replicates everything pending now; true when D1 has caught up. */
  async flushReplication(): Promise<boolean> {
    return (await this.#stub.flushReplication()) as boolean;
  }

  async stats(): Promise<ReturnType<SessionDO["stats"]>> {
    return (await this.#stub.stats()) as ReturnType<SessionDO["stats"]>;
  }

  // ---- streams ------------------------------------------------------------------------------------

  /**
   * The session's live stream for `GET /api/sessions/:id/stream`: the replay after `lastSeq`, then
   * live — a WebSocket (101) when `headers` ask for an upgrade, the session face's SSE otherwise;
   * answered as the HTTP client gets it.
   */
  openLiveStream(workspaceId: string, options: LiveStreamOptions, headers?: HeadersInit): Promise<Response> {
    return this.#fetchStream(streamRequest(workspaceId, { ...options, encoding: "sse" }, headers));
  }

  /** Queues a run and answers its frames as the session face's SSE (`X-Run-Id`, `X-Run-Status` name the run). */
  submitSse(input: SubmitRunInput, preread?: ConfigAndRevisionRow): Promise<Response> {
    assertMessageSize(input.content, limitsOf(this.#env).message_bytes);
    return this.#fetchStream(submitRequest(input, "sse", preread));
  }

  /** Queues a run and hands back its typed frames (hidden run facts excluded) until it ends: for faces with their own encoding. */
  async submitFrames(input: SubmitRunInput, preread?: ConfigAndRevisionRow): Promise<StreamedRun> {
    assertMessageSize(input.content, limitsOf(this.#env).message_bytes);
    const res = await this.#fetchStream(submitRequest(input, "frames", preread));
    const submitted = submittedOf(res);
    if (!submitted || !res.body) throw new AppError("internal", "The session did not name the run it started");
    return { submitted, frames: new FrameReader(res.body) };
  }

  /** One run's typed frames from its start, then live until it ends (a client picking a run up again). */
  async followRun(workspaceId: string, runId: string, clientId: string): Promise<FrameReader> {
    const res = await this.#fetchStream(
      streamRequest(workspaceId, { lastSeq: 0, includeHidden: false, clientId, runId, encoding: "frames" }),
    );
    if (!res.body) throw new AppError("internal", "The session answered no stream");
    return new FrameReader(res.body);
  }

  /** A stream or WebSocket answer as it is; a failure (the DO speaks outcomes, not HTTP) thrown as the AppError it carried. */
  async #fetchStream(request: Request): Promise<Response> {
    const res = await this.#stub.fetch(request);
    const failure = await readStreamFailure(res);
    if (failure) unwrap(failure);
    return res;
  }
}
