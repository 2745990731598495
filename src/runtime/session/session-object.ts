/**
 * One Durable Object per session: it owns the session's order (`seq`), its active leaf, its run
 * queue and its live clients. A thin shell: it loads the session's state, calls the log, the run
 * queue and the pure session modules, and answers. RPC methods answer `Outcome`s (errors lose
 * their class across RPC); streams (SSE, WebSocket upgrades) go through `fetch`.
 *
 * The alarm does two jobs: it retries replication to D1 after a failure, and while a run is open
 * it is kept armed so that a run interrupted by an eviction or restart is resumed.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../storage/env.ts";
import type { SubmitRunInput, RunResult } from "./contract.ts";
import type { Message, PersistentEvent, ToolChoice, Usage, VisibleEvent } from "./events.ts";
import type { DisplayItem } from "./display-item.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { DEFAULT_CONFIG } from "../../storage/config/schema.ts";
import { configAndRevisionOf, loadConfigAndRevision, type ConfigAndRevisionRow } from "../../storage/config/store.ts";
import { SessionWorkspace } from "../workspace/session-workspace.ts";
import { fileBytes, fileChanges, filesArchive, listFiles, type FilesListing } from "../workspace/files-view.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { SessionStorage, type RunRow, type SessionInfo } from "./do-storage.ts";
import { SERVER_CLIENT_ID, SessionLog } from "./session-log.ts";
import { LiveClients } from "./live-clients.ts";
import { Replicator } from "./replicator.ts";
import { RunQueue, pendingResult, type SubmitOutcome } from "./run-queue.ts";
import { attempt, attemptAsync, success, toWire, type Outcome } from "../../kernel/outcome.ts";
import { streamFailure } from "./stream-failure.ts";
import {
  STREAM_PATH,
  SUBMIT_PATH,
  WORKSPACE_HEADER,
  readStreamQuery,
  readSubmitEncoding,
  streamHeaders,
  type StreamEncoding,
  type SubmitBody,
} from "./protocol.ts";
import { buildContext } from "./build-context.ts";
import { buildTranscript } from "./display.ts";
import { validateBranchTarget, validateRewindTarget, describeRejection } from "./tree.ts";
import { previewText } from "./event-handlers.ts";
import { excerpt } from "./message-text.ts";
import { runSystemPrompt } from "../agent/prompt.ts";
import { conversationForModel } from "../agent/model-messages.ts";
import { ToolRegistry, type ToolDeclaration } from "../tools/registry.ts";
import { runToolset, toolsFor, type RuntimeServices } from "../services.ts";
import { fixedPromptTokens, frozenTools, historyBudgetTokens } from "./run-assembly.ts";
import { contextSize, type ContextSize } from "../agent/context-size.ts";
import { DEFAULT_KEEP_TOKENS, KEEP_SHARE, compactSession, summariserOf, usageAnchor } from "./compaction.ts";
import { estimateMessageTokens } from "../agent/tokens.ts";
import { resolveModels } from "../agent/providers.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { TITLE_PENDING, titleFromMessage } from "./titles.ts";
// Tool approval, extensions' subscribers and the two-way live channel (docs/approvals.md, docs/extensions.md).
import { ApprovalWaiters, recordDecision, type ApprovalDecision } from "./approvals.ts";
import { handleClientFrame } from "./live-channel.ts";
import { contextThroughHooks, notifySubscribers } from "../extensions.ts";
import { skillMessages, withSkillMessages } from "./skill-messages.ts";
import { offeredByPolicy, toolPolicyOf } from "../tools/policy.ts";
// Outbound channels (docs/channels.md): run results posted from a durable outbox by the alarm.
import { ChannelOutbox, MAX_DELIVERY_ATTEMPTS, deliverPost, deliveryBackoffMs } from "../channels/outbox.ts";
import { channelsOf } from "../channels/config.ts";
// Fork (docs/sessions.md, "Fork"): fork.ts copies the branch, fork-files.ts the workspace history.
import { MAX_RECORDED_FORKS, forkEvents, type ForkOrigin } from "./fork.ts";
import { exportForkFiles, importForkFiles, type ForkFiles } from "../workspace/fork-files.ts";
import type { NewPersistent } from "./events.ts";
// Stop, close and retry (docs/sessions.md, "Stop, close and retry"): the rules in lifecycle.ts.
import { STOP_CANCEL_WAIT_MS, STOP_DEFAULT_TIMEOUT_MS, STOPPED_BEFORE_RUNNING, assertAcceptsMessages, retryInput } from "./lifecycle.ts";

/** While a run is open the alarm fires this often; a live pump just keeps going, a dead one is resumed. */
export const RESUME_CHECK_MS = 5_000;

/** How long deleting a session waits for its cancelled runs to stop before the log goes. */
const PURGE_WAIT_MS = 5_000;

export interface SessionView extends SessionInfo {
  last_seq: number;
  active_leaf: string | null;
  usage: Usage;
  active_run_id: string | null;
  queued_runs: number;
}

export interface RunView {
  id: string;
  status: RunRow["status"];
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  idempotency_key: string | null;
  source: "steer" | "followUp" | null;
  toolset: string | null;
  /** A retry: the failed run whose input this run ran again (docs/sessions.md, "Stop, close and retry"). */
  retry_of: string | null;
  result: RunResult;
}

export interface TreeLeaf {
  event_id: string;
  seq: number;
  ts: number;
  type: VisibleEvent["type"];
  run_id: string | null;
  excerpt: string;
  active: boolean;
}

export interface CreateArgs {
  workspaceId: string;
  sessionId: string;
  title: string;
  metadata: Record<string, unknown>;
  /** Not replicated to D1: never listed nor searched (SessionInfo.isolated). */
  isolated?: boolean;
  /** A fork (docs/sessions.md, "Fork"): the source's branch and workspace history, written with the session in one transaction. */
  fork?: ForkExport;
  /** The outbound channel the session posts its run results to (docs/channels.md); must be configured. */
  channel?: string;
}

/** What a source session hands a new fork (`forkExport`). */
export interface ForkExport {
  origin: ForkOrigin;
  events: NewPersistent[];
  files: ForkFiles;
}

/**
 * The session Durable Object's behaviour. The exported class (src/edge/durable-objects.ts) extends it
 * with the services the composition root built, so the runtime never imports a domain.
 */
export class SessionObject extends DurableObject<Env> {
  readonly #services: RuntimeServices;
  readonly #store: SessionStorage;
  readonly #live: LiveClients;
  readonly #replicator: Replicator;
  #log: SessionLog | null = null;
  #queue: RunQueue | null = null;
  #alarmChain: Promise<void> = Promise.resolve();
  readonly #approvals = new ApprovalWaiters();
  /** Client frames are handled one after another, in arrival order (a rate-limit check awaits I/O). */
  #frames: Promise<void> = Promise.resolve();
  /** The channel outbox (docs/channels.md) and the delivery pass in progress, if any. */
  readonly #outbox: ChannelOutbox;
  #delivering: Promise<void> | null = null;
  /** The config last written to `config_cache` by this instance (skips re-serialising an unchanged one). */
  #cachedConfig: WorkspaceConfig | null = null;

  constructor(ctx: DurableObjectState, env: Env, services: RuntimeServices) {
    super(ctx, env);
    this.#services = services;
    this.#store = new SessionStorage(ctx.storage);
    this.#outbox = new ChannelOutbox(ctx.storage.sql);
    this.#live = new LiveClients(ctx);
    this.#replicator = new Replicator({
      env,
      store: this.#store,
      scheduleRetry: (at) => this.#scheduleAlarm(at),
      fault: services.replicationFault,
    });
    ctx.setWebSocketAutoResponse(new WebSocketRequestResponsePair("ping", "pong"));
  }

  // ---- loading ----------------------------------------------------------------------------------

  #loaded(): { log: SessionLog; queue: RunQueue } | null {
    if (!this.#log) {
      const session = this.#store.session();
      if (!session) return null;
      const subscribers = (this.#services.extensions ?? []).filter((e) => e.onEvent !== undefined);
      const where = { sessionId: session.id, workspaceId: session.workspace_id };
      this.#log = new SessionLog(
        this.#store,
        session,
        this.#live,
        this.#replicator,
        subscribers.length > 0 ? (frame) => notifySubscribers(subscribers, frame, where) : undefined,
      );
      const log = this.#log;
      this.#queue = new RunQueue({
        env: this.env,
        log,
        services: this.#services,
        approvals: this.#approvals,
        loadConfig: (preread) => this.#runInputs(session.workspace_id, preread),
        // ---- workspace (docs/workspace.md): the session's files, following its event tree ----
        workspace: this.#workspace(log),
        onRunEnded: (runId) => {
          this.#live.endRun(runId);
          this.#settleStop();
          void this.#deliverChannels();
        },
        recordEnd: (run) => this.#enqueuePost(run),
      });
    }
    return { log: this.#log, queue: this.#queue! };
  }

  /** The session's file workspace (docs/workspace.md); its tree at any event follows the log, so rewind/branch need no hook. */
  #workspace(log: SessionLog): SessionWorkspace {
    return new SessionWorkspace({ storage: this.ctx.storage, env: this.env, workspaceId: log.session.workspace_id, log });
  }

  /** The session, if it exists and belongs to `workspaceId` (else 404: no existence leak). */
  #require(workspaceId: string | undefined): { log: SessionLog; queue: RunQueue } {
    const loaded = this.#loaded();
    if (!loaded || (workspaceId !== undefined && loaded.log.session.workspace_id !== workspaceId)) throw notFound("Session");
    return loaded;
  }

  /** The workspace config; when D1 is unreachable, the last one this session saw. */
  async #config(workspaceId: string): Promise<WorkspaceConfig> {
    return (await this.#runInputs(workspaceId)).config;
  }

  /**
   * The config and the workspace content revision, read together when a run opens (null revision when
   * D1 is unreachable); `preread` is that row as the edge read it for the run's request, parsed here
   * instead of read again.
   */
  async #runInputs(workspaceId: string, preread?: ConfigAndRevisionRow): Promise<{ config: WorkspaceConfig; revision: string | null }> {
    try {
      const { config, revision } = preread ? configAndRevisionOf(preread) : await loadConfigAndRevision(this.env, workspaceId);
      // The same stored text parses to the same object (storage/config/store.ts): then the cache is current.
      if (config !== this.#cachedConfig) {
        const json = JSON.stringify(config);
        if (this.#store.getMeta<string>("config_cache") !== json) this.#store.setMeta("config_cache", json);
        this.#cachedConfig = config;
      }
      return { config, revision };
    } catch (err) {
      const cached = this.#store.getMeta<string>("config_cache");
      log.warn("session config: D1 unreachable", { workspace_id: workspaceId, using: cached ? "cached" : "default", ...errorFields(err) });
      return { config: cached ? (JSON.parse(cached) as WorkspaceConfig) : DEFAULT_CONFIG, revision: null };
    }
  }

  #scheduleAlarm(at: number): void {
    this.#alarmChain = this.#alarmChain
      .then(async () => {
        const current = await this.ctx.storage.getAlarm();
        if (current === null || current > at) await this.ctx.storage.setAlarm(at);
      })
      .catch((err: unknown) => log.error("setting the session alarm failed", errorFields(err)));
  }

  #view(log: SessionLog, queue: RunQueue): SessionView {
    const open = this.#store.openRuns();
    return {
      ...log.session,
      last_seq: this.#store.maxEventSeq(),
      active_leaf: log.leaf,
      usage: this.#store.usageTotals(),
      active_run_id: queue.current?.id ?? open.find((r) => r.status === "running")?.id ?? null,
      queued_runs: open.filter((r) => r.status === "queued").length,
    };
  }

  // ---- outbound channels (docs/channels.md, "Outbound") -------------------------------------------

  /** A bound session's run result goes into the outbox with the run's end (called inside that transaction). */
  #enqueuePost(run: RunRow): void {
    const session = this.#log?.session;
    if (!session?.channel || !run.result) return;
    this.#outbox.enqueue(
      { type: "run_result", channel: session.channel, session_id: session.id, run_id: run.id, result: run.result },
      Date.now(),
    );
  }

  /** Posts what is due, one pass at a time; failures wait their backoff, and the alarm is set for the next due post. */
  #deliverChannels(): Promise<void> {
    this.#delivering ??= this.#deliveryPass()
      .catch((err: unknown) => log.error("channel delivery pass failed", errorFields(err)))
      .finally(() => {
        this.#delivering = null;
      });
    return this.#delivering;
  }

  async #deliveryPass(): Promise<void> {
    const session = this.#log?.session ?? this.#store.session();
    if (!session) return;
    let rows = this.#outbox.due(Date.now());
    while (rows.length > 0) {
      const config = await this.#config(session.workspace_id);
      for (const row of rows) {
        const outcome = await deliverPost(row, { env: this.env, workspaceId: session.workspace_id, config });
        if (outcome.ok) this.#outbox.remove(row.id);
        else if (outcome.permanent || row.attempts + 1 >= MAX_DELIVERY_ATTEMPTS) {
          log.error("channel post given up", {
            session_id: session.id,
            run_id: row.run_id,
            channel: row.channel,
            attempts: row.attempts + 1,
            error: outcome.error,
          });
          this.#outbox.remove(row.id);
        } else this.#outbox.later(row.id, row.attempts + 1, Date.now() + deliveryBackoffMs(row.attempts + 1), outcome.error);
      }
      rows = this.#outbox.due(Date.now());
    }
    const next = this.#outbox.nextAt();
    if (next !== null) this.#scheduleAlarm(next);
  }

  /** A channel a session binds to must be one the workspace configured (422 otherwise). */
  async #assertChannel(workspaceId: string, channel: string | null | undefined): Promise<void> {
    if (channel === undefined || channel === null) return;
    if (!channelsOf(await this.#config(workspaceId)).some((c) => c.name === channel))
      throw new AppError("unprocessable", `No channel named '${channel}' in the workspace configuration (channels)`, {
        details: { channel },
      });
  }

  // ---- RPC: sessions ----------------------------------------------------------------------------

  /** Creates the session, or returns it when it already exists in the same workspace. */
  async create(args: CreateArgs): Promise<Outcome<{ session: SessionView; created: boolean }>> {
    const existing = this.#store.session();
    if (existing) {
      if (existing.workspace_id !== args.workspaceId)
        return { ok: false, error: { code: "conflict", message: "This session id is taken" } };
      const { log, queue } = this.#require(args.workspaceId);
      return success({ session: this.#view(log, queue), created: false });
    }
    return attemptAsync(() => this.#create(args));
  }

  async #create(args: CreateArgs): Promise<{ session: SessionView; created: boolean }> {
    await this.#assertChannel(args.workspaceId, args.channel);
    const now = Date.now();
    const fork = args.fork;
    const info: SessionInfo = {
      id: args.sessionId,
      workspace_id: args.workspaceId,
      title: args.title,
      status: "open",
      metadata: args.metadata,
      created_at: now,
      updated_at: now,
      ...(args.isolated ? { isolated: true as const } : {}),
      ...(fork ? { forked_from: fork.origin } : {}),
      ...(args.channel !== undefined ? { channel: args.channel } : {}),
    };
    if (!fork) this.#store.saveSession(info);
    else {
      // The session, its copied history and its files land together or not at all.
      try {
        this.#store.atomically(() => {
          this.#store.saveSession(info);
          const { log } = this.#require(args.workspaceId);
          if (fork.events.length > 0) log.append(fork.events, () => importForkFiles(this.ctx.storage, fork.files, now));
        });
      } catch (err) {
        // Rolled back: the log built inside the transaction describes a session that was never stored.
        this.#log = null;
        this.#queue = null;
        throw err;
      }
    }
    const { log, queue } = this.#require(args.workspaceId);
    // The seed's lifecycle event (docs/extensions.md, "Lifecycle events"): subscribers and live streams.
    log.emit({ type: "session_start", run_id: null });
    // Listed in D1 right away when D1 is up; otherwise the alarm retries like any replication.
    await this.#replicator.flush();
    return { session: this.#view(log, queue), created: true };
  }

  /**
   * The branch ending at `eventId` (default: the active leaf) and its workspace history, for a new
   * fork (docs/sessions.md, "Fork"). An event this session does not have as a place in its
   * conversation (another session's, a run fact, a navigation marker) → 422.
   */
  forkExport(workspaceId: string, eventId?: string): Outcome<ForkExport> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      if (eventId !== undefined) {
        const check = validateRewindTarget(log.tree, eventId);
        if (!check.ok)
          throw new AppError("unprocessable", `Cannot fork at ${eventId}: ${describeRejection(check.reason)}`, {
            details: { reason: check.reason },
          });
      }
      const at = eventId ?? log.leaf;
      return {
        origin: { session_id: log.session.id, event_id: at },
        events: forkEvents(log.tree, at),
        files: exportForkFiles(this.ctx.storage, log.tree, at),
      };
    });
  }

  /** Records a fork made of this session: a `session_info` event and `forks` in the session info. */
  recordFork(workspaceId: string, fork: ForkOrigin, clientId: string): Outcome<SessionView> {
    return attempt(() => {
      const { log, queue } = this.#require(workspaceId);
      const record = { ...fork, at: Date.now() };
      log.appendOne({ type: "session_info", run_id: null, client_id: clientId, changes: { forked_to: fork } }, () =>
        log.updateSession({ forks: [...(log.session.forks ?? []), record].slice(-MAX_RECORDED_FORKS) }),
      );
      return this.#view(log, queue);
    });
  }

  view(workspaceId: string): Outcome<SessionView> {
    return attempt(() => {
      const { log, queue } = this.#require(workspaceId);
      return this.#view(log, queue);
    });
  }

  /**
   * Closes the session (docs/sessions.md, "Stop, close and retry"). Close only follows a stop: a
   * session not stopped yet is stopped first with no grace (the running run is cancelled at once,
   * queued messages end as `session_stopping` failures), which is what close always did to open runs.
   * Closing a closed session answers it as it is.
   */
  async close(workspaceId: string, clientId: string): Promise<Outcome<SessionView>> {
    return attemptAsync(async () => {
      const { log, queue } = this.#require(workspaceId);
      if (log.session.status === "closed") return this.#view(log, queue);
      if (log.session.status !== "stopped") await this.#stop(log, queue, 0, clientId);
      // A run that ignored its cancel past the wait is abandoned like a deleted session's: it ends on its next write.
      queue.cancelAll();
      log.updateSession({ status: "closed" });
      log.appendOne({ type: "session_info", run_id: null, client_id: clientId, changes: { status: "closed" } });
      // The seed's lifecycle event (docs/extensions.md, "Lifecycle events").
      log.emit({ type: "session_end", run_id: null, reason: "closed" });
      return this.#view(log, queue);
    });
  }

  /**
   * Stops the session (docs/sessions.md, "Stop, close and retry"): new messages are refused at once
   * (409 `session_stopping`), messages still queued end as failures their submitters read, the running
   * run may finish within `timeoutMs` (default 5 s) and is then cancelled. Answers once the session is
   * `stopped` (or still `stopping` when the cancelled run has not ended within a few more seconds; the
   * alarm finishes the stop). A closed session → 409; a session stopping or stopped answers its state.
   */
  async stop(workspaceId: string, timeoutMs: number | undefined, clientId: string): Promise<Outcome<SessionView>> {
    return attemptAsync(async () => {
      const { log, queue } = this.#require(workspaceId);
      if (log.session.status === "closed") throw new AppError("session_closed", "The session is closed; there is nothing to stop");
      await this.#stop(log, queue, timeoutMs ?? STOP_DEFAULT_TIMEOUT_MS, clientId);
      return this.#view(log, queue);
    });
  }

  async #stop(log: SessionLog, queue: RunQueue, timeoutMs: number, clientId: string): Promise<void> {
    if (log.session.status === "open") {
      const deadline = Date.now() + timeoutMs;
      log.appendOne(
        { type: "session_info", run_id: null, client_id: clientId, changes: { status: "stopping", timeout_ms: timeoutMs } },
        () => {
          log.updateSession({ status: "stopping" });
          this.#store.setMeta("stop_deadline", deadline);
        },
      );
      this.#scheduleAlarm(deadline);
    }
    const running = queue.failWaiting(STOPPED_BEFORE_RUNNING);
    if (running) {
      // After a restart nothing may be executing the open run yet: resume it, so it can finish or be cancelled.
      void queue.wake();
      const deadline = this.#store.getMeta<number>("stop_deadline") ?? Date.now();
      const left = Math.max(0, deadline - Date.now());
      const ended = left > 0 ? await queue.waitFor(running.id, left) : null;
      if (!ended?.status || ended.status === "running" || ended.status === "queued") {
        queue.cancel(running.id);
        await queue.waitFor(running.id, STOP_CANCEL_WAIT_MS);
      }
    }
    this.#settleStop();
  }

  /** A stopping session with nothing open any more is stopped (after each run's end, a stop and the alarm). */
  #settleStop(): void {
    const log = this.#log;
    if (log?.session.status !== "stopping" || this.#store.openRuns().length > 0) return;
    log.appendOne({ type: "session_info", run_id: null, client_id: SERVER_CLIENT_ID, changes: { status: "stopped" } }, () =>
      log.updateSession({ status: "stopped" }),
    );
  }

  /** The alarm's part of a stop: past the deadline the running run is cancelled (also after a restart). */
  #enforceStop(queue: RunQueue): void {
    if (this.#log?.session.status !== "stopping") return;
    const deadline = this.#store.getMeta<number>("stop_deadline") ?? 0;
    if (Date.now() >= deadline) queue.cancelAll();
    this.#settleStop();
  }

  /**
   * A person's changes to the session (docs/sessions.md, "Rename, archive, delete"): a new title (the
   * auxiliary model then leaves it alone) and archiving, recorded with a `session_info` event and
   * replicated to the list before it answers. Unchanged values write nothing.
   */
  async update(
    workspaceId: string,
    changes: { title?: string; archived?: boolean; channel?: string | null },
    clientId: string,
  ): Promise<Outcome<SessionView>> {
    return attemptAsync(async () => {
      const { log, queue } = this.#require(workspaceId);
      await this.#assertChannel(workspaceId, changes.channel);
      const patch: { title?: string; archived_at?: number | null; channel?: string | null } = {};
      const recorded: Record<string, unknown> = {};
      // Binding to an outbound channel (docs/channels.md); null unbinds.
      if (changes.channel !== undefined && changes.channel !== (log.session.channel ?? null)) {
        patch.channel = recorded.channel = changes.channel;
      }
      if (changes.title !== undefined && changes.title !== log.session.title) {
        patch.title = recorded.title = changes.title;
      }
      const archivedAt = log.session.archived_at ?? null;
      if (changes.archived !== undefined && changes.archived !== (archivedAt !== null)) {
        patch.archived_at = changes.archived ? Date.now() : null;
        recorded.archived = changes.archived;
      }
      if (Object.keys(patch).length > 0) {
        log.appendOne({ type: "session_info", run_id: null, client_id: clientId, changes: recorded }, () => {
          log.updateSession(patch);
          if (patch.title !== undefined) this.#store.setMeta(TITLE_PENDING, false);
        });
        // Listed as changed when the answer comes (like `create`); a D1 failure leaves it to the alarm's retry.
        await this.#replicator.flush();
      }
      return this.#view(log, queue);
    });
  }

  /**
   * Deletes the session's log (docs/sessions.md, "Rename, archive, delete"): open runs are cancelled
   * and given a few seconds to stop, then everything the object stores goes. The caller deletes the
   * D1 copy. A run that has not stopped by then fails on its next write, having nothing to write to.
   */
  async purge(workspaceId: string): Promise<Outcome<{ session_id: string }>> {
    return attemptAsync(async () => {
      const { log, queue } = this.#require(workspaceId);
      const sessionId = log.session.id;
      const open = this.#store.openRuns();
      queue.cancelAll();
      await Promise.all(open.map((r) => queue.waitFor(r.id, PURGE_WAIT_MS).catch(() => null)));
      await this.#replicator.flush().catch(() => false);
      // Told before the log goes (a closed session already had its `closed` end).
      if (log.session.status !== "closed") log.emit({ type: "session_end", run_id: null, reason: "deleted" });
      await this.#store.wipe();
      this.#log = null;
      this.#queue = null;
      this.#cachedConfig = null;
      return { session_id: sessionId };
    });
  }

  // ---- RPC: runs --------------------------------------------------------------------------------

  submit(input: SubmitRunInput, preread?: ConfigAndRevisionRow): Outcome<SubmitOutcome> {
    return attempt(() => {
      const outcome = this.#submit(input, preread);
      void this.#require(input.workspace_id).queue.wake();
      return outcome;
    });
  }

  /**
   * Queues the run (durably) and arms the resume alarm; the caller starts the pump when it is ready to.
   * `preread`: the workspace's config row the edge read for this request (run-queue.ts `submit`).
   */
  #submit(input: SubmitRunInput, preread?: ConfigAndRevisionRow): SubmitOutcome {
    const { log, queue } = this.#require(input.workspace_id);
    // A repeated key is answered even after the session closed: it names what already happened.
    const key = input.idempotency_key;
    if (key !== undefined) {
      const run = this.#store.runByIdempotencyKey(key);
      if (run) {
        assertSameRequest(key, run.input.idempotency_fingerprint ?? null, input.idempotency_fingerprint, run.id);
        return { run_id: run.id, status: run.status, deduplicated: true, steered: false };
      }
      const joined = this.#store.runBySteerKey(key);
      if (joined) {
        assertSameRequest(key, joined.fingerprint, input.idempotency_fingerprint, joined.run.id);
        return { run_id: joined.run.id, status: joined.run.status, deduplicated: true, steered: true };
      }
    }
    assertAcceptsMessages(log.session);
    // Titles (titles.ts): derived from the first message now, named by the auxiliary model after the run.
    if (log.session.title === "") {
      log.updateSession({ title: titleFromMessage(input.content) });
      this.#store.setMeta(TITLE_PENDING, true);
    }
    const outcome = queue.submit(input, preread);
    if (!outcome.deduplicated && !outcome.steered) this.#scheduleAlarm(Date.now() + RESUME_CHECK_MS);
    return outcome;
  }

  /**
   * `submit` then `waitForRun` in one call, for callers that wait for the answer anyway (`?wait=true`,
   * `/api/chat`): one Worker → DO hop per turn instead of two (docs/performance.md). The run is queued
   * durably exactly as by `submit`; `result` is its state after `timeoutMs` when it has not ended.
   */
  async submitAndWait(
    input: SubmitRunInput,
    timeoutMs: number,
    preread?: ConfigAndRevisionRow,
  ): Promise<Outcome<{ submitted: SubmitOutcome; result: RunResult }>> {
    return attemptAsync(async () => {
      const submitted = this.#submit(input, preread);
      const { queue } = this.#require(input.workspace_id);
      void queue.wake();
      return { submitted, result: await queue.waitFor(submitted.run_id, timeoutMs) };
    });
  }

  getRun(runId: string, workspaceId?: string): Outcome<RunView> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      const run = this.#store.run(runId);
      if (!run) throw notFound("Run");
      return runView(log.session.id, run);
    });
  }

  listRuns(workspaceId: string, limit: number): Outcome<RunView[]> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      return this.#store.listRuns(limit).map((r) => runView(log.session.id, r));
    });
  }

  async waitForRun(runId: string, timeoutMs: number, workspaceId?: string): Promise<Outcome<RunResult>> {
    return attemptAsync(async () => {
      const { queue } = this.#require(workspaceId);
      if (this.#store.openRuns().length > 0 && !queue.pumping) void queue.wake();
      return queue.waitFor(runId, timeoutMs);
    });
  }

  /**
   * Re-runs a failed run's input as a new run (docs/sessions.md, "Retry"): 404 for an unknown run,
   * 409 for a run that did not fail, 409 `session_stopping`/`session_closed` when the session takes no messages.
   */
  retry(workspaceId: string, runId: string, clientId?: string): Outcome<SubmitOutcome> {
    return attempt(() => {
      const { queue } = this.#require(workspaceId);
      const run = this.#store.run(runId);
      if (!run) throw notFound("Run");
      const outcome = this.#submit({ ...retryInput(run, clientId), workspace_id: workspaceId });
      void queue.wake();
      return outcome;
    });
  }

  cancel(workspaceId: string, runId?: string): Outcome<{ run_id: string; status: RunRow["status"] } | null> {
    return attempt(() => {
      const { queue } = this.#require(workspaceId);
      return this.#cancelNow(queue, queue.cancel(runId));
    });
  }

  /**
   * Cancels the run submitted under `idempotencyKey`, if there is one (null otherwise): how a delegating
   * run stops a child whose run id it never learnt (docs/delegation.md, "Cancel").
   */
  cancelByKey(workspaceId: string, idempotencyKey: string): Outcome<{ run_id: string; status: RunRow["status"] } | null> {
    return attempt(() => {
      const { queue } = this.#require(workspaceId);
      const run = this.#store.runByIdempotencyKey(idempotencyKey);
      return run ? this.#cancelNow(queue, queue.cancel(run.id)) : null;
    });
  }

  /**
   * A cancelled run still `running` that no pump executes (this instance is new: the old one was
   * evicted) is resumed now, only to end `cancelled` — and to tell its calls' tools, which stop what
   * they started elsewhere — rather than at the next alarm.
   */
  #cancelNow<T extends { status: RunRow["status"] } | null>(queue: RunQueue, outcome: T): T {
    if (outcome?.status === "running" && !queue.pumping) void queue.wake();
    return outcome;
  }

  // ---- RPC: tool approval (docs/approvals.md) ----------------------------------------------------

  /**
   * A person's decision on a tool call waiting for approval: 404 for an unknown id, 409 when it was
   * decided already (or timed out). The waiting run goes on at once; a run evicted meanwhile is woken.
   */
  decideApproval(
    workspaceId: string,
    approvalId: string,
    decision: ApprovalDecision,
    clientId: string,
  ): Outcome<{ approval_id: string; run_id: string; tool_name: string; decision: ApprovalDecision; event: PersistentEvent }> {
    return attempt(() => {
      const { log, queue } = this.#require(workspaceId);
      const { event, row } = recordDecision(log, approvalId, decision, "person", clientId);
      if (!this.#approvals.resolve(approvalId, { decision, decided_by: "person" })) void queue.wake();
      return { approval_id: approvalId, run_id: row.run_id, tool_name: row.tool_name, decision, event };
    });
  }

  /** Denies every approval whose time ran out (from the alarm, which fires while a run is open). */
  #expireApprovals(log: SessionLog): void {
    const now = Date.now();
    for (const row of this.#store.openApprovals()) {
      if (row.expires_at > now) break;
      recordDecision(log, row.approval_id, "deny", "timeout", "approval");
      this.#approvals.resolve(row.approval_id, { decision: "deny", decided_by: "timeout" });
    }
  }

  // ---- RPC: views of the log --------------------------------------------------------------------

  /**
   * Exactly what the model would get now: the running run's system prompt, tools and messages, or
   * those of a run opened now; the messages as `conversationForModel` settles them for the provider.
   */
  async context(workspaceId: string): Promise<
    Outcome<{
      system: string;
      tools: ToolDeclaration[];
      /** Why the running run was offered each tool (docs/agent-loop.md, "Tool assembly"); null when idle. */
      tool_choices: ToolChoice[] | null;
      messages: Message[];
      /** How full the context is (context-size.ts): the messages' tokens, anchored on the last reported usage. */
      context_size: ContextSize & { fixed_tokens: number };
      active_leaf: string | null;
    }>
  > {
    return attemptAsync(async () => {
      const { log, queue } = this.#require(workspaceId);
      const config = await this.#config(workspaceId);
      const running = queue.current;
      const system =
        running?.state.system_prompt ??
        runSystemPrompt({ now: new Date(), session: log.session, runtime: config.runtime, contextWindow: config.model?.context_window });
      const policy = toolPolicyOf(config);
      const toolset = await runToolset(this.#services, {
        env: this.env,
        workspaceId,
        config,
        toolset: running?.input.toolset,
        data: running?.input.tool_data ?? {},
      });
      const tools = await new ToolRegistry(
        frozenTools(
          toolset.filter((spec) => running !== null || offeredByPolicy(policy, spec.name)),
          running?.state.tools,
        ),
      ).declarations();
      // The same hooks as the run's model step (docs/extensions.md), so this stays what the model gets.
      // A running run's skill messages sit before its user message, as in its model steps (skill-messages.ts).
      const built = buildContext(log.tree, log.leaf, { maxMessages: config.runtime.max_context_messages });
      const anchor = running?.state.user_event_id === undefined ? undefined : log.tree.get(running.state.user_event_id);
      const hooked = await contextThroughHooks(
        this.#services.extensions ?? [],
        withSkillMessages(built, anchor?.type === "message" ? anchor.message : undefined, skillMessages(running?.state.skill_bodies)),
        {
          env: this.env,
          workspaceId,
          sessionId: log.session.id,
          runId: running?.id ?? null,
          config,
          data: running?.input.tool_data ?? {},
        },
      );
      const messages = conversationForModel(hooked);
      const skills = skillMessages(running?.state.skill_bodies);
      const fixed = fixedPromptTokens(system, tools) + skills.reduce((n, m) => n + estimateMessageTokens(m), 0);
      const size = contextSize(built, { fixedTokens: fixed, anchor: usageAnchor(log.tree, log.leaf) });
      return {
        system,
        tools,
        tool_choices: running?.state.tool_choices ?? null,
        messages,
        context_size: { ...size, fixed_tokens: fixed },
        active_leaf: log.leaf,
      };
    });
  }

  transcript(workspaceId: string, limit?: number): Outcome<{ active_leaf: string | null; items: DisplayItem[] }> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      return { active_leaf: log.leaf, items: buildTranscript(log.tree, log.leaf, limit !== undefined ? { limit } : {}) };
    });
  }

  // ---- workspace files (docs/workspace.md, "API"): the tree at the active leaf or at an event ----
  /** The event whose tree is asked for: the given one (404 when the session lacks it) or the active leaf. */
  #filesAt(workspaceId: string, eventId: string | undefined): { log: SessionLog; at: string | null } {
    const { log } = this.#require(workspaceId);
    if (eventId !== undefined && !log.tree.contains(eventId)) throw notFound("Event");
    return { log, at: eventId ?? log.leaf };
  }

  files(workspaceId: string, eventId?: string): Outcome<FilesListing> {
    return attempt(() => {
      const { log, at } = this.#filesAt(workspaceId, eventId);
      return listFiles(this.#workspace(log), at);
    });
  }

  async fileContent(workspaceId: string, path: string, eventId?: string): Promise<Outcome<Uint8Array>> {
    return attemptAsync(async () => {
      const { log, at } = this.#filesAt(workspaceId, eventId);
      return fileBytes(this.#workspace(log), at, path);
    });
  }

  filesArchive(workspaceId: string, eventId?: string): Outcome<ReadableStream<Uint8Array>> {
    return attempt(() => {
      const { log, at } = this.#filesAt(workspaceId, eventId);
      return filesArchive(this.#workspace(log), at);
    });
  }
  /** The file-changing events on the path to the active leaf (the console's base picker). */
  fileChanges(workspaceId: string): Outcome<ReturnType<typeof fileChanges>> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      return fileChanges(this.#workspace(log), log);
    });
  }
  // ---- end workspace files ----

  tree(workspaceId: string): Outcome<{ active_leaf: string | null; event_count: number; leaves: TreeLeaf[] }> {
    return attempt(() => {
      const { log } = this.#require(workspaceId);
      const leaves = log.tree.leaves().map((e) => ({
        event_id: e.id,
        seq: e.seq,
        ts: e.ts,
        type: e.type,
        run_id: e.run_id,
        excerpt: excerpt(previewText(e) ?? "", 120),
        active: e.id === log.leaf,
      }));
      return { active_leaf: log.leaf, event_count: log.tree.size, leaves };
    });
  }

  /** Events from the DO's own log (the source of truth; the HTTP API lists D1's copy). */
  events(workspaceId: string, afterSeq: number, limit: number, includeHidden: boolean): Outcome<PersistentEvent[]> {
    return attempt(() => {
      this.#require(workspaceId);
      return this.#store.eventsAfter(afterSeq, { includeHidden, limit });
    });
  }

  rewind(workspaceId: string, targetEventId: string, clientId: string): Outcome<{ event: PersistentEvent; active_leaf: string | null }> {
    return attempt(() => this.#navigate(workspaceId, clientId, "rewind", targetEventId));
  }

  branch(workspaceId: string, leafEventId: string, clientId: string): Outcome<{ event: PersistentEvent; active_leaf: string | null }> {
    return attempt(() => this.#navigate(workspaceId, clientId, "branch", leafEventId));
  }

  #navigate(workspaceId: string, clientId: string, kind: "rewind" | "branch", target: string) {
    const { log } = this.#require(workspaceId);
    assertOpen(log.session);
    if (this.#store.openRuns().length > 0)
      throw new AppError("busy", `Cannot ${kind} while a run is queued or running; cancel it or wait`, { retryAfter: 1 });
    const check = kind === "rewind" ? validateRewindTarget(log.tree, target) : validateBranchTarget(log.tree, target);
    if (!check.ok)
      throw new AppError("unprocessable", `Cannot ${kind} to ${target}: ${describeRejection(check.reason)}`, {
        details: { reason: check.reason },
      });
    const event =
      kind === "rewind"
        ? log.appendOne({ type: "rewind", run_id: null, client_id: clientId, target_event_id: target })
        : log.appendOne({ type: "branch", run_id: null, client_id: clientId, leaf_event_id: target });
    return { event, active_leaf: log.leaf };
  }

  /**
   * Compacts the history now (docs/sessions.md, "Compaction"): the older part of the active path is
   * summarised and `keepTokens` of the newest whole groups stay verbatim (default: a quarter of the
   * history window, or 8,000 tokens when no context window is known). 409 while a run is open.
   */
  async compact(
    workspaceId: string,
    clientId: string,
    keepTokens?: number,
  ): Promise<Outcome<{ compacted: boolean; event: PersistentEvent | null; reason: string | null; active_leaf: string | null }>> {
    return attemptAsync(async () => {
      const { log } = this.#require(workspaceId);
      assertOpen(log.session);
      const busy = () => new AppError("busy", "Cannot compact while a run is queued or running; cancel it or wait", { retryAfter: 1 });
      if (this.#store.openRuns().length > 0) throw busy();
      const config = await this.#config(workspaceId);
      const models = await resolveModels(this.env, workspaceId, config, { factory: this.#services.modelFactory });
      const system = runSystemPrompt({
        now: new Date(),
        session: log.session,
        runtime: config.runtime,
        contextWindow: config.model?.context_window,
      });
      const budget = historyBudgetTokens(models, system, toolsFor(this.#services, undefined));
      const keep = keepTokens ?? (budget !== undefined ? Math.max(1, Math.floor(budget * KEEP_SHARE)) : DEFAULT_KEEP_TOKENS);
      const outcome = await compactSession({ log, summariser: summariserOf(models), keepTokens: keep, runId: null, clientId });
      switch (outcome.status) {
        case "compacted":
          return { compacted: true, event: outcome.event, reason: null, active_leaf: log.leaf };
        case "nothing_to_compact":
          return { compacted: false, event: null, reason: "nothing_to_compact", active_leaf: log.leaf };
        case "moved":
          throw busy();
        case "failed":
          throw new AppError("provider_error", `The summary call failed; nothing was compacted: ${outcome.reason}`);
      }
    });
  }

  // ---- RPC: streaming support, maintenance, tests -----------------------------------------------

  /** Spends a stream ticket's nonce; false when it was used before. */
  useTicket(workspaceId: string, nonce: string, expiresAt: number): Outcome<boolean> {
    return attempt(() => {
      this.#require(workspaceId);
      return this.#store.useTicket(nonce, expiresAt, Date.now());
    });
  }

  /** Replicates everything pending now; true when D1 has caught up. */
  async flushReplication(): Promise<boolean> {
    if (!this.#loaded()) return true;
    return this.#replicator.flush();
  }

  stats(): {
    storage_writes: number;
    storage_reads: number;
    replication_batches: number;
    replication_failures: number;
    pending_replication: boolean;
    live_clients: number;
  } {
    return {
      storage_writes: this.#store.writes,
      storage_reads: this.#store.reads,
      replication_batches: this.#replicator.batches,
      replication_failures: this.#replicator.failures,
      pending_replication: this.#store.hasUnreplicated(),
      live_clients: this.#live.count,
    };
  }

  // ---- fetch: streams ---------------------------------------------------------------------------

  override async fetch(request: Request): Promise<Response> {
    const url = new URL(request.url);
    const workspaceId = request.headers.get(WORKSPACE_HEADER) ?? "";
    try {
      if (url.pathname === STREAM_PATH) return this.#openStream(request, url, workspaceId);
      if (url.pathname === SUBMIT_PATH && request.method === "POST") return await this.#submitStream(request, url, workspaceId);
      return streamFailure({ code: "not_found", message: "No such session endpoint" });
    } catch (err) {
      return streamFailure(toWire("session stream", err));
    }
  }

  #openStream(request: Request, url: URL, workspaceId: string): Response {
    const { log } = this.#require(workspaceId);
    const q = readStreamQuery(url);
    if (q.runId !== undefined) return this.#followRun(log, q.runId, q.clientId, q.encoding);
    const replay = log.replay(q.lastSeq, q.includeHidden);
    if (request.headers.get("Upgrade")?.toLowerCase() === "websocket") {
      const pair = new WebSocketPair();
      // maySend, deviceId and tokenId are set by the stream route from the token or ticket (never taken from the client as is).
      this.#live.acceptWebSocket(
        pair[1],
        {
          clientId: q.clientId,
          includeHidden: q.includeHidden,
          maySend: q.maySend === true,
          ...(q.deviceId ? { deviceId: q.deviceId } : {}),
          ...(q.tokenId ? { tokenId: q.tokenId } : {}),
        },
        replay,
      );
      return new Response(null, { status: 101, webSocket: pair[0] });
    }
    const stream = this.#live.openSse({ clientId: q.clientId, includeHidden: q.includeHidden, encoding: q.encoding }, replay);
    return new Response(stream, { headers: streamHeaders(q.encoding) });
  }

  /**
   * One run's frames, from its start (what it persisted, then the message in progress), then live
   * until it ends: how a client that reloaded picks the run up again (docs/ui-stream.md).
   */
  #followRun(log: SessionLog, runId: string, clientId: string, encoding: StreamEncoding): Response {
    const run = this.#store.run(runId);
    if (!run) throw notFound("Run");
    const stream = this.#live.openSse({ clientId, includeHidden: false, runId, encoding }, log.replay(0, false, runId));
    if (run.result) this.#live.endRun(runId);
    return new Response(stream, { headers: streamHeaders(encoding) });
  }

  async #submitStream(request: Request, url: URL, workspaceId: string): Promise<Response> {
    const { input, preread } = (await request.json()) as SubmitBody;
    if (input.workspace_id !== workspaceId) throw notFound("Session");
    const { log, queue } = this.#require(workspaceId);
    const encoding = readSubmitEncoding(url);
    const outcome = this.#submit(input, preread);
    // A repeated idempotency key joins its run where it stands: what it persisted, then the message in progress.
    const replay = outcome.deduplicated ? log.replay(0, false, outcome.run_id) : [];
    // Subscribed before the pump can emit the run's next frame (both happen in this turn).
    const stream = this.#live.openSse(
      { clientId: input.client_id ?? "api", includeHidden: false, runId: outcome.run_id, encoding },
      replay,
    );
    if (this.#store.run(outcome.run_id)?.result) this.#live.endRun(outcome.run_id);
    else void queue.wake();
    return new Response(stream, { headers: streamHeaders(encoding, outcome) });
  }

  // ---- hibernatable WebSockets ------------------------------------------------------------------

  /**
   * A client frame on the session WebSocket (live-channel.ts; docs/sessions.md, "Two-way live
   * channel"), handled in arrival order; the frames act through the same methods as the HTTP routes.
   */
  override async webSocketMessage(ws: WebSocket, message: string | ArrayBuffer): Promise<void> {
    if (typeof message === "string" && message.trim() === '{"type":"ping"}') return ws.send('{"type":"pong"}');
    const handled = this.#frames.then(() =>
      handleClientFrame(
        {
          env: this.env,
          workspaceId: () => this.#loaded()?.log.session.workspace_id ?? null,
          submit: (input) => this.submit(input),
          cancel: (workspaceId) => this.cancel(workspaceId),
          decide: (workspaceId, approvalId, decision, clientId) => this.decideApproval(workspaceId, approvalId, decision, clientId),
        },
        ws,
        this.#live.attachmentOf(ws),
        message,
      ),
    );
    this.#frames = handled.catch((err: unknown) => log.error("websocket client frame failed", errorFields(err)));
    return this.#frames;
  }

  override async webSocketClose(ws: WebSocket, code: number, reason: string): Promise<void> {
    this.#live.closeWebSocket(ws, code === 1005 || code === 1006 ? 1000 : code, reason);
  }

  override async webSocketError(): Promise<void> {
    // The runtime closes the socket; nothing of ours to release.
  }

  // ---- alarm ------------------------------------------------------------------------------------

  override async alarm(): Promise<void> {
    const loaded = this.#loaded();
    if (!loaded) return;
    // Approvals nobody answered in time are denied first, so a resumed run finds them decided.
    this.#expireApprovals(loaded.log);
    // A stop past its deadline cancels what still runs (docs/sessions.md, "Stop, close and retry").
    this.#enforceStop(loaded.queue);
    if (this.#store.openRuns().length > 0) {
      // Re-armed first (directly: the alarm being handled no longer counts as set), so that should this
      // instance die while running, the next alarm resumes the run.
      await this.ctx.storage.setAlarm(Date.now() + RESUME_CHECK_MS);
      // The alarm waits for the pump, but not for a person: once the run is paused on an approval the
      // alarm ends, so the next one can time the approval out (docs/approvals.md).
      const paused = this.#approvals.whenSomeoneWaits();
      await Promise.race([loaded.queue.wake(), paused.promise]);
      paused.stop();
    }
    await this.#replicator.flush();
    await this.#deliverChannels();
    await this.#alarmChain;
    const posts = this.#outbox.nextAt();
    if (posts !== null) await this.ctx.storage.setAlarm(Math.max(posts, Date.now() + 100));
    else if (this.#store.openRuns().length === 0 && !this.#store.hasUnreplicated()) await this.ctx.storage.deleteAlarm();
  }
}

/**
 * A repeated idempotency key must come with the request it was first used with; answering a different
 * message with the first one's run would tell the client its message was taken when it was not.
 * Only checked when both uses carry a fingerprint (internal callers and runs from before it existed don't).
 */
function assertSameRequest(key: string, first: string | null, repeat: string | undefined, runId: string): void {
  if (first === null || repeat === undefined || first === repeat) return;
  throw new AppError(
    "idempotency_key_reused",
    `Idempotency-Key '${key}' was already used in this session with a different request; use a new key for a new message`,
    { details: { idempotency_key: key, run_id: runId } },
  );
}

/** A closed session's log takes no more writes from clients (messages, rewinds, branch switches). */
function assertOpen(session: SessionInfo): void {
  if (session.status === "closed") throw new AppError("session_closed", "The session is closed");
}

function runView(sessionId: string, run: RunRow): RunView {
  return {
    id: run.id,
    status: run.status,
    created_at: run.created_at,
    started_at: run.started_at,
    ended_at: run.ended_at,
    idempotency_key: run.idempotency_key,
    source: run.input.source ?? null,
    toolset: run.input.toolset ?? null,
    retry_of: run.input.retry_of ?? null,
    result: run.result ?? pendingResult(sessionId, run),
  };
}
