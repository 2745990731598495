/**
 * `/api/memory`: the workspace's curated memory (docs/memory.md) — both stores with their usage, a
 * whole store replaced as a list, one entry added or deleted, and the audit history of every change.
 * `?agent_id=` addresses one toolchain agent's memory instead of the workspace's; an agent of another
 * workspace is not found. Reading needs `read`; changing needs `member` (admins included).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import type { AppEnv } from "../context.ts";
import { notFound } from "../../../kernel/errors.ts";
import { AgentIdSchema } from "../../../domains/tasks/agents.ts";
import { getAgent } from "../../../domains/tasks/agent-store.ts";
import { EntryTextSchema, MEMORY_STORES, MemoryStoreSchema, type MemoryActor, type MemoryScope } from "../../../domains/memory/memory.ts";
import { PUT_MAX_ENTRIES, addEntry, listChanges, putStore, removeEntryById, viewStores } from "../../../domains/memory/store.ts";

const Entry = z.object({ id: z.string(), text: z.string(), created_at: z.number(), updated_at: z.number() }).openapi("MemoryEntry");
const Store = z
  .object({
    store: MemoryStoreSchema,
    entries: z.array(Entry),
    used_chars: z.number(),
    budget_chars: z.number(),
    usage: z.string().describe('e.g. "62% of 2,200 chars used"'),
  })
  .openapi("MemoryStore");
const Memory = z.object({ agent_id: z.string().nullable(), stores: z.object({ notes: Store, profile: Store }) }).openapi("Memory");
const Change = z
  .object({
    seq: z.number(),
    store: MemoryStoreSchema,
    action: z.enum(["add", "replace", "remove", "put"]),
    entry_id: z.string().nullable(),
    old_text: z.string().nullable().describe("For put: a JSON array of the entries before"),
    new_text: z.string().nullable().describe("For put: a JSON array of the entries after"),
    actor: z.object({ kind: z.enum(["token", "run"]), id: z.string(), session_id: z.string().nullable() }),
    created_at: z.number(),
  })
  .openapi("MemoryChange");

const AgentQuery = z.strictObject({ agent_id: AgentIdSchema.optional().describe("A toolchain agent's memory instead of the workspace's") });
const StoreParam = z.object({ store: MemoryStoreSchema });
const EntryParam = z.object({ store: MemoryStoreSchema, id: z.string().min(1).max(64) });

const get = createRoute({
  method: "get",
  path: "/",
  tags: ["memory"],
  summary: "Both memory stores (notes, profile) with their entries and usage",
  middleware: [requireScope("read")] as const,
  request: { query: AgentQuery },
  responses: { 200: jsonResponse(Memory, "Memory"), ...errorResponses(404) },
});

const history = createRoute({
  method: "get",
  path: "/history",
  tags: ["memory"],
  summary: "Every change to the memory of this scope, newest first: who, what, when",
  middleware: [requireScope("read")] as const,
  request: {
    query: AgentQuery.extend({
      before: z.coerce.number().int().min(1).optional().describe("Only changes with a smaller seq (the next page's cursor)"),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
  },
  responses: {
    200: jsonResponse(z.object({ changes: z.array(Change), next_before: z.number().nullable() }), "Changes"),
    ...errorResponses(404),
  },
});

const put = createRoute({
  method: "put",
  path: "/{store}",
  tags: ["memory"],
  summary: "Replace a store's entries with a list (checked, without duplicates, within the budget)",
  middleware: [requireScope("member")] as const,
  request: {
    params: StoreParam,
    query: AgentQuery,
    body: jsonBody(z.strictObject({ entries: z.array(EntryTextSchema).max(PUT_MAX_ENTRIES) })),
  },
  responses: { 200: jsonResponse(Store, "The store"), ...errorResponses(404, 409, 422) },
});

const add = createRoute({
  method: "post",
  path: "/{store}/entries",
  tags: ["memory"],
  summary: "Add one entry",
  middleware: [requireScope("member")] as const,
  request: { params: StoreParam, query: AgentQuery, body: jsonBody(z.strictObject({ text: EntryTextSchema })) },
  responses: { 201: jsonResponse(z.object({ entry: Entry, store: Store }), "Added"), ...errorResponses(404, 409, 422) },
});

const del = createRoute({
  method: "delete",
  path: "/{store}/entries/{id}",
  tags: ["memory"],
  summary: "Delete one entry",
  middleware: [requireScope("member")] as const,
  request: { params: EntryParam, query: AgentQuery },
  responses: { 200: jsonResponse(z.object({ entry: Entry, store: Store }), "Deleted"), ...errorResponses(404) },
});

/** The addressed scope; an agent that is not this workspace's is 404, like any other workspace's object. */
async function scopeOf(c: Context<AppEnv>, agentId: string | undefined): Promise<MemoryScope> {
  const workspaceId = c.get("principal").workspaceId;
  if (agentId === undefined) return { workspaceId, agentId: null };
  if (!(await getAgent(c.env, workspaceId, agentId))) throw notFound(`Agent ${agentId}`);
  return { workspaceId, agentId };
}

const actorOf = (c: Context<AppEnv>): MemoryActor => ({ kind: "token", id: c.get("principal").tokenId });

export const memoryRoutes = newRouter()
  .openapi(get, async (c) => {
    const { agent_id } = c.req.valid("query");
    const scope = await scopeOf(c, agent_id);
    const [notes, profile] = await viewStores(c.env, scope, MEMORY_STORES);
    return c.json({ agent_id: scope.agentId, stores: { notes: notes!, profile: profile! } }, 200);
  })
  .openapi(history, async (c) => {
    const { agent_id, before, limit } = c.req.valid("query");
    const scope = await scopeOf(c, agent_id);
    const changes = await listChanges(c.env, scope, { limit, ...(before !== undefined ? { before } : {}) });
    return c.json({ changes, next_before: changes.length === limit ? changes[changes.length - 1]!.seq : null }, 200);
  })
  .openapi(put, async (c) => {
    const { store } = c.req.valid("param");
    const scope = await scopeOf(c, c.req.valid("query").agent_id);
    return c.json(await putStore(c.env, scope, store, c.req.valid("json").entries, actorOf(c)), 200);
  })
  .openapi(add, async (c) => {
    const { store } = c.req.valid("param");
    const scope = await scopeOf(c, c.req.valid("query").agent_id);
    const result = await addEntry(c.env, scope, store, c.req.valid("json").text, actorOf(c));
    return c.json({ entry: result.entry!, store: result.view }, 201);
  })
  .openapi(del, async (c) => {
    const { store, id } = c.req.valid("param");
    const scope = await scopeOf(c, c.req.valid("query").agent_id);
    const result = await removeEntryById(c.env, scope, store, id, actorOf(c));
    return c.json({ entry: result.entry!, store: result.view }, 200);
  });
