/**
 * Copies a SessionDO's log to D1 after it is safely in the DO's own storage: events by id with
 * `ON CONFLICT DO NOTHING` (a retried batch never duplicates), changed runs and the session's list
 * projection. It runs beside the agent loop, never in it: a D1 failure only delays the copy, which
 * is retried from the DO alarm with exponential backoff.
 */
import { sql } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { sessionEvents, sessionRuns, sessions } from "../../storage/db/schema.ts";
import type { SessionStorage, SessionInfo } from "./do-storage.ts";
import type { Usage } from "./events.ts";
import { searchableText } from "./event-handlers.ts";
import { errorFields, log } from "../../kernel/log.ts";

/** Events per D1 batch (one statement each; D1 caps bound parameters per statement, not per batch). */
export const REPLICATION_BATCH = 50;
const BASE_BACKOFF_MS = 500;
const MAX_BACKOFF_MS = 60_000;

/** Returns true to make the next D1 write of that session fail as if D1 were down (durability tests). */
export type ReplicationFault = (sessionId: string) => boolean;

export function backoffMs(failures: number): number {
  return Math.min(MAX_BACKOFF_MS, BASE_BACKOFF_MS * 2 ** Math.max(0, failures - 1));
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

  /** Starts a flush in the background; never awaited by the agent loop. */
  kick(): void {
    if (Date.now() < this.#retryAt) return;
    this.flush().catch((err: unknown) =>
      log.error("replication failed unexpectedly", { session_id: this.#deps.store.session()?.id, ...errorFields(err) }),
    );
  }

  /** Copies everything pending; resolves true when D1 has caught up, false after a failure. */
  flush(): Promise<boolean> {
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
    const events = store.unreplicated(REPLICATION_BATCH);
    const runs = store.dirtyRuns();
    const throughSeq = events.length > 0 ? events[events.length - 1]!.seq : null;
    const projectionVersion = store.projectionVersion();
    try {
      if (this.#deps.fault?.(session.id)) throw new Error("injected D1 failure");
      const db = makeDb(env.DB);
      const statements = [
        ...events.map(({ event, body, hidden }) =>
          db
            .insert(sessionEvents)
            .values({
              id: event.id,
              sessionId: session.id,
              workspaceId: session.workspace_id,
              seq: event.seq,
              type: event.type,
              runId: event.run_id,
              parentId: event.parent_id,
              hidden: hidden ? 1 : 0,
              // The stored JSON as it is, not serialised again (a run's system prompt snapshot is kilobytes).
              payload: body,
              searchText: hidden ? null : searchableText(event),
              ts: event.ts,
            })
            .onConflictDoNothing(),
        ),
        ...runs.map((run) =>
          db
            .insert(sessionRuns)
            .values({
              id: run.id,
              sessionId: session.id,
              workspaceId: session.workspace_id,
              status: run.status,
              idempotencyKey: run.idempotency_key,
              createdAt: run.created_at,
              startedAt: run.started_at,
              endedAt: run.ended_at,
              result: run.result ? JSON.stringify(run.result) : null,
            })
            .onConflictDoUpdate({
              target: sessionRuns.id,
              set: {
                status: run.status,
                startedAt: run.started_at,
                endedAt: run.ended_at,
                result: run.result ? JSON.stringify(run.result) : null,
              },
            }),
        ),
        projectionUpsert(db, session, store.usageTotals(), throughSeq, events.at(-1)?.event.ts),
      ];
      await db.batch(statements as [(typeof statements)[number], ...(typeof statements)[number][]]);
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
    });
    return true;
  }
}

function projectionUpsert(
  db: ReturnType<typeof makeDb>,
  session: SessionInfo,
  usage: Usage,
  throughSeq: number | null,
  lastTs: number | undefined,
) {
  const updatedAt = Math.max(session.updated_at, lastTs ?? 0);
  const row = {
    id: session.id,
    workspaceId: session.workspace_id,
    title: session.title,
    status: session.status,
    metadata: JSON.stringify(session.metadata),
    createdAt: session.created_at,
    updatedAt,
    lastSeq: throughSeq ?? 0,
    inputTokens: usage.input_tokens,
    outputTokens: usage.output_tokens,
    totalTokens: usage.total_tokens,
  };
  return db
    .insert(sessions)
    .values(row)
    .onConflictDoUpdate({
      target: sessions.id,
      set: {
        title: row.title,
        status: row.status,
        metadata: row.metadata,
        updatedAt: sql`max(${sessions.updatedAt}, ${updatedAt})`,
        lastSeq: sql`max(${sessions.lastSeq}, ${row.lastSeq})`,
        inputTokens: row.inputTokens,
        outputTokens: row.outputTokens,
        totalTokens: row.totalTokens,
      },
    });
}
