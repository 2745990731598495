/**
 * Curated memory's frozen snapshot on a real `wrangler dev` (docs/memory.md): the scripted
 * OpenAI-compatible server makes run 1 call the `memory` tool; the system messages it received show
 * the fact absent from both of run 1's requests and present in run 2's.
 */
import { describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

const FACT = "E2E-FACT: the staging database is called heron.";

function systemOf(body: unknown): string {
  const messages = (body as { messages?: { role: string; content: unknown }[] }).messages ?? [];
  const system = messages.find((m) => m.role === "system");
  return typeof system?.content === "string" ? system.content : JSON.stringify(system?.content ?? "");
}

describe("wrangler dev: memory", () => {
  it("a fact saved with the memory tool reaches the system prompt from the next run, not the current one", async () => {
    const ws = await newWorkspace();
    const model = `echo:memory-${Math.random().toString(36).slice(2, 10)}`;
    const config = await api("PUT", "/api/config", {
      token: ws.token,
      body: { model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` } },
    });
    expect(config.status).toBe(200);
    await models.script(model, [
      { tool_calls: [{ name: "memory", arguments: { action: "add", store: "notes", text: FACT } }] },
      { text: "noted" },
    ]);
    const session = await api("POST", "/api/sessions", { token: ws.token, body: {} });
    const sessionId = ((await session.json()) as { id: string }).id;

    const send = async (content: string) => {
      const res = await api("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.token, body: { content } });
      expect(res.status).toBe(200);
      return (await res.json()) as { status: string };
    };
    expect((await send("remember the staging database")).status).toBe("completed");
    const stored = (await (await api("GET", "/api/memory", { token: ws.token })).json()) as {
      stores: { notes: { entries: { text: string }[]; usage: string } };
    };
    expect(stored.stores.notes.entries.map((e) => e.text)).toEqual([FACT]);

    expect((await send("what is staging called?")).status).toBe("completed");
    const requests = await models.requests(model);
    expect(requests).toHaveLength(3);
    const [first, second, third] = requests.map((r) => systemOf(r.body));
    expect(first).not.toContain(FACT);
    expect(second).not.toContain(FACT);
    expect(third).toContain("# Memory");
    expect(third).toContain(`- ${FACT}`);
    expect(third).toContain(stored.stores.notes.usage);

    const history = (await (await api("GET", "/api/memory/history", { token: ws.token })).json()) as {
      changes: { action: string; actor: { kind: string; session_id: string | null } }[];
    };
    expect(history.changes).toMatchObject([{ action: "add", actor: { kind: "run", session_id: sessionId } }]);
  });
});
