/**
 * What a schedule is (docs/schedules.md): a message to a session — or to a new session per firing —
 * at one time (`at`) or on a cron expression (`cron`), in an IANA time zone. This module checks a
 * schedule's input and computes its slots; the ScheduleDO (schedule-do.ts) stores and fires them.
 * Cron expressions are read by croner with five fields (minute precision) or a nickname (`@daily`):
 * a six-field expression with seconds is refused, so nothing fires more than once a minute.
 */
import { z } from "zod";
import { Cron } from "croner";
import { AppError } from "../../kernel/errors.ts";
import { isTimeZone } from "../../kernel/time-zone.ts";
import { SESSION_ID_PATTERN } from "../../runtime/index.ts";

/** Longest cron expression accepted (croner's own patterns are far shorter). */
const MAX_CRON_CHARS = 100;
/** An `at` further ahead than this is refused (10 years). */
const MAX_AHEAD_MS = 10 * 365 * 24 * 3600 * 1000;
/** An `at` this far in the past is still accepted (it fires at once): clocks of callers drift. */
const PAST_GRACE_MS = 60_000;

const NICKNAMES = new Set(["@yearly", "@annually", "@monthly", "@weekly", "@daily", "@midnight", "@hourly"]);

/** A parsed cron expression in `timezone`, or an error message naming what is wrong. */
export function parseCron(expression: string, timezone: string): { cron: Cron } | { error: string } {
  const text = expression.trim();
  if (text.length === 0 || text.length > MAX_CRON_CHARS) return { error: `cron must be 1–${MAX_CRON_CHARS} characters` };
  if (text.startsWith("@")) {
    if (!NICKNAMES.has(text.toLowerCase())) return { error: `unknown cron nickname ${text}` };
  } else {
    const fields = text.split(/\s+/).length;
    if (fields !== 5) {
      return {
        error: `cron must have 5 fields (minute hour day-of-month month day-of-week); found ${fields} (no seconds: at most once a minute)`,
      };
    }
  }
  try {
    const cron = new Cron(text, { timezone, paused: true });
    if (cron.nextRun(new Date()) === null) return { error: "cron expression never fires" };
    return { cron };
  } catch (e) {
    return { error: `invalid cron expression: ${e instanceof Error ? e.message : String(e)}` };
  }
}

/** The first slot of `expression` strictly after `afterMs`, in ms since the epoch; null when it never fires again. */
export function nextCronSlot(expression: string, timezone: string, afterMs: number): number | null {
  const parsed = parseCron(expression, timezone);
  if ("error" in parsed) return null;
  return parsed.cron.nextRun(new Date(afterMs))?.getTime() ?? null;
}

export const ScheduleInputSchema = z
  .strictObject({
    session_id: z
      .string()
      .regex(SESSION_ID_PATTERN, "not a session id")
      .optional()
      .describe("The session to message; absent: a new session per firing"),
    message: z.string().min(1).describe("The message content (at most message_bytes, 64 KiB by default; larger answers 413)"),
    at: z.iso.datetime({ offset: true }).optional().describe("When to send it once (ISO 8601 with offset or Z)"),
    cron: z.string().optional().describe("Or: when to send it, as a 5-field cron expression (or @hourly, @daily, …) in `timezone`"),
    timezone: z.string().optional().describe("IANA time zone of `cron` (default UTC)"),
  })
  .superRefine((v, ctx) => {
    if ((v.at === undefined) === (v.cron === undefined)) {
      ctx.addIssue({ code: "custom", path: ["at"], message: "give exactly one of at and cron" });
      return;
    }
    const tz = v.timezone ?? "UTC";
    if (!isTimeZone(tz)) {
      ctx.addIssue({ code: "custom", path: ["timezone"], message: `unknown IANA time zone ${tz}` });
      return;
    }
    if (v.cron !== undefined) {
      const parsed = parseCron(v.cron, tz);
      if ("error" in parsed) ctx.addIssue({ code: "custom", path: ["cron"], message: parsed.error });
    }
  });

export type ScheduleInput = z.infer<typeof ScheduleInputSchema>;

/** A schedule as stored and listed. */
export interface ScheduleView {
  id: string;
  session_id: string | null;
  message: string;
  at: string | null;
  cron: string | null;
  timezone: string;
  /** The next slot (ISO); null once an `at` schedule has fired. */
  next_run_at: string | null;
  /** Who created it: `token:<id>` (API) or `session:<id>` (the `schedule` tool). */
  created_by: string;
  created_at: string;
  last_fired_at: string | null;
  last_error: string | null;
}

/** What the ScheduleDO stores for a new schedule (validated, with its first slot). */
export interface NewSchedule {
  session_id: string | null;
  message: string;
  at_ms: number | null;
  cron: string | null;
  timezone: string;
  first_slot: number;
  created_by: string;
}

/** Checks the input once more (callers other than the route) and computes the first slot. */
export function newSchedule(input: ScheduleInput, createdBy: string, now = Date.now()): NewSchedule {
  const parsed = ScheduleInputSchema.safeParse(input);
  if (!parsed.success) {
    const first = parsed.error.issues[0];
    throw new AppError("validation_failed", `${first?.path.join(".") || "input"}: ${first?.message ?? "invalid"}`);
  }
  const v = parsed.data;
  const timezone = v.timezone ?? "UTC";
  let first: number | null;
  let atMs: number | null = null;
  if (v.at !== undefined) {
    atMs = Date.parse(v.at);
    if (atMs < now - PAST_GRACE_MS) throw new AppError("validation_failed", "at: is in the past");
    if (atMs > now + MAX_AHEAD_MS) throw new AppError("validation_failed", "at: is more than 10 years ahead");
    first = atMs;
  } else {
    first = nextCronSlot(v.cron!, timezone, now);
  }
  if (first === null) throw new AppError("validation_failed", "cron: expression never fires");
  return {
    session_id: v.session_id ?? null,
    message: v.message,
    at_ms: atMs,
    cron: v.cron?.trim() ?? null,
    timezone,
    first_slot: first,
    created_by: createdBy,
  };
}
