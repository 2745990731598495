/**
 * Copies a SessionDO's log to D1 after it is safely in the DO's own storage: events by id with
 * `ON CONFLICT DO NOTHING` (a retried batch never duplicates), changed runs and the session's list
 * projection. It runs beside the agent loop, never in it: a D1 failure only delays the copy, which
 * is retried from the DO alarm with jittered exponential backoff (kernel/backoff.ts).
 */
import type { Env } from "../../storage/env.ts";
import type { SessionStorage, SessionInfo } from "./do-storage.ts";
import type { Usage } from "./events.ts";
import { searchableText } from "./event-handlers.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { backoffDelay } from "../../kernel/backoff.ts";

/** Events per D1 batch (several a statement: `EVENTS_PER_STATEMENT`). */
export const REPLICATION_BATCH = 50;
/**
 * How far D1 may fall behind a run in progress: its events are copied together once this long has
 * passed or when the run ends, whichever comes first (docs/performance.md, "Replication").
 */
export const RUN_REPLICATION_DELAY_MS = 1_000;
const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 60_000;

/** Returns true to make the next D1 write of that session fail as if D1 were down (durability tests). */
export type ReplicationFault = (sessionId: string) => boolean;

/** The alarm's delay after `failures` failed copies: the kernel's jittered backoff (kernel/backoff.ts). */
export function backoffMs(failures: number): number {
  return backoffDelay(failures, { baseMs: BASE_BACKOFF_MS, maxMs: MAX_BACKOFF_MS });
}

export interface ReplicatorDeps {
  env: Env;
  store: SessionStorage;
  /** Asks the DO to call `flush` again at this time (its alarm). */
  scheduleRetry(at: number): void;
  /** Injected D1 failures (RuntimeServices.replicationFault); absent in production. */
  fault?: ReplicationFault | undefined;
}

export class Replicator {
  readonly #deps: ReplicatorDeps;
  #running: Promise<boolean> | null = null;
  #again = false;
  /** Consecutive failed attempts (drives the backoff); 0 when caught up. */
  failures = 0;
  /** D1 batches written (for tests and the benchmark). */
  batches = 0;
  /** After a failure, background kicks wait for the alarm's retry instead of hammering D1. */
  #retryAt = 0;

  constructor(deps: ReplicatorDeps) {
    this.#deps = deps;
  }

  /** The copy `kickSoon` scheduled, until it starts or a flush makes it moot. */
  #soon: ReturnType<typeof setTimeout> | null = null;

  /** Starts a flush in the background; never awaited by the agent loop. */
  kick(): void {
    this.#cancelSoon();
    if (Date.now() < this.#retryAt) return;
    this.flush().catch((err: unknown) =>
      log.error("replication failed unexpectedly", { session_id: this.#deps.store.session()?.id, ...errorFields(err) }),
    );
  }

  /**
   * For a run's events: one copy within RUN_REPLICATION_DELAY_MS for everything a run logs meanwhile,
   * instead of one D1 batch per step. The run's end flushes at once; the events are durable in the
   * SessionDO either way, and the alarm copies whatever an eviction left behind.
   */
  kickSoon(): void {
    if (this.#soon !== null) return;
    this.#soon = setTimeout(() => {
      this.#soon = null;
      this.kick();
    }, RUN_REPLICATION_DELAY_MS);
  }

  /**
   * At a run's end: the copy starts once the current task has handed the result back (a zero timer),
   * so the answer never waits for D1 (issue 27, decision 1: the SessionDO is the system of record and
   * D1 holds a run's log within a second of its result). Should the object be evicted first, the run's
   * alarm (armed at submit, RESUME_CHECK_MS) copies it; a D1 failure retries with backoff. A reader that
   * needs its own session's copy calls `flush` first (read-your-writes; docs/sessions.md).
   */
  kickAfterAnswer(): void {
    this.#cancelSoon();
    this.#soon = setTimeout(() => {
      this.#soon = null;
      this.kick();
    }, 0);
  }

  #cancelSoon(): void {
    if (this.#soon === null) return;
    clearTimeout(this.#soon);
    this.#soon = null;
  }

  /** Copies everything pending; resolves true when D1 has caught up, false after a failure. */
  flush(): Promise<boolean> {
    this.#cancelSoon();
    if (this.#running) {
      this.#again = true;
      return this.#running;
    }
    this.#running = this.#drain().finally(() => {
      this.#running = null;
    });
    return this.#running;
  }

  async #drain(): Promise<boolean> {
    // An isolated session stays in its Durable Object only (do-storage.ts `SessionInfo.isolated`).
    if (this.#deps.store.session()?.isolated) return true;
    do {
      this.#again = false;
      const { store } = this.#deps;
      while (store.hasUnreplicated()) {
        if (!(await this.#copyBatch())) return false;
      }
    } while (this.#again);
    return true;
  }

  async #copyBatch(): Promise<boolean> {
    const { store, env } = this.#deps;
    const session = store.session();
    if (!session) return true;
    const generation = store.replicationGeneration();
    const events = store.unreplicated(REPLICATION_BATCH);
    const runs = store.dirtyRuns();
    const throughSeq = events.length > 0 ? events[events.length - 1]!.seq : null;
    const projectionVersion = store.projectionVersion();
    try {
      if (this.#deps.fault?.(session.id)) throw new Error("injected D1 failure");
      // Prepared statements straight on the binding: this batch runs for every step of every run, and
      // building the same statements through the query builder cost more CPU than D1's own work
      // (docs/performance.md, "CPU per turn"). The SQL names the tables of storage/db/schema/sessions.ts.
      const d1 = env.DB;
      const upsertRun = d1.prepare(UPSERT_RUN);
      const rows = events.map(({ event, body, hidden }) => [
        event.id,
        session.id,
        session.workspace_id,
        event.seq,
        event.type,
        event.run_id,
        event.parent_id,
        hidden ? 1 : 0,
        // The stored JSON as it is, not serialised again (a run's system prompt snapshot is kilobytes).
        body,
        hidden ? null : searchableText(event),
        event.ts,
      ]);
      const statements = [
        // Several events per statement: D1's client and SQLite both pay per statement (docs/performance.md,
        // "Replication, several events a statement"), and D1 caps bound parameters per statement.
        ...chunks(rows, EVENTS_PER_STATEMENT).map((chunk) => d1.prepare(insertEvents(chunk.length)).bind(...chunk.flat())),
        ...runs.map((run) =>
          upsertRun.bind(
            run.id,
            session.id,
            session.workspace_id,
            run.status,
            run.idempotency_key,
            run.created_at,
            run.started_at,
            run.ended_at,
            run.result ? JSON.stringify(run.result) : null,
          ),
        ),
        projectionUpsert(d1, session, store.usageTotals(), throughSeq, events.at(-1)?.event.ts),
      ];
      await d1.batch(statements);
      this.batches++;
    } catch (err) {
      this.failures++;
      const delay = backoffMs(this.failures);
      log.warn("D1 replication failed; retrying", {
        session_id: session.id,
        attempt: this.failures,
        retry_in_ms: delay,
        ...errorFields(err),
      });
      this.#retryAt = Date.now() + delay;
      this.#deps.scheduleRetry(this.#retryAt);
      return false;
    }
    this.failures = 0;
    this.#retryAt = 0;
    store.atomically(() => {
      if (throughSeq !== null) store.markReplicated(throughSeq);
      if (runs.length > 0) store.markRunsClean(runs.map((r) => ({ id: r.id, version: r.version })));
      store.markProjectionCopied(projectionVersion);
      // Nothing written since the reads above and nothing left behind by the limit: caught up, without asking SQLite.
      store.caughtUp(generation, events.length < REPLICATION_BATCH);
    });
    return true;
  }
}

/** D1 binds at most 100 parameters per statement; an event row has 11. */
const EVENT_COLUMNS = 11;
const EVENTS_PER_STATEMENT = Math.floor(100 / EVENT_COLUMNS);

/** The insert of `n` events, each ignored when already copied (a retried batch). */
function insertEvents(n: number): string {
  const row = `(${Array.from({ length: EVENT_COLUMNS }, () => "?").join(", ")})`;
  return `INSERT INTO session_events
  (id, session_id, workspace_id, seq, type, run_id, parent_id, hidden, payload, search_text, ts)
  VALUES ${Array.from({ length: n }, () => row).join(", ")} ON CONFLICT DO NOTHING`;
}

function chunks<T>(items: T[], size: number): T[][] {
  const out: T[][] = [];
  for (let i = 0; i < items.length; i += size) out.push(items.slice(i, i + size));
  return out;
}

const UPSERT_RUN = `INSERT INTO session_runs
  (id, session_id, workspace_id, status, idempotency_key, created_at, started_at, ended_at, result)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET status = excluded.status, started_at = excluded.started_at,
    ended_at = excluded.ended_at, result = excluded.result`;

/** The session's row in the list projection; seq and time only move forward (a late retry never rewinds them). */
const UPSERT_SESSION = `INSERT INTO sessions
  (id, workspace_id, title, status, metadata, created_at, updated_at, last_seq, input_tokens, output_tokens, total_tokens, archived_at)
  VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
  ON CONFLICT (id) DO UPDATE SET title = excluded.title, status = excluded.status, metadata = excluded.metadata,
    archived_at = excluded.archived_at,
    updated_at = max(sessions.updated_at, excluded.updated_at), last_seq = max(sessions.last_seq, excluded.last_seq),
    input_tokens = excluded.input_tokens, output_tokens = excluded.output_tokens, total_tokens = excluded.total_tokens`;

function projectionUpsert(d1: D1Database, session: SessionInfo, usage: Usage, throughSeq: number | null, lastTs: number | undefined) {
  const updatedAt = Math.max(session.updated_at, lastTs ?? 0);
  return d1
    .prepare(UPSERT_SESSION)
    .bind(
      session.id,
      session.workspace_id,
      session.title,
      session.status,
      JSON.stringify(session.metadata),
      session.created_at,
      updatedAt,
      throughSeq ?? 0,
      usage.input_tokens,
      usage.output_tokens,
      usage.total_tokens,
      session.archived_at ?? null,
    );
}
