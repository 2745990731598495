/**
 * The `schedule` tool (docs/schedules.md): the agent schedules a message to its own session — once
 * (`at`) or on a cron expression — and lists or cancels its session's schedules. Schedules of other
 * sessions are invisible to it (not found). The creator recorded is the session (`session:<id>`).
 */
import { z } from "zod";
import { AppError } from "../../kernel/errors.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { defineTool, fail, ok, type ToolSpec } from "../../runtime/index.ts";
import { createSchedule, deleteSchedule, listSchedules } from "./client.ts";
import type { ScheduleView } from "./spec.ts";

const Input = z.strictObject({
  action: z.enum(["create", "list", "cancel"]).describe("create a schedule, list this session's schedules, or cancel one"),
  message: z.string().min(1).optional().describe("create: the message this session will receive"),
  at: z.string().optional().describe("create: when, once (ISO 8601 with offset, e.g. 2030-01-01T09:00:00+01:00)"),
  cron: z.string().optional().describe("create: or a 5-field cron expression (minute hour day month weekday) or @daily/@hourly…"),
  timezone: z.string().optional().describe("create: IANA time zone of the cron expression (default: the workspace's)"),
  id: z.string().optional().describe("cancel: the schedule id"),
});

const describe = (s: ScheduleView): string =>
  `${s.id}: ${s.cron !== null ? `cron "${s.cron}" (${s.timezone})` : `at ${s.at}`}; next ${s.next_run_at ?? "never"}; message: ${JSON.stringify(s.message.slice(0, 200))}`;

export const scheduleTool: ToolSpec<unknown> = defineTool({
  name: "schedule",
  outward: true,
  description:
    "Schedule a message to this session for later: once at a time (`at`) or repeatedly on a cron expression (`cron`, " +
    "in `timezone`). The message arrives as a new user turn. Also lists (`list`) or cancels (`cancel`, with `id`) this session's schedules.",
  input: Input,
  async execute(args, ctx) {
    try {
      if (args.action === "list") {
        const all = await listSchedules(ctx.env, ctx.workspaceId, ctx.sessionId);
        return ok(all.length === 0 ? "No schedules for this session." : all.map(describe).join("\n"));
      }
      if (args.action === "cancel") {
        if (!args.id) return fail("invalid_arguments", "cancel needs the schedule id");
        const gone = await deleteSchedule(ctx.env, ctx.workspaceId, args.id, ctx.sessionId);
        return ok(`Cancelled ${describe(gone)}`);
      }
      if (!args.message) return fail("invalid_arguments", "create needs a message");
      const created = await createSchedule(
        ctx.env,
        ctx.workspaceId,
        {
          session_id: ctx.sessionId,
          message: args.message,
          ...(args.at !== undefined ? { at: args.at } : {}),
          ...(args.cron !== undefined ? { cron: args.cron } : {}),
          timezone: args.timezone ?? ctx.timezone ?? (await loadConfig(ctx.env, ctx.workspaceId)).runtime.timezone,
        },
        `session:${ctx.sessionId}`,
      );
      return ok(`Scheduled ${describe(created)}`);
    } catch (e) {
      if (e instanceof AppError) return fail(e.code, e.message);
      throw e;
    }
  },
});
