/**
 * `/api/schedules`: messages to a session — or to a new session per firing — at a time or on a cron
 * expression in a time zone (docs/schedules.md). Create (member), list and get (read), delete
 * (member). Schedules live in the workspace's ScheduleDO, so another workspace's id answers 404; a
 * `session_id` of another workspace answers 404 too, as a list filter as well. Per-workspace quota `schedules` (docs/limits.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { ScheduleInputSchema } from "../../../domains/schedules/spec.ts";
import { createSchedule, deleteSchedule, getSchedule, listSchedulesChecked } from "../../../domains/schedules/client.ts";

const ScheduleDoc = z
  .object({
    id: z.string(),
    session_id: z.string().nullable().describe("null: each firing starts a new session"),
    message: z.string(),
    at: z.string().nullable(),
    cron: z.string().nullable(),
    timezone: z.string(),
    next_run_at: z.string().nullable(),
    created_by: z.string().describe("token:<id> (API) or session:<id> (the schedule tool)"),
    created_at: z.string(),
    last_fired_at: z.string().nullable(),
    last_error: z.string().nullable(),
  })
  .openapi("Schedule");

const IdParam = z.object({ id: z.string().min(1).max(100) });

const create = createRoute({
  method: "post",
  path: "/",
  tags: ["schedules"],
  summary: "Schedule a message (exactly one of at and cron)",
  middleware: [requireScope("member")] as const,
  request: { body: jsonBody(ScheduleInputSchema) },
  responses: { 201: jsonResponse(ScheduleDoc, "Created"), ...errorResponses(404, 413, 415, 429) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["schedules"],
  summary: "List the workspace's schedules (soonest first)",
  middleware: [requireScope("read")] as const,
  request: { query: z.strictObject({ session_id: z.string().min(1).max(128).optional() }) },
  responses: { 200: jsonResponse(z.object({ schedules: z.array(ScheduleDoc) }), "Schedules"), ...errorResponses(404) },
});

const get = createRoute({
  method: "get",
  path: "/{id}",
  tags: ["schedules"],
  summary: "Get a schedule",
  middleware: [requireScope("read")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(ScheduleDoc, "Schedule"), ...errorResponses(404) },
});

const remove = createRoute({
  method: "delete",
  path: "/{id}",
  tags: ["schedules"],
  summary: "Delete a schedule (no further firings)",
  middleware: [requireScope("member")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(ScheduleDoc, "Deleted"), ...errorResponses(404) },
});

export const scheduleRoutes = newRouter()
  .openapi(create, async (c) => {
    const principal = c.get("principal");
    const created = await createSchedule(c.env, principal.workspaceId, c.req.valid("json"), `token:${principal.tokenId}`);
    return c.json(created, 201);
  })
  .openapi(list, async (c) => {
    const { session_id } = c.req.valid("query");
    return c.json({ schedules: await listSchedulesChecked(c.env, c.get("principal").workspaceId, session_id) }, 200);
  })
  .openapi(get, async (c) => c.json(await getSchedule(c.env, c.get("principal").workspaceId, c.req.valid("param").id), 200))
  .openapi(remove, async (c) => c.json(await deleteSchedule(c.env, c.get("principal").workspaceId, c.req.valid("param").id), 200));
