/**
 * Sessions end to end: real `wrangler dev` (SessionDO, D1, alarms), the scripted OpenAI-compatible
 * server through the real provider package, and real clients — fetch with SSE, `ws` WebSockets.
 */
import { describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";
import { readSseFrames } from "../support/sse.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

interface Frame {
  persistent: boolean;
  seq: number;
  type: string;
  id?: string;
  run_id: string | null;
  message?: { role: string; text?: string; content?: string; provider?: string; model?: string };
  [key: string]: unknown;
}

const modelEntry = (id: string) => ({ provider: "openai-compatible", id, base_url: `${modelUrl}/v1` });

async function workspaceWith(config: Record<string, unknown>) {
  const ws = await newWorkspace();
  const res = await api("PUT", "/api/config", { token: ws.token, body: config });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
  return ws;
}

async function newSession(token: string): Promise<string> {
  const res = await api("POST", "/api/sessions", { token, body: {} });
  expect(res.status).toBe(201);
  return ((await res.json()) as { id: string }).id;
}

/** Reads SSE frames from a response until `stop` says so or the stream ends. */
const readSse = (res: Response, stop?: (f: Frame, all: Frame[]) => boolean): Promise<Frame[]> => readSseFrames<Frame>(res, stop);

function openSocket(
  url: string,
  headers: Record<string, string> = {},
): Promise<{ socket: WebSocket; frames: Frame[]; ended: Promise<void> }> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(url, { headers });
    const frames: Frame[] = [];
    let markEnded!: () => void;
    const ended = new Promise<void>((r) => (markEnded = r));
    socket.on("message", (data) => {
      const frame = JSON.parse(String(data)) as Frame;
      frames.push(frame);
      if (frame.type === "runtime_end") markEnded();
    });
    socket.once("open", () => resolve({ socket, frames, ended }));
    socket.once("error", reject);
  });
}

const wsUrl = (path: string) => baseUrl().replace(/^http/, "ws") + path;
const persistentIds = (frames: Frame[]) => frames.filter((f) => f.persistent).map((f) => f.id!);

async function d1Log(token: string, sessionId: string): Promise<string[]> {
  const res = await api("GET", `/api/sessions/${sessionId}/events?limit=1000`, { token });
  expect(res.status).toBe(200);
  return ((await res.json()) as { events: { id: string }[] }).events.map((e) => e.id);
}

describe("sessions over wrangler dev", () => {
  it("a tool-calling turn over SSE: three echo calls, then the answer", async () => {
    const model = `tools-3:sse-${Date.now()}`;
    const ws = await workspaceWith({ model: modelEntry(model) });
    const id = await newSession(ws.token);
    const res = await api("POST", `/api/sessions/${id}/messages`, {
      token: ws.token,
      body: { content: "call echo three times" },
      headers: { Accept: "text/event-stream" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("content-type")).toContain("text/event-stream");
    const frames = await readSse(res);
    expect(frames.at(-1)?.type).toBe("runtime_end");
    expect(frames.filter((f) => f.type === "tool_execution_end")).toHaveLength(3);
    const persisted = frames.filter((f) => f.persistent);
    expect(persisted.map((f) => f.message?.role)).toEqual([
      "user",
      "assistant",
      "tool_result",
      "assistant",
      "tool_result",
      "assistant",
      "tool_result",
      "assistant",
    ]);
    expect(persisted.at(-1)?.message?.text).toBe("done after 3 tool calls");
    expect(persisted.filter((f) => f.message?.role === "tool_result").map((f) => f.message?.content)).toEqual([
      "call 1 of 3",
      "call 2 of 3",
      "call 3 of 3",
    ]);
    const seqs = frames.map((f) => f.seq);
    expect([...seqs].sort((a, b) => a - b)).toEqual(seqs);
    expect(await d1Log(ws.token, id)).toEqual(persistentIds(frames));
    expect((await models.requests(model)).length).toBe(4);
  });

  it("two live clients and one that drops and resumes with last_seq end with the same persistent events as D1", async () => {
    const model = `slow:${Date.now()}`;
    await models.script(model, [
      { tool_calls: [{ name: "echo", arguments: { text: "first" } }], delay_ms: 150 },
      { tool_calls: [{ name: "echo", arguments: { text: "second" } }], delay_ms: 150 },
      { text: "a long answer streamed slowly to the clients, word by word, until the end", chunk_delay_ms: 40 },
    ]);
    const ws = await workspaceWith({ model: modelEntry(model) });
    const id = await newSession(ws.token);

    const a = await openSocket(wsUrl(`/api/sessions/${id}/stream?last_seq=0`), { Authorization: `Bearer ${ws.token}` });
    const ticketRes = await api("POST", `/api/sessions/${id}/stream-ticket`, { token: ws.token });
    const { ticket } = (await ticketRes.json()) as { ticket: string };
    const b = await openSocket(wsUrl(`/api/sessions/${id}/stream?last_seq=0&ticket=${encodeURIComponent(ticket)}`));

    const dropping = await fetch(`${baseUrl()}/api/sessions/${id}/stream?last_seq=0`, { headers: { Authorization: `Bearer ${ws.token}` } });
    const submitted = await api("POST", `/api/sessions/${id}/messages`, { token: ws.token, body: { content: "go slowly" } });
    expect(submitted.status).toBe(202);
    // Drop the SSE client in the middle of the run: after the first tool result.
    const before = await readSse(dropping, (f) => f.persistent && f.message?.role === "tool_result");
    const lastSeq = before.at(-1)!.seq;
    await new Promise((r) => setTimeout(r, 400));
    const resumed = await fetch(`${baseUrl()}/api/sessions/${id}/stream?last_seq=${lastSeq}`, {
      headers: { Authorization: `Bearer ${ws.token}` },
    });
    const after = await readSse(resumed, (f) => f.type === "runtime_end");
    await Promise.all([a.ended, b.ended]);
    a.socket.close();
    b.socket.close();

    const fromD1 = await d1Log(ws.token, id);
    expect(fromD1).toHaveLength(6); // user, (assistant, tool_result) × 2, assistant
    expect(persistentIds(a.frames)).toEqual(fromD1);
    expect(persistentIds(b.frames)).toEqual(fromD1);
    expect([...persistentIds(before), ...persistentIds(after)]).toEqual(fromD1);
    // Both sockets saw exactly the same frames in the same order.
    expect(b.frames.map((f) => f.seq)).toEqual(a.frames.map((f) => f.seq));
    // The resumed client got the answer's text, whether it reconnected before or during the stream.
    const finalText = a.frames.filter((f) => f.persistent).at(-1)?.message?.text;
    expect(
      after
        .filter((f) => f.type === "text_delta")
        .map((f) => f.delta)
        .join(""),
    ).toBe(finalText);
  });

  it("rewind and branch through the API", async () => {
    const model = `echo:rewind-${Date.now()}`;
    const ws = await workspaceWith({ model: modelEntry(model) });
    const id = await newSession(ws.token);
    for (const content of ["alpha", "beta"]) {
      const res = await api("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.token, body: { content } });
      expect(res.status).toBe(200);
    }
    const log = await d1Log(ws.token, id);
    const [, alphaAnswer, , betaAnswer] = log;
    expect((await api("POST", `/api/sessions/${id}/rewind`, { token: ws.token, body: { target_event_id: alphaAnswer } })).status).toBe(200);
    const gamma = await api("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.token, body: { content: "gamma" } });
    expect(((await gamma.json()) as { output_text: string }).output_text).toBe("echo: gamma");
    const context = (await (await api("GET", `/api/sessions/${id}/context`, { token: ws.token })).json()) as {
      messages: { role: string; content?: string }[];
    };
    expect(context.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["alpha", "gamma"]);
    const tree = (await (await api("GET", `/api/sessions/${id}/tree`, { token: ws.token })).json()) as {
      leaves: { event_id: string; active: boolean }[];
    };
    expect(tree.leaves.map((l) => l.active)).toEqual([false, true]);
    expect((await api("POST", `/api/sessions/${id}/branch`, { token: ws.token, body: { leaf_event_id: betaAnswer } })).status).toBe(200);
    const back = (await (await api("GET", `/api/sessions/${id}/transcript`, { token: ws.token })).json()) as {
      items: { kind: string; text: string }[];
    };
    expect(back.items.filter((i) => i.kind === "user").map((i) => i.text)).toEqual(["alpha", "beta"]);
    expect((await api("POST", `/api/sessions/${id}/branch`, { token: ws.token, body: { leaf_event_id: "evt_nowhere" } })).status).toBe(422);
  });

  it("a tool call written as JSON text becomes a real call, never text shown to the user", async () => {
    const ws = await workspaceWith({ model: modelEntry(`json-tool:${Date.now()}`) });
    const id = await newSession(ws.token);
    const res = await api("POST", `/api/sessions/${id}/messages`, {
      token: ws.token,
      body: { content: "hello json" },
      headers: { Accept: "text/event-stream" },
    });
    const frames = await readSse(res);
    expect(
      frames
        .filter((f) => f.type === "text_delta")
        .map((f) => String(f.delta))
        .join(""),
    ).not.toContain('"arguments"');
    const persisted = frames.filter((f) => f.persistent);
    expect(persisted.map((f) => f.message?.role)).toEqual(["user", "assistant", "tool_result", "assistant"]);
    expect(persisted[2]?.message?.content).toBe("hello json");
    expect(persisted[3]?.message?.text).toBe("json-tool done: hello json");
  });

  it("main provider down: the fallback answers and the result says which model", async () => {
    const fallback = `echo:fallback-${Date.now()}`;
    const ws = await workspaceWith({ model: modelEntry(`down:${Date.now()}`), fallback_model: modelEntry(fallback) });
    const res = await api("POST", "/api/chat", { token: ws.token, body: { message: "are you there" } });
    expect(res.status).toBe(200);
    const body = (await res.json()) as { output_text: string; provider: string; model: string; session_id: string };
    expect(body).toMatchObject({ output_text: "echo: are you there", provider: "openai-compatible", model: fallback });
    const events = (await (await api("GET", `/api/sessions/${body.session_id}/events`, { token: ws.token })).json()) as { events: Frame[] };
    expect(events.events.at(-1)?.message).toMatchObject({ role: "assistant", model: fallback });
  });
});
