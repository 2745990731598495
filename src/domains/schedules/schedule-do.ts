/**
 * One Durable Object per workspace holding its schedules (docs/schedules.md): a SQLite table of
 * schedules, each with its pending slot, and one alarm at the earliest `due_at`. The alarm sends
 * every due slot (fire.ts) and moves each schedule on: an `at` schedule is removed once sent, a cron
 * schedule gets its next slot after both the sent one and now (missed slots while nothing ran are
 * sent once, not caught up one by one). Delivery is at least once — a slot is only moved on after
 * its run was queued — and the run's idempotency key (schedule id + slot) makes a second sending of
 * the same slot the same run. A transient failure is retried with backoff on a later alarm; a
 * permanent one (the session is gone, closed, or the workspace is at a quota) skips the slot and is
 * kept as `last_error`. Results cross RPC as `Outcome`s.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { attemptAsync, attempt, type Outcome } from "../../kernel/outcome.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { assertQuota } from "../../storage/limits.ts";
import { migrate, type Migration } from "../../storage/do-migrations.ts";
import { nextCronSlot, type NewSchedule, type ScheduleView } from "./spec.ts";
import { fireSlot } from "./fire.ts";
import { backoffDelay } from "../../kernel/backoff.ts";

export const SCHEDULE_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "schedules table",
    up: (sql) => {
      sql.exec(`CREATE TABLE schedules (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        session_id TEXT,
        message TEXT NOT NULL,
        at_ms INTEGER,
        cron TEXT,
        timezone TEXT NOT NULL,
        slot INTEGER NOT NULL,
        due_at INTEGER NOT NULL,
        attempts INTEGER NOT NULL DEFAULT 0,
        created_by TEXT NOT NULL,
        created_at INTEGER NOT NULL,
        last_fired_at INTEGER,
        last_error TEXT
      )`);
      sql.exec(`CREATE INDEX schedules_due ON schedules (due_at)`);
    },
  },
];

/** Transient failures of one slot are retried this many times, then the slot is skipped. */
export const MAX_ATTEMPTS = 5;
const RETRY_BASE_MS = 15_000;
/** The longest wait between two tries of one slot (the fifth try waits up to 15 s · 2⁴ = 4 min anyway). */
const RETRY_MAX_MS = 10 * 60_000;
/** Errors that will not go away by retrying the same slot. */
const PERMANENT = new Set([
  "not_found",
  "session_closed",
  "session_stopping",
  "quota_exceeded",
  "payload_too_large",
  "validation_failed",
  "conflict",
]);

interface Row extends Record<string, SqlStorageValue> {
  id: string;
  workspace_id: string;
  session_id: string | null;
  message: string;
  at_ms: number | null;
  cron: string | null;
  timezone: string;
  slot: number;
  due_at: number;
  attempts: number;
  created_by: string;
  created_at: number;
  last_fired_at: number | null;
  last_error: string | null;
}

/** What one alarm did (returned for tests and logs). */
export interface AlarmReport {
  fired: { schedule_id: string; slot: string; session_id: string; run_id: string; deduplicated: boolean }[];
  failed: { schedule_id: string; slot: string; code: string; permanent: boolean }[];
}

const iso = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

function view(row: Row): ScheduleView {
  return {
    id: row.id,
    session_id: row.session_id,
    message: row.message,
    at: iso(row.at_ms),
    cron: row.cron,
    timezone: row.timezone,
    next_run_at: iso(row.slot),
    created_by: row.created_by,
    created_at: iso(row.created_at)!,
    last_fired_at: iso(row.last_fired_at),
    last_error: row.last_error,
  };
}

export class ScheduleObject extends DurableObject<Env> {
  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    migrate(ctx.storage, SCHEDULE_MIGRATIONS);
  }

  #rows(query: string, ...params: SqlStorageValue[]): Row[] {
    return this.ctx.storage.sql.exec<Row>(query, ...params).toArray();
  }

  async create(workspaceId: string, input: NewSchedule): Promise<Outcome<ScheduleView>> {
    return attemptAsync(async () => {
      const used = this.ctx.storage.sql
        .exec<{ n: number }>(`SELECT COUNT(*) AS n FROM schedules WHERE workspace_id = ?`, workspaceId)
        .one().n;
      assertQuota(this.env, "schedules", used);
      const id = newId("sch");
      const now = Date.now();
      this.ctx.storage.sql.exec(
        `INSERT INTO schedules (id, workspace_id, session_id, message, at_ms, cron, timezone, slot, due_at, created_by, created_at)
         VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
        id,
        workspaceId,
        input.session_id,
        input.message,
        input.at_ms,
        input.cron,
        input.timezone,
        input.first_slot,
        input.first_slot,
        input.created_by,
        now,
      );
      await this.#arm();
      return view(this.#rows(`SELECT * FROM schedules WHERE id = ?`, id)[0]!);
    }, "schedule create");
  }

  /** The workspace's schedules, soonest first; `sessionId` narrows to one session's. */
  list(workspaceId: string, sessionId?: string): Outcome<ScheduleView[]> {
    return attempt(() => {
      const rows =
        sessionId === undefined
          ? this.#rows(`SELECT * FROM schedules WHERE workspace_id = ? ORDER BY slot, id`, workspaceId)
          : this.#rows(`SELECT * FROM schedules WHERE workspace_id = ? AND session_id = ? ORDER BY slot, id`, workspaceId, sessionId);
      return rows.map(view);
    }, "schedule list");
  }

  get(workspaceId: string, id: string, sessionId?: string): Outcome<ScheduleView> {
    return attempt(() => view(this.#find(workspaceId, id, sessionId)), "schedule get");
  }

  async delete(workspaceId: string, id: string, sessionId?: string): Promise<Outcome<ScheduleView>> {
    return attemptAsync(async () => {
      const row = this.#find(workspaceId, id, sessionId);
      this.ctx.storage.sql.exec(`DELETE FROM schedules WHERE id = ?`, id);
      await this.#arm();
      return view(row);
    }, "schedule delete");
  }

  /** The platform calls this at the alarm time (and again if it threw); tests call it through `runDurableObjectAlarm`. */
  override async alarm(): Promise<void> {
    await this.fireDue();
  }

  /** Sends every slot due now, moves each schedule on, and sets the next alarm. */
  async fireDue(now = Date.now()): Promise<AlarmReport> {
    const report: AlarmReport = { fired: [], failed: [] };
    for (const row of this.#rows(`SELECT * FROM schedules WHERE due_at <= ? ORDER BY due_at`, now)) {
      try {
        const out = await fireSlot(this.env, {
          workspaceId: row.workspace_id,
          scheduleId: row.id,
          sessionId: row.session_id,
          message: row.message,
          createdBy: row.created_by,
          slot: row.slot,
        });
        report.fired.push({
          schedule_id: row.id,
          slot: iso(row.slot)!,
          session_id: out.session_id,
          run_id: out.run_id,
          deduplicated: out.deduplicated,
        });
        this.#advance(row, Date.now(), null);
      } catch (e) {
        const code = e instanceof AppError ? e.code : "internal";
        const permanent = PERMANENT.has(code) || row.attempts + 1 >= MAX_ATTEMPTS;
        report.failed.push({ schedule_id: row.id, slot: iso(row.slot)!, code, permanent });
        log.warn("schedule slot failed", { schedule_id: row.id, slot: iso(row.slot), permanent, ...errorFields(e) });
        const message = `${iso(row.slot)}: ${code}: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500);
        if (permanent) this.#advance(row, Date.now(), message);
        else {
          this.ctx.storage.sql.exec(
            `UPDATE schedules SET attempts = attempts + 1, due_at = ?, last_error = ? WHERE id = ?`,
            Date.now() + backoffDelay(row.attempts + 1, { baseMs: RETRY_BASE_MS, maxMs: RETRY_MAX_MS }),
            message,
            row.id,
          );
        }
      }
    }
    await this.#arm();
    return report;
  }

  /** After a slot was sent (or given up): an `at` schedule is done; a cron one gets its next slot. */
  #advance(row: Row, now: number, error: string | null): void {
    const next = row.cron === null ? null : nextCronSlot(row.cron, row.timezone, Math.max(row.slot, now));
    if (next === null) {
      this.ctx.storage.sql.exec(`DELETE FROM schedules WHERE id = ?`, row.id);
      return;
    }
    this.ctx.storage.sql.exec(
      `UPDATE schedules SET slot = ?, due_at = ?, attempts = 0, last_fired_at = ?, last_error = ? WHERE id = ?`,
      next,
      next,
      error === null ? row.slot : row.last_fired_at,
      error,
      row.id,
    );
  }

  #find(workspaceId: string, id: string, sessionId?: string): Row {
    const row = this.#rows(`SELECT * FROM schedules WHERE id = ? AND workspace_id = ?`, id, workspaceId)[0];
    if (!row || (sessionId !== undefined && row.session_id !== sessionId)) throw new AppError("not_found", `Schedule '${id}' not found`);
    return row;
  }

  /** One alarm at the earliest due time; none when there is nothing left. */
  async #arm(): Promise<void> {
    const next = this.ctx.storage.sql.exec<{ due: number | null }>(`SELECT MIN(due_at) AS due FROM schedules`).one().due;
    if (next === null) await this.ctx.storage.deleteAlarm();
    else {
      const current = await this.ctx.storage.getAlarm();
      if (current !== next) await this.ctx.storage.setAlarm(next);
    }
  }
}
