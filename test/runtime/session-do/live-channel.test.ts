// The two-way session WebSocket (docs/sessions.md, "Two-way live channel"): client frames, channel_inject, error frames, scopes.
import { describe, expect, it } from "vitest";
import { env, exports } from "cloudflare:workers";
import { createSession, waitForRun } from "../../../src/runtime/session/service.ts";
import type { ChannelInjectEvent, MessageEvent, PersistentEvent, ToolApprovalRequestedEvent } from "../../../src/runtime/session/events.ts";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, deferred, doEvents, scriptedWorkspace, text, toolCalls, until } from "../../support/sessions.ts";
import { DEFAULT_LIMITS } from "../../../src/storage/limits.ts";
import { TEST_RATE_LIMITS } from "../../support/rate-limits.ts";

type Frame = Record<string, unknown> & { type: string };

/** A WebSocket client on the session stream (bearer token or ticket), keeping every frame it gets. */
async function openSocket(sessionId: string, auth: { token?: string; ticket?: string }, query = "") {
  const params = new URLSearchParams(query);
  if (auth.ticket) params.set("ticket", auth.ticket);
  const res = await exports.default.fetch(
    new Request(`https://beaver.test/api/sessions/${sessionId}/stream?${params}`, {
      headers: { Upgrade: "websocket", ...(auth.token ? { Authorization: `Bearer ${auth.token}` } : {}) },
    }),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  const frames: Frame[] = [];
  ws.addEventListener("message", (e) => frames.push(JSON.parse(String(e.data)) as Frame));
  ws.accept();
  const replies = () => frames.filter((f) => f.type === "ack" || f.type === "error");
  /** Sends one frame and waits for its ack or error. */
  const send = async (data: string | ArrayBuffer): Promise<Frame> => {
    const before = replies().length;
    ws.send(data);
    await until(() => replies().length > before, 5_000, "reply frame");
    return replies()[before]!;
  };
  return { ws, frames, send };
}

async function ticketFor(sessionId: string, token: string): Promise<string> {
  const res = await call("POST", `/api/sessions/${sessionId}/stream-ticket`, { token });
  expect(res.status).toBe(201);
  return (await json<{ ticket: string }>(res)).ticket;
}

async function configure(ws: TestWorkspace, extra: Record<string, unknown>): Promise<void> {
  const current = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
  const res = await call("PUT", "/api/config", { token: ws.admin, body: { ...current, ...extra } });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
}

const userMessages = (events: PersistentEvent[]) =>
  events
    .filter((e): e is MessageEvent => e.type === "message" && e.message.role === "user")
    .map((e) => e.message as Extract<MessageEvent["message"], { role: "user" }>);

describe("two-way WebSocket", () => {
  it("answers bad frames with error frames and keeps the socket open", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("hello back")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const socket = await openSocket(session.id, { token: ws.member });

    expect(await socket.send("not json")).toMatchObject({ type: "error", error: { code: "malformed_json" } });
    expect(await socket.send(JSON.stringify({ type: "shout", content: "x" }))).toMatchObject({
      type: "error",
      error: { code: "validation_failed" },
    });
    expect(await socket.send(JSON.stringify({ type: "message", content: "" }))).toMatchObject({
      type: "error",
      error: { code: "validation_failed" },
    });
    expect(await socket.send(JSON.stringify({ type: "message", content: "x", mode: "later" }))).toMatchObject({
      error: { code: "validation_failed" },
    });
    expect(await socket.send(JSON.stringify({ type: "approve" }))).toMatchObject({ error: { code: "validation_failed" } });
    expect(await socket.send(JSON.stringify({ type: "message", content: "x", extra: 1 }))).toMatchObject({
      error: { code: "validation_failed" },
    });
    const big = "x".repeat(DEFAULT_LIMITS.message_bytes + 1);
    expect(await socket.send(JSON.stringify({ type: "message", content: big }))).toMatchObject({ error: { code: "payload_too_large" } });
    expect(await socket.send(JSON.stringify({ type: "message", content: big + big }))).toMatchObject({
      error: { code: "payload_too_large" },
    });
    expect(await socket.send(new ArrayBuffer(2))).toMatchObject({ error: { code: "unsupported_media_type" } });
    expect(await socket.send(JSON.stringify({ type: "approve", approval_id: "apr_nope" }))).toMatchObject({ error: { code: "not_found" } });

    // Still open: a valid message is taken and runs.
    const ack = await socket.send(JSON.stringify({ type: "message", content: "hi there" }));
    expect(ack).toMatchObject({ type: "ack", frame: "message", status: "queued" });
    expect(await waitForRun(env, session.id, ack.run_id as string, 10_000)).toMatchObject({
      status: "completed",
      output_text: "hello back",
    });
    socket.ws.close();
  });

  it("messages count against the token's rate limit like POST …/messages", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await createSession(env, { workspaceId: ws.id });
    expect((await call("POST", `/api/sessions/${session.id}/close`, { token: ws.member })).status).toBe(200);
    const socket = await openSocket(session.id, { ticket: await ticketFor(session.id, ws.member) });
    // The session is closed, so each message that passes the limit is refused as such, and none starts a run.
    let reply: Frame | undefined;
    for (let i = 0; i < 2 * TEST_RATE_LIMITS.token; i++) {
      reply = await socket.send(JSON.stringify({ type: "message", content: `m${i}` }));
      if ((reply.error as { code: string }).code === "rate_limited") break;
      expect(reply).toMatchObject({ type: "error", error: { code: "session_closed" } });
    }
    expect(reply).toMatchObject({ type: "error", error: { code: "rate_limited", details: { scope: "token" } } });
    // Other frames are not rate limited.
    expect(await socket.send(JSON.stringify({ type: "cancel" }))).toMatchObject({ type: "ack", frame: "cancel" });
    socket.ws.close();
  });

  it("read tokens and tickets issued to them may only read", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const byToken = await openSocket(session.id, { token: ws.read });
    expect(await byToken.send(JSON.stringify({ type: "message", content: "let me in" }))).toMatchObject({
      type: "error",
      error: { code: "forbidden" },
    });
    expect(await byToken.send(JSON.stringify({ type: "cancel" }))).toMatchObject({ error: { code: "forbidden" } });
    const byTicket = await openSocket(session.id, { ticket: await ticketFor(session.id, ws.read) });
    expect(await byTicket.send(JSON.stringify({ type: "message", content: "let me in" }))).toMatchObject({ error: { code: "forbidden" } });
    const member = await openSocket(session.id, { ticket: await ticketFor(session.id, ws.member) });
    expect(await member.send(JSON.stringify({ type: "cancel" }))).toMatchObject({ type: "ack", frame: "cancel", run: null });
    expect(userMessages(await doEvents(session.id, ws.id))).toEqual([]);
    for (const s of [byToken, byTicket, member]) s.ws.close();
  });

  it("drives a conversation — send, steer, follow-up, cancel, approve — recording each message's channel and device", async () => {
    const gate = deferred();
    const main = new ScriptedModel((i) => {
      if (i === 0) return { parts: text("first answer"), gate: gate.promise };
      if (i === 1) return { hang: true };
      // Messages over the socket run with the default tool set: its `echo` needs approval here.
      if (i === 2) return toolCalls({ id: "d1", name: "echo", args: { text: "deployed v3" } });
      return text(`answer ${i}`);
    });
    const ws = await scriptedWorkspace(main);
    await configure(ws, { tool_policy: [{ match: "echo", action: "require_approval" }] });
    const session = await createSession(env, { workspaceId: ws.id });
    const socket = await openSocket(session.id, { ticket: await ticketFor(session.id, ws.member) }, "device_id=laptop-1&client_id=web");

    // Send, and steer while the answer is held back.
    const first = await socket.send(JSON.stringify({ type: "message", content: "hello", client_id: "m-1" }));
    expect(first).toMatchObject({ type: "ack", frame: "message", steered: false });
    await until(() => main.calls.length === 1, 5_000, "first model call");
    const steer = await socket.send(JSON.stringify({ type: "message", content: "and be brief", mode: "steer", client_id: "m-2" }));
    expect(steer).toMatchObject({ type: "ack", steered: true, run_id: first.run_id });
    gate.resolve();
    await until(() => main.calls.length === 2, 5_000, "the steer's model step");

    // Cancel the step that hangs.
    expect(await socket.send(JSON.stringify({ type: "cancel" }))).toMatchObject({
      type: "ack",
      frame: "cancel",
      run: { run_id: first.run_id },
    });
    expect(await waitForRun(env, session.id, first.run_id as string, 10_000)).toMatchObject({ status: "cancelled" });

    // A follow-up whose tool call needs approval, approved over the socket.
    const follow = await socket.send(JSON.stringify({ type: "message", content: "now deploy", mode: "follow_up" }));
    expect(follow).toMatchObject({ type: "ack", steered: false });
    await until(() => socket.frames.some((f) => f.type === "tool_approval_requested"), 10_000, "approval request frame");
    const request = socket.frames.find((f) => f.type === "tool_approval_requested") as unknown as ToolApprovalRequestedEvent;
    expect(request).toMatchObject({ tool_name: "echo", args: { text: "deployed v3" } });
    expect(await socket.send(JSON.stringify({ type: "approve", approval_id: request.approval_id }))).toMatchObject({
      type: "ack",
      frame: "approve",
      approval_id: request.approval_id,
    });
    expect(await socket.send(JSON.stringify({ type: "deny", approval_id: request.approval_id }))).toMatchObject({
      error: { code: "conflict" },
    });
    expect(await waitForRun(env, session.id, follow.run_id as string, 10_000)).toMatchObject({
      status: "completed",
      output_text: "answer 3",
    });
    expect(main.promptText(3)).toContain("deployed v3");
    await until(() => socket.frames.some((f) => f.type === "runtime_end" && f.run_id === follow.run_id), 5_000, "live frames");

    const events = await doEvents(session.id, ws.id);
    expect(userMessages(events).map((m) => [m.content, m.meta?.source])).toEqual([
      ["hello", undefined],
      ["and be brief", "steer"],
      ["now deploy", "followUp"],
    ]);
    // Each message is preceded by where it came from.
    const injects = events.filter((e): e is ChannelInjectEvent => e.type === "channel_inject");
    expect(injects.map((e) => [e.channel, e.device_id, e.external_id])).toEqual([
      ["websocket", "laptop-1", "m-1"],
      ["websocket", "laptop-1", "m-2"],
      ["websocket", "laptop-1", expect.stringMatching(/^msg_/)],
    ]);
    for (const inject of injects) {
      const next = events.find((e) => e.type !== "channel_inject" && "parent_id" in e && e.parent_id === inject.id);
      expect(next).toMatchObject({ type: "message", message: { role: "user" } });
    }
    expect(events.find((e) => e.type === "tool_approval_decided")).toMatchObject({ decision: "approve", client_id: "web" });
    // The model saw the steer, not the channel facts.
    expect(main.promptText(1)).toContain("and be brief");
    expect(main.promptText(1)).not.toContain("laptop-1");
    socket.ws.close();
  });
});
