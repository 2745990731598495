/**
 * Schedules and web_fetch end to end on `wrangler dev` (docs/schedules.md): a schedule a few seconds
 * ahead is fired by the ScheduleDO's real alarm and its message reaches the session once, under
 * `schedule:<id>`; the scripted model calls `web_fetch` on the scripted server (loopback, allowed in
 * the suite's Worker) and on the cloud metadata address (always refused by the egress policy).
 */
import { describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

interface Event {
  type: string;
  client_id: string;
  message?: { role: string; content?: unknown; text?: string };
}

async function setup(model: string) {
  const ws = await newWorkspace();
  const put = await api("PUT", "/api/config", {
    token: ws.token,
    body: { model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` } },
  });
  expect(put.status).toBe(200);
  const created = await api("POST", "/api/sessions", { token: ws.token, body: {} });
  expect(created.status).toBe(201);
  return { ...ws, session: ((await created.json()) as { id: string }).id };
}

async function events(token: string, sessionId: string): Promise<Event[]> {
  const res = await api("GET", `/api/sessions/${sessionId}/events?limit=1000`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: Event[] }).events;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

describe("schedules over wrangler dev", () => {
  it("a schedule a few seconds ahead posts its message once", async () => {
    const ws = await setup(`echo:schedule-${Date.now()}`);
    const at = new Date(Date.now() + 3_000).toISOString();
    const res = await api("POST", "/api/schedules", { token: ws.token, body: { session_id: ws.session, message: "scheduled hello", at } });
    expect(res.status).toBe(201);
    const schedule = (await res.json()) as { id: string; next_run_at: string };
    expect(schedule.next_run_at).toBe(at);

    const fromSchedule = (all: Event[]) => all.filter((e) => e.type === "message" && e.client_id === `schedule:${schedule.id}`);
    const deadline = Date.now() + 30_000;
    while (fromSchedule(await events(ws.token, ws.session)).length === 0) {
      if (Date.now() > deadline) throw new Error("the scheduled message never arrived");
      await sleep(500);
    }
    // Give a second firing every chance to happen: there must not be one.
    await sleep(3_000);
    const all = await events(ws.token, ws.session);
    expect(fromSchedule(all)).toHaveLength(1);
    expect(JSON.stringify(fromSchedule(all)[0])).toContain("scheduled hello");
    expect(all.some((e) => e.message?.role === "assistant" && JSON.stringify(e.message).includes("echo: scheduled hello"))).toBe(true);
    expect((await api("GET", `/api/schedules/${schedule.id}`, { token: ws.token })).status).toBe(404);
  });
});

const PAGE =
  "<html><head><title>t</title><script>alert(1)</script></head><body><h1>Caf&eacute; &amp; cr&#xE8;me &copy2024</h1></body></html>";

describe("web_fetch over wrangler dev", () => {
  it("fetches the scripted server (private egress allowed here) and an HTML page as Markdown, and is refused the metadata address", async () => {
    const model = `web:${Date.now()}`;
    await models.script(model, [
      { tool_calls: [{ name: "web_fetch", arguments: { url: `${modelUrl}/__requests?model=nobody` } }] },
      { tool_calls: [{ name: "web_fetch", arguments: { url: "http://169.254.169.254/latest/meta-data/" } }] },
      { tool_calls: [{ name: "web_fetch", arguments: { url: `${modelUrl}/__page?html=${encodeURIComponent(PAGE)}` } }] },
      { text: "fetched" },
    ]);
    const ws = await setup(model);
    const res = await api("POST", `/api/sessions/${ws.session}/messages?wait=true`, { token: ws.token, body: { content: "fetch it" } });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
    const results = (await events(ws.token, ws.session))
      .filter((e) => e.message?.role === "tool_result")
      .map((e) => JSON.stringify(e.message));
    expect(results).toHaveLength(3);
    expect(results[0]).toContain("status: 200");
    expect(results[0]).toContain(`final_url: ${modelUrl}/__requests?model=nobody`);
    expect(results[0]).toContain('\\"requests\\":[]');
    expect(results[1]).toContain("egress_refused");
    expect(results[1]).toContain("cloud metadata address 169.254.169.254");
    // The HTML page as Markdown, its character references decoded by the bundle's converter (he's
    // stand-in over `entities`, wrangler.toml [alias]; docs/performance.md "The bundle"); the title and
    // script are not page text.
    expect(results[2]).toContain('markdown\\n\\n# Caf\u00e9 & cr\u00e8me \u00a92024"');
  });
});
