/**
 * Session search end to end (docs/sessions.md, "Search"): real `wrangler dev` with D1's FTS5 index fed by
 * replication; the scripted OpenAI-compatible server makes the agent call `session_search`, and the API
 * finds the same word.
 */
import { describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

interface Hit {
  session_id: string;
  event_id: string;
  seq: number;
  snippet: string;
}

async function say(token: string, sessionId: string, content: string): Promise<void> {
  const res = await api("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token, body: { content } });
  expect(res.status).toBe(200);
}

async function newSession(token: string, title: string): Promise<string> {
  const res = await api("POST", "/api/sessions", { token, body: { title } });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Polls the search API until it answers hits from `sessionId` (replication to D1 runs beside the agent loop). */
async function searchUntilFound(token: string, q: string, sessionId: string): Promise<Hit[]> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const res = await api("GET", `/api/sessions/search?q=${encodeURIComponent(q)}`, { token });
    expect(res.status).toBe(200);
    const hits = ((await res.json()) as { results: Hit[] }).results;
    if (hits.some((h) => h.session_id === sessionId)) return hits;
    if (Date.now() > deadline) throw new Error(`search for ${q} never found session ${sessionId}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("session search (e2e)", () => {
  it("the agent's session_search finds a word from another session, and so does the API", async () => {
    const model = `search-${Date.now()}`;
    await models.script(model, [
      { text: "Noted." },
      { tool_calls: [{ name: "session_search", arguments: { query: "narwhal" } }] },
      { text: "Found it." },
    ]);
    const ws = await newWorkspace();
    const config = await api("PUT", "/api/config", {
      token: ws.token,
      body: { model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` } },
    });
    expect(config.status).toBe(200);

    const a = await newSession(ws.token, "Sea creatures");
    await say(ws.token, a, "my favourite sea creature is the narwhal");
    const hits = await searchUntilFound(ws.token, "narwhal", a);
    const hit = hits.find((h) => h.session_id === a)!;
    expect(hit.snippet).toContain("**narwhal**");
    expect(hit.seq).toBeGreaterThan(0);

    const b = await newSession(ws.token, "Question");
    await say(ws.token, b, "what was my favourite sea creature?");
    const sent = await models.requests(model);
    const toolMessage = JSON.stringify(sent.at(-1)!.body.messages.at(-1));
    expect(toolMessage).toContain(`session ${a} \\"Sea creatures\\"`);
    expect(toolMessage).toContain(`event ${hit.event_id} (seq ${hit.seq})`);
    expect(toolMessage).toContain("**narwhal**");

    const other = await newWorkspace();
    const none = await api("GET", "/api/sessions/search?q=narwhal", { token: other.token });
    expect(((await none.json()) as { results: Hit[] }).results).toEqual([]);
  });
});
