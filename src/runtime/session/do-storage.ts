/**
 * The SessionDO's own SQLite storage: the authoritative event log, the durable run queue, the
 * markers of tool calls in flight, queued steer messages and small key/value state (session info,
 * active leaf, seq high-water mark). Every method is synchronous (DO SQLite is local); durability
 * towards clients comes from the Durable Object output gate, which holds any reply or broadcast
 * until these writes are on disk.
 */
import type { PersistentEvent, ToolChoice, Usage } from "./events.ts";
import type { ChannelOrigin, RunResult, RunStatus, SubmitRunInput } from "./contract.ts";
import { WORKSPACE_FILES_SCHEMA } from "../../storage/files/schema.ts";
import { CHANNEL_OUTBOX_SCHEMA } from "../channels/outbox.ts";
import { migrate, type Migration } from "../../storage/do-migrations.ts";
import type { ActivatedSkill } from "../skills.ts";
import type { ForkOrigin, ForkRecord } from "./fork.ts";

export interface SessionInfo {
  id: string;
  workspace_id: string;
  title: string;
  /** `stopping`/`stopped`: a stop was asked (docs/sessions.md, "Stop and close"); both refuse new messages. */
  status: "open" | "stopping" | "stopped" | "closed";
  metadata: Record<string, unknown>;
  created_at: number;
  updated_at: number;
  /**
   * An isolated session (evaluation runs, docs/evaluation.md): never replicated to D1, so it is not
   * listed with the workspace's sessions nor found by session search; reachable only by its id.
   */
  isolated?: true;
  /** When a person archived it (docs/sessions.md, "Rename, archive, delete"); absent or null when not archived. */
  archived_at?: number | null;
  /** A fork: the session and event its history was copied from (docs/sessions.md, "Fork"). */
  forked_from?: ForkOrigin;
  /** The outbound channel (config `channels`) this session posts each run's result to (docs/channels.md). */
  channel?: string | null;
  /** The forks made of this session, newest last (at most MAX_RECORDED_FORKS; each is also a `session_info` event). */
  forks?: ForkRecord[];
}

/** Progress of a run that must survive a restart (everything else is derived from the log). */
export interface RunState {
  system_prompt?: string;
  /** Characters of `system_prompt` that are its cacheable stable prefix. */
  system_prompt_stable_chars?: number;
  /** The run's assembled tools, frozen when it opened, so a resumed run is offered the same ones. */
  tools?: string[];
  /** Why each was chosen (as on `system_prompt_snapshotted`), shown by `GET …/context`. */
  tool_choices?: ToolChoice[];
  tool_iterations: number;
  /** Model steps taken (the `turn_index` of the next one). */
  steps?: number;
  usage: Usage;
  /** Tokens of delegated child runs (tool results that carried usage; docs/delegation.md). */
  delegated_usage?: Usage;
  provider: string | null;
  model: string | null;
  output_text: string;
  finish_reason: string;
  /** The user message of this run (set once the run's opening events are persisted). */
  user_event_id?: string;
  /** Set by cancel; a resumed run ends `cancelled` instead of continuing. */
  cancel_requested?: boolean;
  /** Executions since the last persisted step (1 + resumes without progress); a run that keeps crashing is failed, not resumed forever. */
  attempts?: number;
  /** The skills this run activated when it opened (frozen). */
  skills?: ActivatedSkill[];
  /**
   * Their SKILL.md bodies, frozen when the run opened: each becomes a message before the run's user
   * message in every model step (skill-messages.ts). Runs opened before skills were messages have
   * the bodies in `system_prompt` instead.
   */
  skill_bodies?: { name: string; body: string }[];
}

export interface RunRow {
  id: string;
  /** Queue order. */
  pos: number;
  status: RunStatus;
  idempotency_key: string | null;
  input: SubmitRunInput;
  state: RunState;
  result: RunResult | null;
  created_at: number;
  started_at: number | null;
  ended_at: number | null;
  /** Bumped on every update, so replication marks clean only the version it copied. */
  version: number;
}

export interface ToolStartMarker {
  tool_call_id: string;
  run_id: string;
  event_id: string;
  started_at: number;
}

export interface PendingSteer {
  id: number;
  run_id: string;
  client_id: string;
  content: string;
  source: "steer" | "followUp";
  /** Where the message came in when it came through a live channel (recorded as `channel_inject`). */
  channel?: ChannelOrigin;
}

/** A tool call waiting for (or given) a person's decision; the log's approval events are the record, this is the index. */
export interface ApprovalRow {
  approval_id: string;
  run_id: string;
  tool_call_id: string;
  tool_name: string;
  args: unknown;
  expires_at: number;
  decision: "approve" | "deny" | null;
  /** `person`, `timeout` or `cancelled` (see `tool_approval_decided`). */
  decided_by: "person" | "timeout" | "cancelled" | null;
  decided_at: number | null;
}

export const emptyUsage = (): Usage => ({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });

/**
 * The layout every object had before storage was versioned; frozen as migration 1. Change the layout
 * by appending a migration to `SESSION_MIGRATIONS`, never by editing these statements.
 */
const V1_SCHEMA = [
  `CREATE TABLE IF NOT EXISTS meta (k TEXT PRIMARY KEY, v TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS events (
     seq INTEGER PRIMARY KEY, id TEXT NOT NULL UNIQUE, type TEXT NOT NULL, run_id TEXT,
     hidden INTEGER NOT NULL, body TEXT NOT NULL, replicated INTEGER NOT NULL DEFAULT 0)`,
  `CREATE INDEX IF NOT EXISTS events_unreplicated ON events(seq) WHERE replicated = 0`,
  `CREATE INDEX IF NOT EXISTS events_run ON events(run_id, seq)`,
  `CREATE TABLE IF NOT EXISTS runs (
     id TEXT PRIMARY KEY, pos INTEGER NOT NULL UNIQUE, status TEXT NOT NULL, idempotency_key TEXT UNIQUE,
     input TEXT NOT NULL, state TEXT NOT NULL, result TEXT, created_at INTEGER NOT NULL,
     started_at INTEGER, ended_at INTEGER, version INTEGER NOT NULL DEFAULT 0, dirty INTEGER NOT NULL DEFAULT 1)`,
  `CREATE INDEX IF NOT EXISTS runs_open ON runs(pos) WHERE status IN ('queued', 'running')`,
  `CREATE TABLE IF NOT EXISTS tool_starts (
     tool_call_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, event_id TEXT NOT NULL, started_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS pending_steer (
     id INTEGER PRIMARY KEY AUTOINCREMENT, run_id TEXT NOT NULL, client_id TEXT NOT NULL, content TEXT NOT NULL, source TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS steer_keys (k TEXT PRIMARY KEY, run_id TEXT NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS used_tickets (nonce TEXT PRIMARY KEY, expires_at INTEGER NOT NULL)`,
  `CREATE TABLE IF NOT EXISTS bench (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`,
];

/**
 * The SessionDO's schema history, applied on wake by `migrate`. Migration 1 is exactly the layout
 * that unversioned code created on every wake. Because every statement is `IF NOT EXISTS`, running it
 * against an object written by that code (tables and rows present, no version recorded) changes
 * nothing and just records version 1; so old objects are recognised without a special case.
 */
export const SESSION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "initial layout: meta, events, runs, tool_starts, pending_steer, steer_keys, used_tickets, bench",
    up: (sql) => {
      for (const stmt of V1_SCHEMA) sql.exec(stmt);
    },
  },
  {
    version: 2,
    name: "drop the bench table: the benchmark baseline's counter moved to the bench Worker (bench/worker)",
    up: (sql) => void sql.exec(`DROP TABLE IF EXISTS bench`),
  },
  {
    version: 3,
    name: "steer_keys.fingerprint: the request a steer's idempotency key came with, so a reuse with another body is refused",
    // Runs keep theirs in `runs.input`. Added only when missing, like migration 1's IF NOT EXISTS, so a
    // layout that already has it (the storage-migrations test's unversioned object) is left unchanged.
    up: (sql) => {
      const has = sql.exec(`SELECT 1 FROM pragma_table_info('steer_keys') WHERE name = 'fingerprint'`).toArray().length > 0;
      if (!has) sql.exec(`ALTER TABLE steer_keys ADD COLUMN fingerprint TEXT`);
    },
  },
  {
    version: 4,
    name: "approvals (tool calls waiting for a person, docs/approvals.md) and pending_steer.channel (where a steer came in)",
    up: (sql) => {
      sql.exec(`CREATE TABLE IF NOT EXISTS approvals (
        approval_id TEXT PRIMARY KEY, run_id TEXT NOT NULL, tool_call_id TEXT NOT NULL, tool_name TEXT NOT NULL,
        args TEXT NOT NULL, expires_at INTEGER NOT NULL, decision TEXT, decided_by TEXT, decided_at INTEGER,
        UNIQUE (run_id, tool_call_id))`);
      sql.exec(`CREATE INDEX IF NOT EXISTS approvals_open ON approvals(expires_at) WHERE decision IS NULL`);
      const has = sql.exec(`SELECT 1 FROM pragma_table_info('pending_steer') WHERE name = 'channel'`).toArray().length > 0;
      if (!has) sql.exec(`ALTER TABLE pending_steer ADD COLUMN channel TEXT`);
    },
  },
  {
    version: 5,
    name: "runs_dirty: replication looks up changed runs on every step, which scanned every run the session ever had",
    up: (sql) => void sql.exec(`CREATE INDEX IF NOT EXISTS runs_dirty ON runs(pos) WHERE dirty = 1`),
  },
  // ---- session workspace (docs/workspace.md): its own tables, added by the workspace change ----
  {
    version: 6,
    name: "session workspace: content-addressed files, trees and the tree after each file-changing tool call",
    up: (sql) => WORKSPACE_FILES_SCHEMA.forEach((stmt) => void sql.exec(stmt)),
  },
  // ---- channels (docs/channels.md, "Outbound"): posts of run results waiting for delivery ----
  {
    version: 7,
    name: "channel_outbox: run results a session bound to a channel still has to post",
    up: (sql) => CHANNEL_OUTBOX_SCHEMA.forEach((stmt) => void sql.exec(stmt)),
  },
];

export const SESSION_SCHEMA_VERSION = SESSION_MIGRATIONS.length;

type Row = Record<string, SqlStorageValue>;

/** Runs remembered as having no queued steer, at most (an object runs a handful at a time). */
const MAX_KNOWN_RUNS = 256;

export class SessionStorage {
  readonly #sql: SqlStorage;
  readonly #storage: DurableObjectStorage;
  /** Statements executed (writes, reads); the benchmark reports them per step. All are local and synchronous. */
  writes = 0;
  reads = 0;
  /**
   * The meta table's rows as stored (JSON text, or null when absent), read through: the session info,
   * seq mark, leaf and replication marks are read many times per step (docs/performance.md, "CPU per
   * turn"). This object is the table's only writer; a failed transaction forgets the cache.
   */
  readonly #meta = new Map<string, string | null>();
  /**
   * Whether anything waits for replication to D1, known without a query: `true` after a write that
   * must be copied (an event, a run, the session info), `false` once a check found nothing, `null`
   * (ask SQLite) after a copy marked rows done, a rollback or a wipe. The replicator asks before and
   * after every copy, once or more per step (docs/performance.md, "CPU per turn").
   */
  #pending: boolean | null = null;
  /** Counts the writes that set `#pending`: a copy that read everything at one generation caught up if it is still current. */
  #generation = 0;
  /**
   * What this object knows without a query about statements a run asks on every step (docs/performance.md,
   * "CPU per turn"): runs known to have no queued steer, and whether any approval is open (`null`: ask).
   * This object is the tables' only writer; a rollback or wipe forgets both.
   */
  readonly #noSteers = new Set<string>();
  #approvalsOpen: boolean | null = null;

  constructor(storage: DurableObjectStorage) {
    this.#storage = storage;
    this.#sql = storage.sql;
    migrate(storage, SESSION_MIGRATIONS);
  }

  /** A deleted session: everything the object stores goes, and the empty layout is laid out again (later calls answer 404). */
  async wipe(): Promise<void> {
    await this.#storage.deleteAlarm();
    await this.#storage.deleteAll();
    this.#forget();
    migrate(this.#storage, SESSION_MIGRATIONS);
  }

  /** Runs `fn` atomically: either all its writes land or none. */
  atomically<T>(fn: () => T): T {
    try {
      return this.#storage.transactionSync(fn);
    } catch (err) {
      // Rolled back: what the caches learnt inside the transaction may not be stored.
      this.#forget();
      throw err;
    }
  }

  /** Everything known without a query becomes unknown (a rollback or a wipe). */
  #forget(): void {
    this.#meta.clear();
    this.#pending = null;
    this.#noSteers.clear();
    this.#approvalsOpen = null;
  }

  /** A write that replication must copy (an event, a run, the session info). */
  #toCopy(): void {
    this.#pending = true;
    this.#generation++;
  }

  #exec<T extends Row>(query: string, ...params: SqlStorageValue[]): T[] {
    this.reads++;
    return this.#sql.exec<T>(query, ...params).toArray();
  }

  #write(query: string, ...params: SqlStorageValue[]): void {
    this.writes++;
    this.#sql.exec(query, ...params);
  }

  // ---- meta -------------------------------------------------------------------------------------

  getMeta<T>(key: string): T | null {
    let text = this.#meta.get(key);
    if (text === undefined) {
      text = this.#exec<{ v: string }>(`SELECT v FROM meta WHERE k = ?`, key)[0]?.v ?? null;
      this.#meta.set(key, text);
    }
    // Parsed per call: callers may change what they get back.
    return text === null ? null : (JSON.parse(text) as T);
  }

  setMeta(key: string, value: unknown): void {
    const text = JSON.stringify(value);
    if (this.#meta.get(key) === text) return;
    this.#write(`INSERT INTO meta (k, v) VALUES (?, ?) ON CONFLICT(k) DO UPDATE SET v = excluded.v`, key, text);
    this.#meta.set(key, text);
  }

  /** Token usage of every run of the session so far (the list projection's totals). */
  usageTotals(): Usage {
    return this.getMeta<Usage>("usage") ?? emptyUsage();
  }

  session(): SessionInfo | null {
    return this.getMeta<SessionInfo>("session");
  }

  /** Saves the session info and marks the D1 projection stale. */
  saveSession(info: SessionInfo): void {
    this.setMeta("session", info);
    this.setMeta("projection_version", this.projectionVersion() + 1);
    this.#toCopy();
  }

  projectionVersion(): number {
    return this.getMeta<number>("projection_version") ?? 0;
  }

  /** The projection version D1 has; the projection is stale while it is below `projectionVersion`. */
  markProjectionCopied(version: number): void {
    if ((this.getMeta<number>("projection_copied") ?? 0) !== version) this.setMeta("projection_copied", version);
    this.#pending = null;
  }

  // ---- events -----------------------------------------------------------------------------------

  insertEvent(event: PersistentEvent, hidden: boolean): void {
    this.#toCopy();
    this.#write(
      `INSERT INTO events (seq, id, type, run_id, hidden, body) VALUES (?, ?, ?, ?, ?, ?)`,
      event.seq,
      event.id,
      event.type,
      event.run_id,
      hidden ? 1 : 0,
      JSON.stringify(event),
    );
  }

  maxEventSeq(): number {
    const row = this.#exec<{ m: number | null }>(`SELECT MAX(seq) AS m FROM events`)[0];
    return row?.m ?? 0;
  }

  /** Every event in seq order (used once per activation to rebuild the in-memory tree). */
  *allEvents(): Generator<PersistentEvent> {
    for (const row of this.#sql.exec<{ body: string }>(`SELECT body FROM events ORDER BY seq`))
      yield JSON.parse(row.body) as PersistentEvent;
  }

  eventsAfter(afterSeq: number, opts: { includeHidden: boolean; limit?: number; runId?: string }): PersistentEvent[] {
    const where = ["seq > ?"];
    const params: SqlStorageValue[] = [afterSeq];
    if (!opts.includeHidden) where.push("hidden = 0");
    if (opts.runId !== undefined) {
      where.push("run_id = ?");
      params.push(opts.runId);
    }
    const limit = opts.limit ?? -1;
    return this.#exec<{ body: string }>(`SELECT body FROM events WHERE ${where.join(" AND ")} ORDER BY seq LIMIT ?`, ...params, limit).map(
      (r) => JSON.parse(r.body) as PersistentEvent,
    );
  }

  /** Tool results a run logged (its tool calls answered): one count for the run's log line (run-log-line.ts). */
  toolResultCount(runId: string): number {
    const row = this.#exec<{ n: number }>(
      `SELECT COUNT(*) AS n FROM events WHERE run_id = ? AND type = 'message' AND json_extract(body, '$.message.role') = 'tool_result'`,
      runId,
    )[0];
    return row?.n ?? 0;
  }

  /** Events not yet in D1, each with its stored JSON (`body`, exactly `JSON.stringify(event)`: D1's payload as it is). */
  unreplicated(limit: number): { seq: number; event: PersistentEvent; body: string; hidden: boolean }[] {
    return this.#exec<{ seq: number; body: string; hidden: number }>(
      `SELECT seq, body, hidden FROM events WHERE replicated = 0 ORDER BY seq LIMIT ?`,
      limit,
    ).map((r) => ({ seq: r.seq, event: JSON.parse(r.body) as PersistentEvent, body: r.body, hidden: r.hidden === 1 }));
  }

  hasUnreplicated(): boolean {
    this.#pending ??=
      this.#exec(`SELECT 1 FROM events WHERE replicated = 0 LIMIT 1`).length > 0 ||
      this.#exec(`SELECT 1 FROM runs WHERE dirty = 1 LIMIT 1`).length > 0 ||
      (this.getMeta<number>("projection_copied") ?? 0) < this.projectionVersion();
    return this.#pending;
  }

  /** Where replication stands before a copy reads what to copy (`caughtUp` after it). */
  replicationGeneration(): number {
    return this.#generation;
  }

  /**
   * After a copy's marks, in their transaction: the copy read everything pending (`complete`: its
   * events were not cut by the batch limit), so if nothing was written since it read (`generation`),
   * nothing is pending now — known without asking SQLite.
   */
  caughtUp(generation: number, complete: boolean): void {
    if (complete && generation === this.#generation) this.#pending = false;
  }

  markReplicated(throughSeq: number): void {
    this.#write(`UPDATE events SET replicated = 1 WHERE replicated = 0 AND seq <= ?`, throughSeq);
    this.#pending = null;
  }

  // ---- runs -------------------------------------------------------------------------------------

  insertRun(run: Omit<RunRow, "pos" | "version">): RunRow {
    this.#toCopy();
    // One statement: the next position is computed by the insert itself.
    this.writes++;
    const pos = this.#sql
      .exec<{ pos: number }>(
        `INSERT INTO runs (id, pos, status, idempotency_key, input, state, result, created_at, started_at, ended_at, dirty)
         VALUES (?, (SELECT COALESCE(MAX(pos), 0) + 1 FROM runs), ?, ?, ?, ?, ?, ?, ?, ?, 1) RETURNING pos`,
        run.id,
        run.status,
        run.idempotency_key,
        JSON.stringify(run.input),
        JSON.stringify(run.state),
        run.result ? JSON.stringify(run.result) : null,
        run.created_at,
        run.started_at,
        run.ended_at,
      )
      .one().pos;
    return { ...run, pos, version: 0 };
  }

  updateRun(run: RunRow): void {
    this.#toCopy();
    this.#write(
      `UPDATE runs SET status = ?, state = ?, result = ?, started_at = ?, ended_at = ?, version = version + 1, dirty = 1 WHERE id = ?`,
      run.status,
      JSON.stringify(run.state),
      run.result ? JSON.stringify(run.result) : null,
      run.started_at,
      run.ended_at,
      run.id,
    );
    run.version++;
  }

  run(id: string): RunRow | null {
    const row = this.#exec(`SELECT * FROM runs WHERE id = ?`, id)[0];
    return row ? toRun(row) : null;
  }

  runByIdempotencyKey(key: string): RunRow | null {
    const row = this.#exec(`SELECT * FROM runs WHERE idempotency_key = ?`, key)[0];
    return row ? toRun(row) : null;
  }

  /** The run to work on: the running one, else the oldest queued one. */
  nextOpenRun(): RunRow | null {
    const row = this.#exec(`SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY (status = 'running') DESC, pos LIMIT 1`)[0];
    return row ? toRun(row) : null;
  }

  openRuns(): RunRow[] {
    return this.#exec(`SELECT * FROM runs WHERE status IN ('queued', 'running') ORDER BY pos`).map(toRun);
  }

  listRuns(limit: number): RunRow[] {
    return this.#exec(`SELECT * FROM runs ORDER BY pos DESC LIMIT ?`, limit).map(toRun);
  }

  dirtyRuns(): RunRow[] {
    return this.#exec(`SELECT * FROM runs WHERE dirty = 1 ORDER BY pos`).map(toRun);
  }

  /** Only rows unchanged since they were copied: an update during the copy keeps the dirty flag. */
  markRunsClean(copied: { id: string; version: number }[]): void {
    for (const { id, version } of copied) this.#write(`UPDATE runs SET dirty = 0 WHERE id = ? AND version = ?`, id, version);
    this.#pending = null;
  }

  // ---- tool markers and steer queue -------------------------------------------------------------

  markToolStarted(marker: ToolStartMarker): void {
    this.#write(
      `INSERT INTO tool_starts (tool_call_id, run_id, event_id, started_at) VALUES (?, ?, ?, ?) ON CONFLICT(tool_call_id) DO NOTHING`,
      marker.tool_call_id,
      marker.run_id,
      marker.event_id,
      marker.started_at,
    );
  }

  toolStart(toolCallId: string): ToolStartMarker | null {
    const row = this.#exec<{ tool_call_id: string; run_id: string; event_id: string; started_at: number }>(
      `SELECT * FROM tool_starts WHERE tool_call_id = ?`,
      toolCallId,
    )[0];
    return row ? { ...row } : null;
  }

  clearToolStart(toolCallId: string): void {
    this.#write(`DELETE FROM tool_starts WHERE tool_call_id = ?`, toolCallId);
  }

  /** Queues a steer for its run; its idempotency key (if any) is kept for good, like a run's, with the request's fingerprint. */
  queueSteer(steer: Omit<PendingSteer, "id">, idempotencyKey?: string, fingerprint?: string): void {
    this.#noSteers.delete(steer.run_id);
    this.atomically(() => {
      this.#write(
        `INSERT INTO pending_steer (run_id, client_id, content, source, channel) VALUES (?, ?, ?, ?, ?)`,
        steer.run_id,
        steer.client_id,
        steer.content,
        steer.source,
        steer.channel ? JSON.stringify(steer.channel) : null,
      );
      if (idempotencyKey !== undefined) {
        this.#write(`INSERT INTO steer_keys (k, run_id, fingerprint) VALUES (?, ?, ?)`, idempotencyKey, steer.run_id, fingerprint ?? null);
      }
    });
  }

  /** The run a steer message with this idempotency key joined, and the fingerprint of that message's request. */
  runBySteerKey(key: string): { run: RunRow; fingerprint: string | null } | null {
    const row = this.#exec(
      `SELECT runs.*, steer_keys.fingerprint AS steer_fingerprint FROM steer_keys JOIN runs ON runs.id = steer_keys.run_id WHERE steer_keys.k = ?`,
      key,
    )[0];
    if (!row) return null;
    return { run: toRun(row), fingerprint: row.steer_fingerprint === null ? null : String(row.steer_fingerprint) };
  }

  pendingSteers(runId: string): PendingSteer[] {
    // Asked before every model step; most runs are never steered.
    if (this.#noSteers.has(runId)) return [];
    const rows = this.#exec<{ id: number; run_id: string; client_id: string; content: string; source: string; channel: string | null }>(
      `SELECT * FROM pending_steer WHERE run_id = ? ORDER BY id`,
      runId,
    );
    if (rows.length === 0) {
      if (this.#noSteers.size >= MAX_KNOWN_RUNS) this.#noSteers.clear();
      this.#noSteers.add(runId);
    }
    return rows.map(({ channel, ...r }) => ({
      ...r,
      source: r.source === "followUp" ? "followUp" : "steer",
      ...(channel ? { channel: JSON.parse(channel) as ChannelOrigin } : {}),
    }));
  }

  // ---- approvals (docs/approvals.md) ------------------------------------------------------------

  insertApproval(row: Omit<ApprovalRow, "decision" | "decided_by" | "decided_at">): void {
    this.#approvalsOpen = true;
    this.#write(
      `INSERT INTO approvals (approval_id, run_id, tool_call_id, tool_name, args, expires_at) VALUES (?, ?, ?, ?, ?, ?)`,
      row.approval_id,
      row.run_id,
      row.tool_call_id,
      row.tool_name,
      JSON.stringify(row.args ?? null),
      row.expires_at,
    );
  }

  approval(approvalId: string): ApprovalRow | null {
    const row = this.#exec(`SELECT * FROM approvals WHERE approval_id = ?`, approvalId)[0];
    return row ? toApproval(row) : null;
  }

  approvalForCall(runId: string, toolCallId: string): ApprovalRow | null {
    const row = this.#exec(`SELECT * FROM approvals WHERE run_id = ? AND tool_call_id = ?`, runId, toolCallId)[0];
    return row ? toApproval(row) : null;
  }

  /** Undecided approvals, soonest to expire first (optionally one run's only). */
  openApprovals(runId?: string): ApprovalRow[] {
    // Asked at every run's end; most sessions never have one open.
    if (this.#approvalsOpen === false) return [];
    if (runId !== undefined && this.#approvalsOpen === true) {
      return this.#exec(`SELECT * FROM approvals WHERE decision IS NULL AND run_id = ? ORDER BY expires_at`, runId).map(toApproval);
    }
    // Unknown: every open one (a handful at most), which also answers whether any is open.
    const rows = this.#exec(`SELECT * FROM approvals WHERE decision IS NULL ORDER BY expires_at`).map(toApproval);
    this.#approvalsOpen = rows.length > 0;
    return runId === undefined ? rows : rows.filter((r) => r.run_id === runId);
  }

  decideApproval(approvalId: string, decision: "approve" | "deny", decidedBy: NonNullable<ApprovalRow["decided_by"]>, at: number): void {
    this.#approvalsOpen = null;
    this.#write(
      `UPDATE approvals SET decision = ?, decided_by = ?, decided_at = ? WHERE approval_id = ? AND decision IS NULL`,
      decision,
      decidedBy,
      at,
      approvalId,
    );
  }

  dropSteer(id: number): void {
    this.#write(`DELETE FROM pending_steer WHERE id = ?`, id);
  }

  // ---- stream tickets ---------------------------------------------------------------------------

  /** Records a ticket nonce as used; false when it was used before. Expired nonces are pruned. */
  useTicket(nonce: string, expiresAt: number, now: number): boolean {
    this.#write(`DELETE FROM used_tickets WHERE expires_at < ?`, now);
    if (this.#exec(`SELECT 1 FROM used_tickets WHERE nonce = ?`, nonce).length > 0) return false;
    this.#write(`INSERT INTO used_tickets (nonce, expires_at) VALUES (?, ?)`, nonce, expiresAt);
    return true;
  }
}

function toApproval(row: Row): ApprovalRow {
  return {
    approval_id: String(row.approval_id),
    run_id: String(row.run_id),
    tool_call_id: String(row.tool_call_id),
    tool_name: String(row.tool_name),
    args: JSON.parse(String(row.args)) as unknown,
    expires_at: Number(row.expires_at),
    decision: row.decision === "approve" || row.decision === "deny" ? row.decision : null,
    decided_by: row.decided_by === "person" || row.decided_by === "timeout" || row.decided_by === "cancelled" ? row.decided_by : null,
    decided_at: row.decided_at === null ? null : Number(row.decided_at),
  };
}

function toRun(row: Row): RunRow {
  return {
    id: String(row.id),
    pos: Number(row.pos),
    status: String(row.status) as RunStatus,
    idempotency_key: row.idempotency_key === null ? null : String(row.idempotency_key),
    input: JSON.parse(String(row.input)) as SubmitRunInput,
    state: JSON.parse(String(row.state)) as RunState,
    result: row.result === null ? null : (JSON.parse(String(row.result)) as RunResult),
    created_at: Number(row.created_at),
    started_at: row.started_at === null ? null : Number(row.started_at),
    ended_at: row.ended_at === null ? null : Number(row.ended_at),
    version: Number(row.version),
  };
}
