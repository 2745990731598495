/**
 * `/api/sessions`: create and list sessions, read a session's log (events and runs from D1's
 * replicated copy; context, transcript and tree from its Durable Object), navigate it (rewind,
 * branch), compact it, cancel its run and close it. Every route is scoped to the caller's workspace: another
 * workspace's session answers 404. Lists stop at the byte budget and hand back their cursor, and
 * `title`/`metadata` are bounded, so no page outgrows an isolate (docs/limits.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { and, asc, desc, eq, gt, isNotNull, isNull, lt, or, sql, type SQL } from "drizzle-orm";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { assertScope, requireScope } from "../auth.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { sessionEvents, sessions } from "../../../storage/db/schema.ts";
import type { SQLiteColumn } from "drizzle-orm/sqlite-core";
import { MAX_SEARCH_DEPTH, searchSessions, SessionClient, type PersistentEvent } from "../../../runtime/index.ts";
import { takeWithinBudget } from "../../../kernel/byte-budget.ts";
import { assertFieldSize, limitsOf } from "../../../storage/limits.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import {
  DisplayItemSchema,
  EventSchema,
  Flag,
  MessageSchema,
  RunIdParam,
  RunSchema,
  SessionIdParam,
  SessionListItem,
  SessionSchema,
  sessionFor,
} from "./session-schemas.ts";

const ClientId = z.string().min(1).max(100);

const create = createRoute({
  method: "post",
  path: "/",
  tags: ["sessions"],
  summary: "Create a session",
  middleware: [requireScope("member")] as const,
  request: {
    body: jsonBody(
      z.strictObject({
        title: z.string().optional().describe("At most session_title_bytes (1 KiB) of UTF-8; larger answers 413"),
        metadata: z
          .record(z.string(), z.unknown())
          .optional()
          .describe("At most session_metadata_bytes (16 KiB) as JSON; larger answers 413"),
        channel: z
          .string()
          .min(1)
          .max(64)
          .optional()
          .describe("A configured outbound channel the session posts each run's result to (docs/channels.md); unknown → 422"),
      }),
    ),
  },
  responses: { 201: jsonResponse(SessionSchema, "Created"), ...errorResponses(413, 422, 429) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["sessions"],
  summary: "List sessions (most recently updated first); a page stops at the byte budget and hands back its cursor",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.strictObject({
      limit: z.coerce.number().int().min(1).max(200).default(50),
      updated_before: z.coerce.number().int().optional(),
      /** With `updated_before`: the id of the last session of the previous page (ties are not skipped). */
      before_id: z.string().min(1).max(200).optional(),
      status: z.enum(["open", "closed"]).optional(),
      archived: Flag.default(false).describe("true: only archived sessions; false (default): only the others"),
      parent_session_id: z
        .string()
        .min(1)
        .max(200)
        .optional()
        .describe("Only the sessions this session delegated to (their metadata's parent_session_id; docs/delegation.md)"),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({
        sessions: z.array(SessionListItem),
        next_updated_before: z.number().nullable(),
        next_before_id: z.string().nullable(),
      }),
      "Sessions; pass next_updated_before and next_before_id to continue (null: nothing more)",
    ),
    ...errorResponses(),
  },
});

const SearchHitSchema = z.object({
  session_id: z.string(),
  session_title: z.string(),
  event_id: z.string(),
  seq: z.number(),
  type: z.string(),
  ts: z.number(),
  snippet: z.string().describe("The matched passage, matched words between ** and **, … where text was cut"),
  score: z.number().describe("bm25 relevance, higher is better; comparable within one search only"),
});

const search = createRoute({
  method: "get",
  path: "/search",
  tags: ["sessions"],
  summary:
    "Full-text search of the workspace's sessions, best match first (user and assistant text only; never tool output, tool arguments or hidden run facts)",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.strictObject({
      q: z
        .string()
        .min(1)
        .max(200)
        .describe("Plain words, all of which must match; the last one also as a prefix. Search syntax is not interpreted."),
      limit: z.coerce.number().int().min(1).max(100).default(20),
      cursor: z.coerce.number().int().min(0).max(MAX_SEARCH_DEPTH).optional().describe("next_cursor of the previous page"),
      /** Leave one session out (for example the one the user is looking at). */
      exclude_session_id: z.string().min(1).max(200).optional(),
      include_archived: Flag.default(false).describe("Also search archived sessions"),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ results: z.array(SearchHitSchema), next_cursor: z.string().nullable() }),
      "Matches, best first; pass next_cursor as cursor to continue (null: nothing more)",
    ),
    ...errorResponses(),
  },
});

const get = createRoute({
  method: "get",
  path: "/{id}",
  tags: ["sessions"],
  summary: "A session: status, last seq, active leaf, usage, active run",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam },
  responses: { 200: jsonResponse(SessionSchema, "Session"), ...errorResponses(404) },
});

const EventsQuery = z.strictObject({
  after_seq: z.coerce.number().int().min(0).default(0),
  limit: z.coerce.number().int().min(1).max(1000).default(200),
  include_hidden: Flag.default(false),
});

const EventsPage = z.object({ events: z.array(EventSchema), next_after_seq: z.number(), has_more: z.boolean() });

const events = createRoute({
  method: "get",
  path: "/{id}/events",
  tags: ["sessions"],
  summary: "The session's persistent events in seq order (D1's replicated log); hidden run facts only for admins",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam, query: EventsQuery },
  responses: { 200: jsonResponse(EventsPage, "A page of events"), ...errorResponses(404) },
});

const runs = createRoute({
  method: "get",
  path: "/{id}/runs",
  tags: ["sessions"],
  summary: "The session's runs, newest first",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam, query: z.strictObject({ limit: z.coerce.number().int().min(1).max(500).default(100) }) },
  responses: { 200: jsonResponse(z.object({ runs: z.array(RunSchema) }), "Runs"), ...errorResponses(404) },
});

const run = createRoute({
  method: "get",
  path: "/{id}/runs/{run_id}",
  tags: ["sessions"],
  summary: "One run and its result",
  middleware: [requireScope("read")] as const,
  request: { params: RunIdParam },
  responses: { 200: jsonResponse(RunSchema, "Run"), ...errorResponses(404) },
});

const runEvents = createRoute({
  method: "get",
  path: "/{id}/runs/{run_id}/events",
  tags: ["sessions"],
  summary: "One run's events (D1's replicated log); hidden run facts only for admins",
  middleware: [requireScope("read")] as const,
  request: { params: RunIdParam, query: EventsQuery },
  responses: { 200: jsonResponse(EventsPage, "A page of the run's events"), ...errorResponses(404) },
});

const context = createRoute({
  method: "get",
  path: "/{id}/context",
  tags: ["sessions"],
  summary: "Exactly what the model would get now: the system prompt, the tool declarations and the messages built from the active leaf",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam },
  responses: {
    200: jsonResponse(
      z.object({
        system: z.string(),
        tools: z.array(z.object({ name: z.string(), description: z.string(), input_schema: z.record(z.string(), z.unknown()) })),
        /** Why the running run was offered each tool (docs/agent-loop.md, "Tool assembly"); null when idle. */
        tool_choices: z
          .array(
            z.object({
              name: z.string(),
              reason: z.enum(["always", "configured", "hinted", "relevant"]),
              score: z.number().optional(),
              ranked_by: z.enum(["embedding", "keywords"]).optional(),
              hinted_by: z.array(z.string()).optional(),
            }),
          )
          .nullable(),
        messages: z.array(MessageSchema),
        /** How full the context is (docs/agent-loop.md, "Context size"). */
        context_size: z.object({
          tokens: z.number().int(),
          source: z.enum(["usage", "estimate"]),
          usage_tokens: z.number().int().optional(),
          trailing_tokens: z.number().int(),
          fixed_tokens: z.number().int(),
        }),
        active_leaf: z.string().nullable(),
      }),
      "Context",
    ),
    ...errorResponses(404),
  },
});

const transcript = createRoute({
  method: "get",
  path: "/{id}/transcript",
  tags: ["sessions"],
  summary: "The conversation along the active path, as display items",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam, query: z.strictObject({ limit: z.coerce.number().int().min(1).max(10_000).optional() }) },
  responses: {
    200: jsonResponse(z.object({ active_leaf: z.string().nullable(), items: z.array(DisplayItemSchema) }), "Transcript"),
    ...errorResponses(404),
  },
});

const tree = createRoute({
  method: "get",
  path: "/{id}/tree",
  tags: ["sessions"],
  summary: "The leaves of the session's event tree and which one is active",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam },
  responses: {
    200: jsonResponse(
      z.object({
        active_leaf: z.string().nullable(),
        event_count: z.number(),
        leaves: z.array(
          z.object({
            event_id: z.string(),
            seq: z.number(),
            ts: z.number(),
            type: z.string(),
            run_id: z.string().nullable(),
            excerpt: z.string(),
            active: z.boolean(),
          }),
        ),
      }),
      "Tree",
    ),
    ...errorResponses(404),
  },
});

const NavResult = z.object({ event: EventSchema, active_leaf: z.string().nullable() });

const rewind = createRoute({
  method: "post",
  path: "/{id}/rewind",
  tags: ["sessions"],
  summary: "Rewind: the next message continues from an earlier event (recorded as a rewind event)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam,
    body: jsonBody(z.strictObject({ target_event_id: z.string().min(1).max(100), client_id: ClientId.optional() })),
  },
  responses: { 200: jsonResponse(NavResult, "Rewound"), ...errorResponses(404, 409, 422) },
});

const branch = createRoute({
  method: "post",
  path: "/{id}/branch",
  tags: ["sessions"],
  summary: "Switch to another branch's leaf (recorded as a branch event)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam,
    body: jsonBody(z.strictObject({ leaf_event_id: z.string().min(1).max(100), client_id: ClientId.optional() })),
  },
  responses: { 200: jsonResponse(NavResult, "Switched"), ...errorResponses(404, 409, 422) },
});

const compact = createRoute({
  method: "post",
  path: "/{id}/compact",
  tags: ["sessions"],
  summary: "Compact the history now: the older part is summarised into a compact event (docs/sessions.md, Compaction)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam,
    body: {
      required: false,
      content: {
        "application/json": {
          schema: z.strictObject({
            keep_tokens: z
              .number()
              .int()
              .min(1)
              .max(1_000_000)
              .optional()
              .describe("Estimated tokens of the newest messages kept verbatim (default: a quarter of the history window, else 8000)"),
            client_id: ClientId.optional(),
          }),
        },
      },
    },
  },
  responses: {
    200: jsonResponse(
      z.object({
        compacted: z.boolean(),
        event: EventSchema.nullable(),
        reason: z.string().nullable().describe("nothing_to_compact when everything fits the kept part"),
        active_leaf: z.string().nullable(),
      }),
      "Compacted (or nothing to compact)",
    ),
    ...errorResponses(404, 409, 502),
  },
});

const cancel = createRoute({
  method: "post",
  path: "/{id}/cancel",
  tags: ["sessions"],
  summary: "Cancel the running run (or a queued one by run_id)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam,
    body: {
      required: false,
      content: { "application/json": { schema: z.strictObject({ run_id: z.string().min(1).max(64).optional() }) } },
    },
  },
  responses: {
    200: jsonResponse(
      z.object({ run_id: z.string().nullable(), status: z.string().nullable() }),
      "What was cancelled (null: nothing was running)",
    ),
    ...errorResponses(404),
  },
});

const close = createRoute({
  method: "post",
  path: "/{id}/close",
  tags: ["sessions"],
  summary: "Close the session: open runs are cancelled, new messages answer 409",
  middleware: [requireScope("member")] as const,
  request: { params: SessionIdParam },
  responses: { 200: jsonResponse(SessionSchema, "Closed"), ...errorResponses(404) },
});

/** "Older than the cursor" in (time desc, id desc) order: the time alone would skip same-millisecond rows. */
function olderThan(time: SQLiteColumn, id: SQLiteColumn, before: number, beforeId: string | undefined): SQL {
  if (beforeId === undefined) return lt(time, before);
  return or(lt(time, before), and(eq(time, before), lt(id, beforeId)))!;
}

/**
 * A page of a session's events from D1's replicated log (optionally one run's), in seq order; hidden
 * run facts only when asked (the route has checked admin). `next_after_seq` is where the next page
 * starts: past the last event returned, or where this one started when there was nothing new. The
 * page stops early at the byte budget, with `has_more`.
 */
async function eventsPage(
  budgetBytes: number,
  db: ReturnType<typeof makeDb>,
  where: { sessionId: string; workspaceId: string; runId?: string },
  q: z.infer<typeof EventsQuery>,
) {
  const conditions = [
    eq(sessionEvents.sessionId, where.sessionId),
    eq(sessionEvents.workspaceId, where.workspaceId),
    gt(sessionEvents.seq, q.after_seq),
  ];
  if (where.runId !== undefined) conditions.push(eq(sessionEvents.runId, where.runId));
  if (!q.include_hidden) conditions.push(eq(sessionEvents.hidden, 0));
  const rows = await db
    .select({ payload: sessionEvents.payload, seq: sessionEvents.seq })
    .from(sessionEvents)
    .where(and(...conditions))
    .orderBy(asc(sessionEvents.seq))
    .limit(q.limit + 1)
    .all();
  const page = takeWithinBudget(
    rows.slice(0, q.limit).map((r) => ({ seq: r.seq, event: JSON.parse(r.payload) as PersistentEvent })),
    budgetBytes,
    (r) => r.event,
  );
  return {
    events: page.items.map((r) => r.event),
    next_after_seq: page.items.at(-1)?.seq ?? q.after_seq,
    has_more: page.truncated || rows.length > q.limit,
  };
}

export const sessionRoutes = newRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    assertFieldSize(c.env, "title", body.title, "session_title_bytes");
    assertFieldSize(c.env, "metadata", body.metadata, "session_metadata_bytes");
    await enforceQuota(c.env, c.get("principal").workspaceId, "sessions");
    const {
      created: _created,
      client: _client,
      ...session
    } = await SessionClient.create(c.env, {
      workspaceId: c.get("principal").workspaceId,
      ...(body.title !== undefined ? { title: body.title } : {}),
      ...(body.metadata !== undefined ? { metadata: body.metadata } : {}),
      ...(body.channel !== undefined ? { channel: body.channel } : {}),
    });
    return c.json(session, 201);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const ws = c.get("principal").workspaceId;
    const where = [eq(sessions.workspaceId, ws)];
    if (q.updated_before !== undefined) where.push(olderThan(sessions.updatedAt, sessions.id, q.updated_before, q.before_id));
    if (q.status !== undefined) where.push(eq(sessions.status, q.status));
    where.push(q.archived ? isNotNull(sessions.archivedAt) : isNull(sessions.archivedAt));
    if (q.parent_session_id !== undefined) {
      // A filter naming another workspace's session answers 404 like the session itself (README, Security).
      await SessionClient.of(c.env, q.parent_session_id).view(ws);
      where.push(sql`json_extract(${sessions.metadata}, '$.parent_session_id') = ${q.parent_session_id}`);
    }
    const rows = await makeDb(c.env.DB)
      .select()
      .from(sessions)
      .where(and(...where))
      .orderBy(desc(sessions.updatedAt), desc(sessions.id))
      .limit(q.limit)
      .all();
    const page = takeWithinBudget(
      rows.map((r) => ({
        id: r.id,
        title: r.title,
        status: r.status,
        metadata: JSON.parse(r.metadata) as Record<string, unknown>,
        created_at: r.createdAt,
        updated_at: r.updatedAt,
        last_seq: r.lastSeq,
        archived_at: r.archivedAt,
        usage: { input_tokens: r.inputTokens, output_tokens: r.outputTokens, total_tokens: r.totalTokens },
      })),
      limitsOf(c.env).list_page_bytes,
    );
    const last = page.truncated || rows.length === q.limit ? page.items.at(-1) : undefined;
    return c.json({ sessions: page.items, next_updated_before: last?.updated_at ?? null, next_before_id: last?.id ?? null }, 200);
  })
  .openapi(search, async (c) => {
    const q = c.req.valid("query");
    const offset = q.cursor ?? 0;
    const hits = await searchSessions(c.env.DB, {
      workspaceId: c.get("principal").workspaceId,
      query: q.q,
      limit: q.limit,
      offset,
      ...(q.exclude_session_id !== undefined ? { excludeSessionId: q.exclude_session_id } : {}),
      includeArchived: q.include_archived,
    });
    const page = takeWithinBudget(hits, limitsOf(c.env).list_page_bytes);
    const next = offset + page.items.length;
    const more = (page.truncated || hits.length === q.limit) && next < MAX_SEARCH_DEPTH;
    return c.json({ results: page.items, next_cursor: more ? String(next) : null }, 200);
  })
  .openapi(get, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.view(workspaceId), 200);
  })
  .openapi(events, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    if (q.include_hidden) assertScope(c.get("principal"), "admin");
    const { session, workspaceId } = sessionFor(c, id);
    // Read-your-writes on the D1 copy of one's own session: the SessionDO copies what is pending first
    // (replication trails a run's answer; docs/sessions.md, "Storage first, D1 second").
    await Promise.all([session.view(workspaceId), session.flushReplication()]);
    return c.json(await eventsPage(limitsOf(c.env).list_page_bytes, makeDb(c.env.DB), { sessionId: id, workspaceId }, q), 200);
  })
  .openapi(runs, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json({ runs: await session.listRuns(workspaceId, c.req.valid("query").limit) }, 200);
  })
  .openapi(run, async (c) => {
    const { id, run_id } = c.req.valid("param");
    const { session, workspaceId } = sessionFor(c, id);
    return c.json(await session.getRun(run_id, workspaceId), 200);
  })
  .openapi(runEvents, async (c) => {
    const { id, run_id } = c.req.valid("param");
    const q = c.req.valid("query");
    if (q.include_hidden) assertScope(c.get("principal"), "admin");
    const { session, workspaceId } = sessionFor(c, id);
    await Promise.all([session.getRun(run_id, workspaceId), session.flushReplication()]);
    return c.json(
      await eventsPage(limitsOf(c.env).list_page_bytes, makeDb(c.env.DB), { sessionId: id, workspaceId, runId: run_id }, q),
      200,
    );
  })
  .openapi(context, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.context(workspaceId), 200);
  })
  .openapi(transcript, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.transcript(workspaceId, c.req.valid("query").limit), 200);
  })
  .openapi(tree, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.tree(workspaceId), 200);
  })
  .openapi(rewind, async (c) => {
    const body = c.req.valid("json");
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.rewind(workspaceId, body.target_event_id, body.client_id ?? "api"), 200);
  })
  .openapi(branch, async (c) => {
    const body = c.req.valid("json");
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.branch(workspaceId, body.leaf_event_id, body.client_id ?? "api"), 200);
  })
  .openapi(compact, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    const body = c.req.header("Content-Type")?.includes("application/json") ? c.req.valid("json") : {};
    return c.json(await session.compact(workspaceId, body.client_id ?? "api", body.keep_tokens), 200);
  })
  .openapi(cancel, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    const body = c.req.header("Content-Type")?.includes("application/json") ? c.req.valid("json") : {};
    const out = await session.cancel(workspaceId, body.run_id);
    return c.json(out ?? { run_id: null, status: null }, 200);
  })
  .openapi(close, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.close(workspaceId, "api"), 200);
  });
