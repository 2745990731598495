// Rename, archive and delete a session (docs/sessions.md, "Rename, archive, delete"): PATCH and DELETE
// /api/sessions/:id against real D1 and Durable Objects; the model is scripted.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { ScriptedModel, newSession, scriptedWorkspace, text, type ScriptedWorkspace } from "../../support/sessions.ts";

interface ListPage {
  sessions: { id: string; title: string; archived_at: number | null }[];
}

async function chatIn(ws: ScriptedWorkspace, content: string): Promise<string> {
  const id = await newSession(ws, { title: "before" });
  const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content } });
  expect(res.status).toBe(200);
  expect(await SessionClient.of(env, id).flushReplication()).toBe(true);
  return id;
}

const listed = async (ws: ScriptedWorkspace, query = "") =>
  (await json<ListPage>(await call("GET", `/api/sessions${query}`, { token: ws.read }))).sessions.map((s) => s.id);

const searched = async (ws: ScriptedWorkspace, q: string, extra = "") =>
  (
    await json<{ results: { session_id: string }[] }>(await call("GET", `/api/sessions/search?q=${q}${extra}`, { token: ws.read }))
  ).results.map((r) => r.session_id);

describe("PATCH /api/sessions/:id", () => {
  it("renames: the title is in the session, the list and the log", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const id = await chatIn(ws, "first words");
    const res = await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: { title: "Quarterly plan" } });
    expect(res.status).toBe(200);
    expect((await json<{ title: string }>(res)).title).toBe("Quarterly plan");
    expect(await SessionClient.of(env, id).flushReplication()).toBe(true);
    const page = await json<ListPage>(await call("GET", "/api/sessions", { token: ws.read }));
    expect(page.sessions.find((s) => s.id === id)?.title).toBe("Quarterly plan");
    const events = await json<{ events: { type: string; changes?: unknown }[] }>(
      await call("GET", `/api/sessions/${id}/events`, { token: ws.read }),
    );
    expect(events.events.filter((e) => e.type === "session_info").at(-1)?.changes).toEqual({ title: "Quarterly plan" });
  });

  it("archives: gone from the list and search, listed with archived=true, found with include_archived, back when unarchived", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const kept = await chatIn(ws, "zebra crossing notes");
    const archived = await chatIn(ws, "zebra migration notes");
    const res = await call("PATCH", `/api/sessions/${archived}`, { token: ws.member, body: { archived: true } });
    expect(res.status).toBe(200);
    expect((await json<{ archived_at: number | null }>(res)).archived_at).toEqual(expect.any(Number));
    expect(await SessionClient.of(env, archived).flushReplication()).toBe(true);
    expect(await listed(ws)).toEqual([kept]);
    expect(await listed(ws, "?archived=true")).toEqual([archived]);
    expect(await searched(ws, "zebra")).toEqual([kept]);
    expect((await searched(ws, "zebra", "&include_archived=true")).sort()).toEqual([kept, archived].sort());
    const back = await call("PATCH", `/api/sessions/${archived}`, { token: ws.member, body: { archived: false } });
    expect((await json<{ archived_at: number | null }>(back)).archived_at).toBeNull();
    expect(await SessionClient.of(env, archived).flushReplication()).toBe(true);
    expect((await listed(ws)).sort()).toEqual([kept, archived].sort());
  });

  it("refuses an empty change, an unknown field, a read token, and another workspace's session", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const other = await newWorkspace();
    const id = await newSession(ws);
    expect((await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: {} })).status).toBe(400);
    expect((await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: { title: "x", status: "closed" } })).status).toBe(400);
    expect((await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: { title: "   " } })).status).toBe(400);
    expect((await call("PATCH", `/api/sessions/${id}`, { token: ws.read, body: { title: "x" } })).status).toBe(403);
    const foreign = await call("PATCH", `/api/sessions/${id}`, { token: other.admin, body: { title: "mine now" } });
    expect(foreign.status).toBe(404);
    expect((await json<{ error: { code: string } }>(foreign)).error.code).toBe("not_found");
    expect((await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: { title: "x".repeat(2000) } })).status).toBe(413);
  });
});

describe("DELETE /api/sessions/:id", () => {
  it("deletes the log, the D1 copy and the search entries; the session then answers 404", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const id = await chatIn(ws, "platypus facts");
    expect(await searched(ws, "platypus")).toEqual([id]);
    const res = await call("DELETE", `/api/sessions/${id}`, { token: ws.admin });
    expect(res.status).toBe(204);
    expect((await call("GET", `/api/sessions/${id}`, { token: ws.read })).status).toBe(404);
    expect(await listed(ws)).toEqual([]);
    expect(await searched(ws, "platypus")).toEqual([]);
    const rows = await env.DB.batch([
      env.DB.prepare(`SELECT count(*) AS n FROM session_events WHERE session_id = ?`).bind(id),
      env.DB.prepare(`SELECT count(*) AS n FROM session_runs WHERE session_id = ?`).bind(id),
      env.DB.prepare(`SELECT count(*) AS n FROM sessions WHERE id = ?`).bind(id),
    ]);
    expect(rows.map((r) => (r.results[0] as { n: number }).n)).toEqual([0, 0, 0]);
    expect((await call("DELETE", `/api/sessions/${id}`, { token: ws.admin })).status).toBe(404);
  });

  it("needs admin, and another workspace's session answers 404 and stays", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const other = await newWorkspace();
    const id = await newSession(ws);
    expect((await call("DELETE", `/api/sessions/${id}`, { token: ws.member })).status).toBe(403);
    expect((await call("DELETE", `/api/sessions/${id}`, { token: other.admin })).status).toBe(404);
    expect((await call("GET", `/api/sessions/${id}`, { token: ws.read })).status).toBe(200);
  });
});
