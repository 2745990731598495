// Session search (docs/sessions.md, "Search"): the FTS5 index fed by replication, `GET /api/sessions/search`
// and the agent's `session_search` tool. Real D1 and Durable Objects; models are scripted.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { call, json } from "../../support/api.ts";
import { setTestLimits } from "../../support/test-services.ts";
import { ftsQuery } from "../../../src/runtime/session/search.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import type { MessageEvent } from "../../../src/runtime/session/events.ts";
import {
  ScriptedModel,
  doEvents,
  newSession,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  type ScriptedWorkspace,
} from "../../support/sessions.ts";

afterEach(() => setTestLimits(null));

interface Hit {
  session_id: string;
  session_title: string;
  event_id: string;
  seq: number;
  type: string;
  snippet: string;
  score: number;
}
interface SearchPage {
  results: Hit[];
  next_cursor: string | null;
}

/**
 * A model for search tests: a user message `search <args JSON>` makes it call `session_search` with those
 * args; a tool result makes it answer "done"; anything else gets "noted <message>".
 */
function searchingModel(): ScriptedModel {
  return new ScriptedModel((i: number, options: LanguageModelV4CallOptions) => {
    const last = options.prompt.at(-1);
    if (last?.role === "tool") return text("done");
    const said = last?.role === "user" ? last.content.map((p) => (p.type === "text" ? p.text : "")).join("") : "";
    const m = /^search (\{.*\})$/.exec(said.trim());
    if (m) return toolCalls({ id: `s${i}`, name: "session_search", args: JSON.parse(m[1]!) as unknown });
    return text(`noted ${said}`);
  });
}

/** Creates a session (with a title), says each message in it, and waits until D1 has all of it. */
async function say(ws: ScriptedWorkspace, messages: string[], title = "chat"): Promise<string> {
  const id = await newSession(ws, { title });
  for (const content of messages) {
    const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content } });
    expect(res.status).toBe(200);
  }
  expect(await SessionClient.of(env, id).flushReplication()).toBe(true);
  return id;
}

async function search(ws: ScriptedWorkspace, q: string, extra = ""): Promise<SearchPage> {
  const res = await call("GET", `/api/sessions/search?q=${encodeURIComponent(q)}${extra}`, { token: ws.read });
  expect(res.status).toBe(200);
  return json<SearchPage>(res);
}

/** The text of the tool result the run of `content` produced in `sessionId`. */
async function toolResultOf(ws: ScriptedWorkspace, sessionId: string): Promise<string> {
  const events = await doEvents(sessionId, ws.id);
  const results = events.filter((e): e is MessageEvent => e.type === "message" && e.message.role === "tool_result");
  const last = results.at(-1)?.message;
  if (last?.role !== "tool_result") throw new Error("no tool result");
  expect(last.is_error).toBe(false);
  return last.content;
}

describe("session search: the API", () => {
  it("finds a word said in another session of the workspace, with snippet, title, event id and seq", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const a = await say(ws, ["my favourite animal is the capybara, by far"], "Animals");
    await say(ws, ["nothing relevant here"]);
    const page = await search(ws, "capybara");
    const events = await doEvents(a, ws.id);
    const said = events.find((e) => e.type === "message" && e.message.role === "user")!;
    const reply = events.find((e) => e.type === "message" && e.message.role === "assistant")!;
    expect(page.results.map((r) => r.event_id).sort()).toEqual([said.id, reply.id].sort());
    const hit = page.results.find((r) => r.event_id === said.id)!;
    expect(hit).toMatchObject({ session_id: a, session_title: "Animals", seq: said.seq, type: "message" });
    expect(hit.snippet).toContain("**capybara**");
    expect(page.next_cursor).toBeNull();
  });

  it("never returns another workspace's events, hidden run facts or tool output", async () => {
    const ws = await scriptedWorkspace(
      new ScriptedModel((i, o) =>
        o.prompt.at(-1)?.role === "tool" ? text("ok") : toolCalls({ id: `e${i}`, name: "echo", args: { text: "quokkaoutput" } }),
      ),
    );
    const other = await scriptedWorkspace(searchingModel());
    const theirs = await say(other, ["the platypus is theirs"]);
    const mine = await say(ws, ["tell me something"]);
    expect(await toolResultOf(ws, mine)).toContain("quokkaoutput");
    expect((await search(ws, "platypus")).results).toEqual([]);
    expect((await search(other, "platypus")).results.map((r) => r.session_id)).toContain(theirs);
    // Tool arguments and tool output are not indexed.
    expect((await search(ws, "quokkaoutput")).results).toEqual([]);
    // Hidden run facts (the system prompt snapshot) are in D1 but never indexed.
    const hidden = await env.DB.prepare(
      "SELECT count(*) AS n FROM session_search_fts f JOIN session_events e ON e.id = f.event_id WHERE e.hidden = 1",
    ).first<{ n: number }>();
    expect(hidden?.n).toBe(0);
    const snapshot = await env.DB.prepare("SELECT count(*) AS n FROM session_events WHERE session_id = ? AND hidden = 1")
      .bind(mine)
      .first<{ n: number }>();
    expect(snapshot?.n).toBeGreaterThan(0);
    // Even a hidden row that carries text (written by hand) stays out of the index.
    await env.DB.prepare(
      "INSERT INTO session_events (id, session_id, workspace_id, seq, type, hidden, payload, search_text, ts) VALUES (?, ?, ?, 100000, 'run_started', 1, '{}', 'secretfact', 0)",
    )
      .bind(`evt-hidden-${mine}`, mine, ws.id)
      .run();
    expect((await search(ws, "secretfact")).results).toEqual([]);
  });

  it("ranks the better match first", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const weak = await say(ws, [
      "a long message that mentions the lantern only once among many other unrelated words about gardens, rivers, boats and weather",
    ]);
    const strong = await say(ws, ["lantern lantern, the lantern"]);
    const page = await search(ws, "lantern");
    const sessionsInOrder = [...new Set(page.results.map((r) => r.session_id))];
    expect(sessionsInOrder).toEqual([strong, weak]);
    expect(page.results[0]!.score).toBeGreaterThan(page.results.at(-1)!.score);
  });

  it("treats the query as plain words: FTS5 syntax never breaks it, the last word matches as a prefix", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const id = await say(ws, ['the wombat NEAR the river (column:value) said "hi"']);
    for (const q of ['"wombat', "wombat AND", "NEAR(wombat", "wombat*", "col:wombat", "^wombat", "wombat -river", "(wombat)", "wom'bat"]) {
      const res = await call("GET", `/api/sessions/search?q=${encodeURIComponent(q)}`, { token: ws.read });
      expect(res.status, q).toBe(200);
    }
    expect((await search(ws, '"wombat')).results.map((r) => r.session_id)).toContain(id);
    expect((await search(ws, "NEAR(wombat")).results.map((r) => r.session_id)).toContain(id);
    expect((await search(ws, "column:value")).results.map((r) => r.session_id)).toContain(id);
    expect((await search(ws, "womb")).results.map((r) => r.session_id)).toContain(id);
    expect((await search(ws, '*"()^:')).results).toEqual([]);
    expect(ftsQuery('a "b" c*')).toBe('"a" "b" "c"');
    expect(ftsQuery("river wom")).toBe('"river" "wom"*');
    expect(ftsQuery("--")).toBeNull();
  });

  it("pages with a cursor, within the list byte budget", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    await say(ws, ["marmot one", "marmot two", "marmot three"]);
    const first = await search(ws, "marmot", "&limit=2");
    expect(first.results).toHaveLength(2);
    expect(first.next_cursor).toBe("2");
    const rest = await search(ws, "marmot", `&limit=10&cursor=${first.next_cursor}`);
    expect(rest.results).toHaveLength(4);
    expect(rest.next_cursor).toBeNull();
    const ids = [...first.results, ...rest.results].map((r) => r.event_id);
    expect(new Set(ids).size).toBe(6);
    setTestLimits({ list_page_bytes: 300 });
    const small = await search(ws, "marmot");
    expect(small.results).toHaveLength(1);
    expect(small.next_cursor).toBe("1");
    const bad = await call("GET", "/api/sessions/search?q=marmot&cursor=nope", { token: ws.read });
    expect(bad.status).toBe(400);
  });

  it("a retried replication batch never duplicates index rows", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const id = await say(ws, ["the okapi is shy", "the okapi again"]);
    const indexed = async () =>
      (
        await env.DB.prepare(
          "SELECT count(*) AS n FROM session_search_fts f JOIN session_events e ON e.id = f.event_id WHERE e.session_id = ?",
        )
          .bind(id)
          .first<{ n: number }>()
      )?.n;
    expect(await indexed()).toBe(4);
    await runInDurableObject(stub(id), (_i, state) => {
      state.storage.sql.exec("UPDATE events SET replicated = 0");
    });
    expect(await SessionClient.of(env, id).flushReplication()).toBe(true);
    expect(await indexed()).toBe(4);
    expect((await search(ws, "okapi")).results).toHaveLength(4);
  });
});

describe("session search: the session_search tool", () => {
  it("finds a word from another session of the workspace, not the current one unless asked, never another workspace's", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const other = await scriptedWorkspace(searchingModel());
    await say(other, ["the axolotl lives elsewhere"]);
    const a = await say(ws, ["remember the axolotl named Pink"], "Pets");
    const aEvents = await doEvents(a, ws.id);
    const said = aEvents.find((e) => e.type === "message" && e.message.role === "user")!;

    const b = await say(ws, ['search {"query":"axolotl"}']);
    const result = await toolResultOf(ws, b);
    expect(result).toContain(`session ${a} "Pets"`);
    expect(result).toContain(`event ${said.id} (seq ${said.seq})`);
    expect(result).toContain("**axolotl**");
    expect(result).not.toContain(b);
    expect(result).not.toContain("elsewhere");

    const c = await say(ws, ['search {"query":"axolotl","include_current":true,"limit":20}']);
    expect(await toolResultOf(ws, c)).toContain(`session ${c}`);
  });

  it("lists recent sessions with titles and an excerpt, and asks for a query in search mode", async () => {
    const ws = await scriptedWorkspace(searchingModel());
    const a = await say(ws, ["planning the garden"], "Garden plans");
    const b = await say(ws, ['search {"mode":"recent"}']);
    const recent = await toolResultOf(ws, b);
    expect(recent).toContain(`session ${a} "Garden plans"`);
    expect(recent).toContain("noted planning the garden");
    expect(recent).not.toContain(`session ${b}`);

    const c = await say(ws, ["search {}"]);
    const events = await doEvents(c, ws.id);
    const failed = events.findLast((e): e is MessageEvent => e.type === "message" && e.message.role === "tool_result")!;
    expect(failed.message).toMatchObject({ is_error: true });
  });

  it("is offered in every registered tool set", async () => {
    const { registeredToolsets } = await import("../../../src/app/runtime.ts");
    for (const [name, make] of registeredToolsets())
      expect(
        make().map((t) => t.name),
        name,
      ).toContain("session_search");
  });
});
