import { describe, expect, it } from "vitest";
import { env, exports } from "cloudflare:workers";
import { evictDurableObject } from "cloudflare:test";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { StreamFrame } from "../../../src/runtime/session/events.ts";
import { ADMIN } from "../../support/api.ts";
import {
  ScriptedModel,
  deferred,
  doEvents,
  readSse,
  scriptedWorkspace,
  stub,
  text,
  until,
  heldHelloWorld,
} from "../../support/sessions.ts";

/** A WebSocket client on the session stream, collecting frames. */
async function openSocket(sessionId: string, token: string, lastSeq = 0) {
  const res = await exports.default.fetch(
    new Request(`https://beaver.test/api/sessions/${sessionId}/stream?last_seq=${lastSeq}`, {
      headers: { Upgrade: "websocket", Authorization: `Bearer ${token}` },
    }),
  );
  expect(res.status).toBe(101);
  const ws = res.webSocket!;
  const frames: StreamFrame[] = [];
  ws.addEventListener("message", (e) => {
    if (typeof e.data === "string" && e.data.startsWith('{"persistent"')) frames.push(JSON.parse(e.data) as StreamFrame);
  });
  ws.accept();
  return { ws, frames };
}

const persistentIds = (frames: StreamFrame[]) => frames.filter((f) => f.persistent).map((f) => (f as { id: string }).id);

describe("live clients", () => {
  it("two WebSocket clients see the same frames in the same order; hibernated sockets keep receiving after an eviction", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`answer ${i}`)));
    const session = await createSession(env, { workspaceId: ws.id });
    const first = await submitRun(env, session.id, { workspace_id: ws.id, content: "one" });
    await waitForRun(env, session.id, first.run_id, 10_000);

    const a = await openSocket(session.id, ws.read);
    const b = await openSocket(session.id, ws.admin);
    await until(() => persistentIds(a.frames).length === 2 && persistentIds(b.frames).length === 2, 5_000, "replay");

    await evictDurableObject(stub(session.id), { webSockets: "hibernate" });

    const second = await submitRun(env, session.id, { workspace_id: ws.id, content: "two" });
    await waitForRun(env, session.id, second.run_id, 10_000);
    await until(
      () => a.frames.some((f) => f.type === "runtime_end") && b.frames.some((f) => f.type === "runtime_end"),
      5_000,
      "live frames",
    );

    const visible = (await doEvents(session.id, ws.id)).filter(
      (e) => !["run_started", "system_prompt_snapshotted", "skill_activation_snapshotted", "run_completed"].includes(e.type),
    );
    expect(persistentIds(a.frames)).toEqual(visible.map((e) => e.id));
    expect(b.frames.map((f) => f.seq)).toEqual(a.frames.map((f) => f.seq));
    a.ws.close();
    b.ws.close();
  });

  it("a client resuming mid-message with its last seq gets the text so far, then the rest", async () => {
    const gate = deferred();
    const main = new ScriptedModel([heldHelloWorld(gate.promise)]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "greet" });
    await until(() => main.calls.length === 1, 5_000, "model call");
    const user = (await doEvents(session.id, ws.id)).find((e) => e.type === "message")!;

    const res = await exports.default.fetch(
      new Request(`https://beaver.test/api/sessions/${session.id}/stream`, {
        headers: { Authorization: `Bearer ${ws.read}`, "Last-Event-ID": String(user.seq) },
      }),
    );
    const reading = readSse(res, (f) => f.type === "runtime_end");
    await new Promise((r) => setTimeout(r, 50));
    gate.resolve();
    const frames = await reading;
    const start = frames.find((f) => f.type === "message_start") as { event_id: string } | undefined;
    expect(start).toBeDefined();
    const deltas = frames.filter((f) => f.type === "text_delta").map((f) => (f as { delta: string }).delta);
    expect(deltas.join("")).toBe("Hello world");
    expect(deltas[0]).toBe("Hello"); // the text so far, in one frame
    const assistant = frames.find((f) => f.persistent && f.type === "message" && f.message.role === "assistant") as
      { id: string } | undefined;
    expect(assistant?.id).toBe(start!.event_id);
    expect(frames.some((f) => f.persistent && f.type === "message" && f.message.role === "user")).toBe(false);
    expect((await waitForRun(env, session.id, run_id, 5_000)).output_text).toBe("Hello world");
  });

  it("admins may watch hidden run facts live; the bootstrap admin token works on the stream", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const res = await exports.default.fetch(
      new Request(`https://beaver.test/api/sessions/${session.id}/stream?include_hidden=true`, {
        headers: { Authorization: `Bearer ${ws.admin}` },
      }),
    );
    expect(res.status).toBe(200);
    const reading = readSse(res, (f) => f.type === "run_completed");
    await submitRun(env, session.id, { workspace_id: ws.id, content: "hi" });
    const frames = await reading;
    expect(frames.map((f) => f.type)).toEqual(expect.arrayContaining(["run_started", "system_prompt_snapshotted", "run_completed"]));
    // The bootstrap token belongs to workspace `default`: this session is not there.
    const other = await exports.default.fetch(
      new Request(`https://beaver.test/api/sessions/${session.id}/stream`, { headers: { Authorization: `Bearer ${ADMIN}` } }),
    );
    expect(other.status).toBe(404);
  });
});
