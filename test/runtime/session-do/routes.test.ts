import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";
import type { PersistentEvent, StreamFrame } from "../../../src/runtime/session/events.ts";
import type { RunResult } from "../../../src/runtime/session/contract.ts";
import { MAX_MESSAGE_BYTES } from "../../../src/runtime/session/service.ts";
import type { LanguageModelV4Message } from "@ai-sdk/provider";
import {
  ScriptedModel,
  deferred,
  doEvents,
  newSession,
  readSse,
  scriptedWorkspace,
  text,
  toolCalls,
  until,
  replicated,
} from "../../support/sessions.ts";

/** A context message: the log's message shapes as `conversationForModel` leaves them. */
type ContextMessage =
  | { role: "user"; content: string }
  | { role: "assistant"; text: string; tool_calls: { id: string; name: string; args: unknown }[] }
  | { role: "tool_result"; tool_call_id: string; tool_name: string; content: string; is_error: boolean };

/** One comparable line per piece of what a model receives (text, call, result), from either shape. */
function fromContext(m: ContextMessage): string[] {
  switch (m.role) {
    case "user":
      return [`user: ${m.content}`];
    case "assistant":
      return [
        ...(m.text ? [`assistant: ${m.text}`] : []),
        ...m.tool_calls.map((c) => `assistant: call ${c.id} ${c.name} ${JSON.stringify(c.args)}`),
      ];
    case "tool_result":
      return [`tool: result ${m.tool_call_id} ${m.tool_name} ${m.is_error ? "error" : "ok"} ${m.content}`];
  }
}

function fromPrompt(m: LanguageModelV4Message): string[] {
  if (m.role === "system") return [`system: ${m.content}`];
  const parts = m.content.map((p) => {
    switch (p.type) {
      case "text":
        return p.text;
      case "tool-call":
        return `call ${p.toolCallId} ${p.toolName} ${JSON.stringify(p.input)}`;
      case "tool-result":
        return `result ${p.toolCallId} ${p.toolName} ${p.output.type === "error-text" ? "error" : "ok"} ${"value" in p.output ? String(p.output.value) : ""}`;
      default:
        return p.type;
    }
  });
  return parts.map((p) => `${m.role}: ${p}`);
}

type ErrorBody = { error: { code: string; message: string; details?: { path: string }[] } };

async function send(token: string, sessionId: string, content: string, opts: { wait?: boolean; headers?: Record<string, string> } = {}) {
  return call("POST", `/api/sessions/${sessionId}/messages${opts.wait ? "?wait=true" : ""}`, {
    token,
    body: { content },
    headers: opts.headers ?? {},
  });
}

describe("session routes: happy paths", () => {
  it("creates, lists and reads a session; a turn with ?wait=true answers the result", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("hi back")]));
    const created = await call("POST", "/api/sessions", { token: ws.member, body: { title: "First", metadata: { team: "a" } } });
    expect(created.status).toBe(201);
    const session = await json<{ id: string; status: string; title: string }>(created);
    expect(session).toMatchObject({ title: "First", status: "open", workspace_id: ws.id, last_seq: 0, active_leaf: null });

    const res = await send(ws.member, session.id, "hello", { wait: true });
    expect(res.status).toBe(200);
    expect(await json<RunResult>(res)).toMatchObject({ status: "completed", output_text: "hi back", session_id: session.id });

    // The list is D1's projection, which trails the result by its replication (docs/sessions.md, "Storage first, D1 second").
    await replicated(session.id);
    const listed = await json<{ sessions: { id: string; last_seq: number; usage: { total_tokens: number } }[] }>(
      await call("GET", "/api/sessions", { token: ws.read }),
    );
    expect(listed.sessions).toHaveLength(1);
    expect(listed.sessions[0]).toMatchObject({ id: session.id, title: "First", metadata: { team: "a" }, usage: { total_tokens: 14 } });
    expect(listed.sessions[0]!.last_seq).toBeGreaterThan(0);

    const one = await json<{ usage: { total_tokens: number }; active_run_id: string | null }>(
      await call("GET", `/api/sessions/${session.id}`, { token: ws.read }),
    );
    expect(one).toMatchObject({ usage: { total_tokens: 14 }, active_run_id: null });
  });

  it("the list filters by status, pages by updated_before and limit, newest first", async () => {
    const ws = await newWorkspace();
    const older = await newSession(ws, { title: "older" });
    await new Promise((r) => setTimeout(r, 5));
    const newer = await newSession(ws, { title: "newer" });
    const list = async (query: string) =>
      (
        await json<{ sessions: { id: string; status: string; updated_at: number }[] }>(
          await call("GET", `/api/sessions${query}`, { token: ws.read }),
        )
      ).sessions;
    expect((await list("")).map((s) => s.id)).toEqual([newer, older]);
    expect((await list("?limit=1")).map((s) => s.id)).toEqual([newer]);
    const [first] = await list("?limit=1");
    expect((await list(`?updated_before=${first!.updated_at}`)).map((s) => s.id)).toEqual([older]);
    expect((await call("POST", `/api/sessions/${older}/close`, { token: ws.member })).status).toBe(200);
    // The list is D1's projection, replicated beside the DO: it catches up.
    await until(async () => (await list("?status=closed")).length > 0, 5_000, "closed status in the list");
    expect((await list("?status=closed")).map((s) => [s.id, s.status])).toEqual([[older, "closed"]]);
    expect((await list("?status=open")).map((s) => s.id)).toEqual([newer]);
  });

  it("without wait answers 202 with the run id; Idempotency-Key returns the same run", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const id = await newSession(ws);
    const a = await send(ws.member, id, "hi", { headers: { "Idempotency-Key": "same" } });
    expect(a.status).toBe(202);
    const first = await json<{ run_id: string; status: string }>(a);
    expect(first).toMatchObject({ session_id: id, status: "queued", deduplicated: false });
    const b = await json<{ run_id: string; deduplicated: boolean }>(
      await send(ws.member, id, "hi", { headers: { "Idempotency-Key": "same" } }),
    );
    expect(b).toMatchObject({ run_id: first.run_id, deduplicated: true });
    const runs = await json<{ runs: { id: string; status: string }[] }>(await call("GET", `/api/sessions/${id}/runs`, { token: ws.read }));
    expect(runs.runs.map((r) => r.id)).toEqual([first.run_id]);
  });

  it("the SSE route with a repeated Idempotency-Key follows the same run from its start", async () => {
    const gate = deferred();
    const ws = await scriptedWorkspace(new ScriptedModel([{ parts: text("late answer"), gate: gate.promise }]));
    const id = await newSession(ws);
    const post = () =>
      call("POST", `/api/sessions/${id}/messages`, {
        token: ws.member,
        body: { content: "hello" },
        headers: { Accept: "text/event-stream", "Idempotency-Key": "sse-1" },
      });
    const first = await post();
    const firstFrames = readSse(first);
    await until(() => ws.main.calls.length === 1, 5_000, "model call");
    const second = await post();
    expect(second.status).toBe(200);
    expect(second.headers.get("X-Run-Id")).toBe(first.headers.get("X-Run-Id"));
    const secondFrames = readSse(second);
    gate.resolve();
    const [a, b] = await Promise.all([firstFrames, secondFrames]);
    const persistentIds = (frames: StreamFrame[]) => frames.filter((f) => f.persistent).map((f) => (f as PersistentEvent).id);
    expect(persistentIds(a)).toHaveLength(2);
    expect(persistentIds(b)).toEqual(persistentIds(a));
    expect(
      b
        .filter((f) => f.type === "text_delta")
        .map((f) => (f as { delta: string }).delta)
        .join(""),
    ).toBe("late answer");
    expect(ws.main.calls).toHaveLength(1);
  });

  it("streams a tool-calling turn as SSE: deltas, tool execution, persistent messages, each with a rising seq", async () => {
    const ws = await scriptedWorkspace(
      new ScriptedModel([toolCalls({ id: "e1", name: "echo", args: { text: "ping" } }), text("pong", "!")]),
    );
    const id = await newSession(ws);
    const res = await call("POST", `/api/sessions/${id}/messages`, {
      token: ws.member,
      body: { content: "go" },
      headers: { Accept: "text/event-stream" },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    const frames = await readSse(res);
    const types = frames.map((f) => f.type);
    expect(types[0]).toBe("runtime_start");
    expect(types.at(-1)).toBe("runtime_end");
    for (const t of [
      "message_start",
      "tool_call_delta",
      "tool_execution_start",
      "tool_execution_end",
      "text_delta",
      "turn_start",
      "turn_end",
    ])
      expect(types).toContain(t);
    expect(frames.some((f) => f.type === "run_started")).toBe(false); // hidden: not on a member's stream
    const seqs = frames.map((f) => f.seq);
    for (let i = 1; i < seqs.length; i++) expect(seqs[i]!).toBeGreaterThan(seqs[i - 1]!);
    const persisted = frames.filter((f): f is StreamFrame & PersistentEvent & { persistent: true } => f.persistent);
    expect(persisted.map((f) => (f.type === "message" ? f.message.role : f.type))).toEqual([
      "user",
      "assistant",
      "tool_result",
      "assistant",
    ]);
    // message_start pre-allocates the id the assistant message is persisted with.
    const starts = frames.filter((f) => f.type === "message_start").map((f) => (f as { event_id: string }).event_id);
    expect(starts).toEqual(persisted.filter((f) => f.type === "message" && f.message.role === "assistant").map((f) => f.id));
    const toolStart = frames.find((f) => f.type === "tool_execution_start") as { event_id: string } | undefined;
    expect(persisted.find((f) => f.type === "message" && f.message.role === "tool_result")?.id).toBe(toolStart?.event_id);
  });

  it("events come from D1 and equal the DO's log; hidden events only for admins who ask", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("a")]));
    const id = await newSession(ws);
    await send(ws.member, id, "one", { wait: true });
    const visible = await json<{ events: PersistentEvent[]; has_more: boolean }>(
      await call("GET", `/api/sessions/${id}/events`, { token: ws.read }),
    );
    const all = await doEvents(id, ws.id);
    expect(visible.events.map((e) => e.id)).toEqual(
      all
        .filter((e) => !["run_started", "system_prompt_snapshotted", "skill_activation_snapshotted", "run_completed"].includes(e.type))
        .map((e) => e.id),
    );
    expect((await call("GET", `/api/sessions/${id}/events?include_hidden=true`, { token: ws.member })).status).toBe(403);
    const withHidden = await json<{ events: PersistentEvent[] }>(
      await call("GET", `/api/sessions/${id}/events?include_hidden=true`, { token: ws.admin }),
    );
    expect(withHidden.events.map((e) => e.id)).toEqual(all.map((e) => e.id));
    const page = await json<{ events: PersistentEvent[]; has_more: boolean; next_after_seq: number }>(
      await call("GET", `/api/sessions/${id}/events?limit=1`, { token: ws.read }),
    );
    expect(page).toMatchObject({ has_more: true, next_after_seq: visible.events[0]!.seq });
    // Past the end: nothing new, and the next poll starts where this one did (not from the beginning).
    const lastSeq = visible.events.at(-1)!.seq;
    expect(await json(await call("GET", `/api/sessions/${id}/events?after_seq=${lastSeq}`, { token: ws.read }))).toEqual({
      events: [],
      next_after_seq: lastSeq,
      has_more: false,
    });
    const runId = all[0]!.run_id!;
    const runEvents = await json<{ events: PersistentEvent[] }>(
      await call("GET", `/api/sessions/${id}/runs/${runId}/events?include_hidden=true`, { token: ws.admin }),
    );
    expect(runEvents.events.map((e) => e.id)).toEqual(all.map((e) => e.id));
  });

  it("context is what the model gets; transcript and tree follow the active leaf", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("first answer")]));
    const id = await newSession(ws);
    await send(ws.member, id, "first question", { wait: true });
    const ctx = await json<{ system: string; messages: { role: string }[] }>(
      await call("GET", `/api/sessions/${id}/context`, { token: ws.read }),
    );
    expect(ctx.system).toContain(`Session id: ${id}`);
    expect(ctx.messages.map((m) => m.role)).toEqual(["user", "assistant"]);
    const transcript = await json<{ items: { kind: string; text: string }[] }>(
      await call("GET", `/api/sessions/${id}/transcript`, { token: ws.read }),
    );
    expect(transcript.items.map((i) => [i.kind, i.text])).toEqual([
      ["user", "first question"],
      ["assistant", "first answer"],
    ]);
    const tree = await json<{ leaves: { active: boolean; excerpt: string }[] }>(
      await call("GET", `/api/sessions/${id}/tree`, { token: ws.read }),
    );
    expect(tree.leaves).toEqual([expect.objectContaining({ active: true, excerpt: "first answer" })]);
  });

  it("context is exactly what the model is sent: system prompt, tool declarations and messages, mid-run", async () => {
    const gate = deferred();
    const main = new ScriptedModel([
      toolCalls({ id: "c1", name: "echo", args: { text: "one" } }, { id: "c2", name: "no_such_tool", args: {} }),
      { parts: text("final"), gate: gate.promise },
    ]);
    const ws = await scriptedWorkspace(main);
    const id = await newSession(ws);
    const running = send(ws.member, id, "use the tools", { wait: true });
    await until(() => main.calls.length === 2, 5_000, "second model call");
    const ctx = await json<{
      system: string;
      tools: { name: string; description: string; input_schema: unknown }[];
      messages: ContextMessage[];
    }>(await call("GET", `/api/sessions/${id}/context`, { token: ws.read }));
    const sent = main.calls[1]!;
    const [system, ...prompt] = sent.prompt;
    expect(system).toEqual({ role: "system", content: ctx.system });
    expect(ctx.tools).toEqual(
      (sent.tools ?? []).map((t) => ({
        name: t.name,
        description: (t as { description?: string }).description,
        input_schema: (t as { inputSchema?: unknown }).inputSchema,
      })),
    );
    expect(ctx.tools.map((t) => t.name)).toEqual([
      "echo",
      "current_time",
      "skill_view",
      "session_search",
      "memory",
      "web_fetch",
      "delegate",
      "schedule",
      "skill_propose",
    ]);
    expect(ctx.messages.flatMap(fromContext)).toEqual(prompt.flatMap(fromPrompt));
    expect(ctx.messages.map((m) => m.role)).toEqual(["user", "assistant", "tool_result", "tool_result"]);
    gate.resolve();
    expect((await running).status).toBe(200);
  });

  it("rewind then a new message forks the tree; branch switches back", async () => {
    const main = new ScriptedModel((i) => text(`answer ${i}`));
    const ws = await scriptedWorkspace(main);
    const id = await newSession(ws);
    await send(ws.member, id, "q1", { wait: true });
    await send(ws.member, id, "q2", { wait: true });
    const before = (await json<{ events: PersistentEvent[] }>(await call("GET", `/api/sessions/${id}/events`, { token: ws.read }))).events;
    const firstAnswer = before[1]!;
    const oldLeaf = before.at(-1)!;
    const rw = await call("POST", `/api/sessions/${id}/rewind`, { token: ws.member, body: { target_event_id: firstAnswer.id } });
    expect(rw.status).toBe(200);
    expect(await json(rw)).toMatchObject({ active_leaf: firstAnswer.id, event: { type: "rewind", target_event_id: firstAnswer.id } });
    await send(ws.member, id, "q2 again", { wait: true });
    const ctx = await json<{ messages: { role: string; content?: string }[] }>(
      await call("GET", `/api/sessions/${id}/context`, { token: ws.read }),
    );
    expect(ctx.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["q1", "q2 again"]);
    const tree = await json<{ leaves: { event_id: string; active: boolean }[] }>(
      await call("GET", `/api/sessions/${id}/tree`, { token: ws.read }),
    );
    expect(tree.leaves).toHaveLength(2);
    expect(tree.leaves.find((l) => l.event_id === oldLeaf.id)?.active).toBe(false);
    const br = await call("POST", `/api/sessions/${id}/branch`, { token: ws.member, body: { leaf_event_id: oldLeaf.id } });
    expect(br.status).toBe(200);
    const after = await json<{ messages: { role: string; content?: string }[] }>(
      await call("GET", `/api/sessions/${id}/context`, { token: ws.read }),
    );
    expect(after.messages.filter((m) => m.role === "user").map((m) => m.content)).toEqual(["q1", "q2"]);
  });

  it("POST /api/chat answers the one-shot response shape (docs/sessions.md) and reuses a session", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`reply ${i}`)));
    const res = await call("POST", "/api/chat", { token: ws.member, body: { message: "hello" } });
    expect(res.status).toBe(200);
    const body = await json<{ session_id: string; run_id: string }>(res);
    expect(body).toEqual({
      session_id: expect.any(String),
      run_id: expect.any(String),
      output_text: "reply 0",
      finish_reason: "stop",
      tool_iterations: 0,
      provider: "openai-compatible",
      model: expect.any(String),
      usage: { input_tokens: 10, output_tokens: 4, total_tokens: 14 },
    });
    const again = await json<{ session_id: string; output_text: string }>(
      await call("POST", "/api/chat", { token: ws.member, body: { message: "more", session_id: body.session_id } }),
    );
    expect(again).toMatchObject({ session_id: body.session_id, output_text: "reply 1" });
    const noModel = await newWorkspace();
    const failed = await call("POST", "/api/chat", { token: noModel.member, body: { message: "hello" } });
    expect(failed.status).toBe(422);
    expect((await json<ErrorBody>(failed)).error.code).toBe("no_model_configured");
  });

  it("the routes are in the OpenAPI document", async () => {
    const doc = await json<{ paths: Record<string, unknown> }>(await call("GET", "/api/openapi.json", { token: null }));
    expect(Object.keys(doc.paths)).toEqual(
      expect.arrayContaining([
        "/api/sessions",
        "/api/sessions/{id}",
        "/api/sessions/{id}/events",
        "/api/sessions/{id}/messages",
        "/api/sessions/{id}/stream",
        "/api/sessions/{id}/stream-ticket",
        "/api/sessions/{id}/rewind",
        "/api/sessions/{id}/branch",
        "/api/sessions/{id}/context",
        "/api/chat",
      ]),
    );
  });

  it("search finds visible text, never hidden run facts", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("the capybara answer")]));
    const id = await newSession(ws);
    await send(ws.member, id, "tell me about capybaras", { wait: true });
    await until(
      async () =>
        (await json<{ results: unknown[] }>(await call("GET", "/api/sessions/search?q=capybara", { token: ws.read }))).results.length === 2,
    );
    const found = await json<{ results: { session_id: string; snippet: string }[] }>(
      await call("GET", "/api/sessions/search?q=capybara", { token: ws.read }),
    );
    expect(found.results.map((r) => r.snippet).sort()).toEqual(["tell me about **capybaras**", "the **capybara** answer"]);
    const hidden = await json<{ results: unknown[] }>(await call("GET", "/api/sessions/search?q=Runtime%20context", { token: ws.read }));
    expect(hidden.results).toEqual([]);
  });
});

describe("session routes: live stream", () => {
  it("replays persistent events after last_seq over SSE with the bearer token, and 401 without", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const id = await newSession(ws);
    await send(ws.member, id, "hi", { wait: true });
    expect((await call("GET", `/api/sessions/${id}/stream`, { token: null })).status).toBe(401);
    const events = (await json<{ events: PersistentEvent[] }>(await call("GET", `/api/sessions/${id}/events`, { token: ws.read }))).events;
    const res = await call("GET", `/api/sessions/${id}/stream?last_seq=${events[0]!.seq}`, { token: ws.read });
    expect(res.status).toBe(200);
    const frames = await readSse(res, (f) => f.persistent && f.id === events.at(-1)!.id);
    expect(frames.map((f) => (f.persistent ? f.id : null))).toEqual(events.slice(1).map((e) => e.id));
  });

  it("a stream ticket opens one stream and only one; another workspace's session is 404", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const other = await newWorkspace();
    const id = await newSession(ws);
    await send(ws.member, id, "hi", { wait: true });
    const issued = await call("POST", `/api/sessions/${id}/stream-ticket`, { token: ws.read });
    expect(issued.status).toBe(201);
    const { ticket } = await json<{ ticket: string }>(issued);
    const first = await call("GET", `/api/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`, { token: null });
    expect(first.status).toBe(200);
    const frames = await readSse(first, (f) => f.persistent && f.type === "message" && f.message.role === "assistant");
    expect(frames.length).toBeGreaterThan(0);
    const second = await call("GET", `/api/sessions/${id}/stream?ticket=${encodeURIComponent(ticket)}`, { token: null });
    expect(second.status).toBe(401);
    const forged = await call(
      "GET",
      `/api/sessions/${id}/stream?ticket=${encodeURIComponent(ticket.replace(/.$/, (c) => (c === "a" ? "b" : "a")))}`,
      { token: null },
    );
    expect(forged.status).toBe(401);
    expect((await call("POST", `/api/sessions/${id}/stream-ticket`, { token: other.read })).status).toBe(404);
    expect((await call("GET", `/api/sessions/${id}/stream`, { token: other.read })).status).toBe(404);
    expect((await call("GET", `/api/sessions/${id}/stream?include_hidden=true`, { token: ws.read })).status).toBe(403);
  });
});

describe("session routes: bad input", () => {
  it("400 with the field path for malformed JSON, unknown fields, wrong types and bad path ids", async () => {
    const ws = await newWorkspace();
    const id = await newSession(ws);
    const malformed = await call("POST", `/api/sessions/${id}/messages`, {
      token: ws.member,
      rawBody: "{nope",
      headers: { "Content-Type": "application/json" },
    });
    expect(malformed.status).toBe(400);
    const unknown = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "x", colour: "red" } });
    expect(unknown.status).toBe(400);
    expect((await json<ErrorBody>(unknown)).error.details).toEqual([expect.objectContaining({ path: "colour" })]);
    const wrongType = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: 42 } });
    expect(wrongType.status).toBe(400);
    expect((await json<ErrorBody>(wrongType)).error.details).toEqual([expect.objectContaining({ path: "content" })]);
    const badSource = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "x", source: "shout" } });
    expect((await json<ErrorBody>(badSource)).error.details).toEqual([expect.objectContaining({ path: "source" })]);
    const badPath = await call("GET", `/api/sessions/${encodeURIComponent("bad id!")}`, { token: ws.read });
    expect(badPath.status).toBe(400);
    expect((await json<ErrorBody>(badPath)).error.message).toContain("path parameter");
    const badQuery = await call("GET", `/api/sessions/${id}/events?after_seq=-1`, { token: ws.read });
    expect(badQuery.status).toBe(400);
    const badRewind = await call("POST", `/api/sessions/${id}/rewind`, { token: ws.member, body: { target: "x" } });
    expect(badRewind.status).toBe(400);
  });

  it("413 for a message over the documented limit", async () => {
    const ws = await newWorkspace();
    const id = await newSession(ws);
    const res = await send(ws.member, id, "é".repeat(MAX_MESSAGE_BYTES / 2 + 1));
    expect(res.status).toBe(413);
    expect(await json<ErrorBody>(res)).toMatchObject({ error: { code: "payload_too_large", details: { limit_bytes: MAX_MESSAGE_BYTES } } });
    expect((await call("POST", "/api/chat", { token: ws.member, body: { message: "x".repeat(MAX_MESSAGE_BYTES + 1) } })).status).toBe(413);
    // The refused chat left nothing behind: no new, empty session.
    const listed = await json<{ sessions: { id: string }[] }>(await call("GET", "/api/sessions", { token: ws.read }));
    expect(listed.sessions.map((s) => s.id)).toEqual([id]);
  });

  it("404 for an unknown session and for another workspace's session, on every route", async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const id = await newSession(ws);
    expect((await call("GET", "/api/sessions/ses_doesnotexist", { token: ws.read })).status).toBe(404);
    const probes: [string, string, unknown?][] = [
      ["GET", `/api/sessions/${id}`],
      ["GET", `/api/sessions/${id}/events`],
      ["GET", `/api/sessions/${id}/runs`],
      ["GET", `/api/sessions/${id}/context`],
      ["GET", `/api/sessions/${id}/transcript`],
      ["GET", `/api/sessions/${id}/tree`],
      ["POST", `/api/sessions/${id}/messages`, { content: "hi" }],
      ["POST", `/api/sessions/${id}/rewind`, { target_event_id: "evt_x" }],
      ["POST", `/api/sessions/${id}/branch`, { leaf_event_id: "evt_x" }],
      ["POST", `/api/sessions/${id}/cancel`],
      ["POST", `/api/sessions/${id}/close`],
      ["POST", "/api/chat", { message: "hi", session_id: id }],
    ];
    for (const [method, path, body] of probes) {
      const res = await call(method, path, { token: other.admin, ...(body !== undefined ? { body } : {}) });
      expect([method, path, res.status]).toEqual([method, path, 404]);
    }
    const list = await json<{ sessions: unknown[] }>(await call("GET", "/api/sessions", { token: other.read }));
    expect(list.sessions).toEqual([]);
  });

  it("422 for rewind/branch to an event not in the session (or not a leaf)", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`a${i}`)));
    const a = await newSession(ws);
    const b = await newSession(ws);
    await send(ws.member, a, "in a", { wait: true });
    await send(ws.member, b, "in b", { wait: true });
    const bEvents = (await json<{ events: PersistentEvent[] }>(await call("GET", `/api/sessions/${b}/events`, { token: ws.read }))).events;
    const res = await call("POST", `/api/sessions/${a}/rewind`, { token: ws.member, body: { target_event_id: bEvents[0]!.id } });
    expect(res.status).toBe(422);
    expect((await json<ErrorBody>(res)).error.code).toBe("unprocessable");
    const aEvents = (await json<{ events: PersistentEvent[] }>(await call("GET", `/api/sessions/${a}/events`, { token: ws.read }))).events;
    expect((await call("POST", `/api/sessions/${a}/branch`, { token: ws.member, body: { leaf_event_id: aEvents[0]!.id } })).status).toBe(
      422,
    );
    const hiddenId = (await doEvents(a, ws.id)).find((e) => e.type === "run_started")!.id;
    expect((await call("POST", `/api/sessions/${a}/rewind`, { token: ws.member, body: { target_event_id: hiddenId } })).status).toBe(422);
  });

  it("409 when sending to a closed session; read scope cannot send (403)", async () => {
    const ws = await newWorkspace();
    const id = await newSession(ws);
    expect((await send(ws.read, id, "hi")).status).toBe(403);
    const closed = await call("POST", `/api/sessions/${id}/close`, { token: ws.member });
    expect(closed.status).toBe(200);
    expect(await json(closed)).toMatchObject({ status: "closed" });
    const res = await send(ws.member, id, "hi");
    expect(res.status).toBe(409);
    expect((await json<ErrorBody>(res)).error.code).toBe("session_closed");
    // Navigation writes to the log too: refused the same way.
    // Close goes through stop (docs/sessions.md, "Stop, close and retry"): stopping, stopped, then closed.
    const closeEvent = (await doEvents(id, ws.id)).at(-1);
    expect(closeEvent).toMatchObject({ type: "session_info", changes: { status: "closed" } });
    for (const [path, body] of [
      ["rewind", { target_event_id: closeEvent!.id }],
      ["branch", { leaf_event_id: closeEvent!.id }],
    ] as const) {
      const nav = await call("POST", `/api/sessions/${id}/${path}`, { token: ws.member, body });
      expect([path, nav.status]).toEqual([path, 409]);
      expect((await json<ErrorBody>(nav)).error.code).toBe("session_closed");
    }
    const cancel = await call("POST", `/api/sessions/${id}/cancel`, { token: ws.member });
    expect(await json(cancel)).toEqual({ run_id: null, status: null });
  });
});
