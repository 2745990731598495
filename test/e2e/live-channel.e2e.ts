/**
 * The two-way live channel end to end (docs/sessions.md, "Two-way live channel"): a `ws` client on
 * the real `wrangler dev` drives a whole conversation — send, steer, cancel, a tool approval — over
 * the session WebSocket alone; HTTP only sets the workspace up and fetches the stream ticket.
 */
import { describe, expect, inject, it } from "vitest";
import WebSocket from "ws";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

type Frame = Record<string, unknown> & { type: string; run_id?: string | null };

/** Waits until `frames` holds one matching `pred` (a frame that never comes fails the test by its timeout). */
async function frameWhere(frames: Frame[], pred: (f: Frame) => boolean): Promise<Frame> {
  for (;;) {
    const found = frames.find(pred);
    if (found) return found;
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("two-way WebSocket on wrangler dev", () => {
  it("drives a conversation without HTTP: send, steer, cancel, approve", async () => {
    const modelId = `ws-e2e-${Math.random().toString(36).slice(2, 8)}`;
    const ws = await newWorkspace();
    const config = await api("PUT", "/api/config", {
      token: ws.token,
      body: {
        model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` },
        tool_policy: [{ match: "echo", action: "require_approval" }],
      },
    });
    expect(config.status).toBe(200);
    await models.script(modelId, [
      { text: "hello to you", delay_ms: 1_500 }, // held back long enough for the steer to join the run
      { text: "brief it is" },
      { text: "this takes forever", delay_ms: 30_000 }, // cancelled
      { tool_calls: [{ name: "echo", arguments: { text: "shipped v2" } }] },
      { text: "deployed" },
    ]);
    const created = await api("POST", "/api/sessions", { token: ws.token, body: {} });
    const sessionId = ((await created.json()) as { id: string }).id;
    const ticket = await api("POST", `/api/sessions/${sessionId}/stream-ticket`, { token: ws.token });
    expect(ticket.status).toBe(201);
    const { ticket: t } = (await ticket.json()) as { ticket: string };

    const url = `${baseUrl().replace(/^http/, "ws")}/api/sessions/${sessionId}/stream?ticket=${encodeURIComponent(t)}&device_id=e2e-phone`;
    const socket = new WebSocket(url);
    const frames: Frame[] = [];
    socket.on("message", (data) => frames.push(JSON.parse(String(data)) as Frame));
    await new Promise<void>((resolve, reject) => {
      socket.once("open", () => resolve());
      socket.once("error", reject);
    });
    const replies = () => frames.filter((f) => f.type === "ack" || f.type === "error");
    const send = async (frame: unknown): Promise<Frame> => {
      const before = replies().length;
      socket.send(typeof frame === "string" ? frame : JSON.stringify(frame));
      while (replies().length <= before) await new Promise((r) => setTimeout(r, 20));
      return replies()[before]!;
    };

    // A bad frame is answered, and the socket stays usable.
    expect(await send("{nope")).toMatchObject({ type: "error", error: { code: "malformed_json" } });

    // Send, then steer while the first answer is held back.
    const first = await send({ type: "message", content: "hello", client_id: "phone-1" });
    expect(first).toMatchObject({ type: "ack", frame: "message", steered: false });
    await frameWhere(frames, (f) => f.type === "turn_start" && f.run_id === first.run_id);
    expect(await send({ type: "message", content: "keep it brief", mode: "steer" })).toMatchObject({
      type: "ack",
      steered: true,
      run_id: first.run_id,
    });
    const firstEnd = await frameWhere(frames, (f) => f.type === "runtime_end" && f.run_id === first.run_id);
    expect(firstEnd).toMatchObject({ reason: "completed" });

    // A second message, cancelled while its model step is in flight.
    const second = await send({ type: "message", content: "write me a novel" });
    await frameWhere(frames, (f) => f.type === "turn_start" && f.run_id === second.run_id);
    // Cancel only once the model server holds the request: a cancel that lands before it is sent would
    // leave the slow scripted step unconsumed for the next run (a race seen on a loaded CI machine).
    while ((await models.requests(modelId)).length < 3) await new Promise((r) => setTimeout(r, 20));
    expect(await send({ type: "cancel" })).toMatchObject({ type: "ack", frame: "cancel", run: { run_id: second.run_id } });
    expect(await frameWhere(frames, (f) => f.type === "runtime_end" && f.run_id === second.run_id)).toMatchObject({ reason: "cancelled" });

    // A tool call that needs approval, approved over the socket.
    const third = await send({ type: "message", content: "deploy it", mode: "follow_up" });
    const request = await frameWhere(frames, (f) => f.type === "tool_approval_requested" && f.run_id === third.run_id);
    expect(request).toMatchObject({ tool_name: "echo", args: { text: "shipped v2" } });
    expect(await send({ type: "approve", approval_id: request.approval_id })).toMatchObject({ type: "ack", frame: "approve" });
    expect(await frameWhere(frames, (f) => f.type === "runtime_end" && f.run_id === third.run_id)).toMatchObject({ reason: "completed" });

    const assistantTexts = frames
      .filter((f) => f.type === "message" && (f.message as { role: string }).role === "assistant")
      .map((f) => (f.message as { text: string }).text);
    expect(assistantTexts).toEqual(["hello to you", "brief it is", "", "deployed"]);
    const toolResult = frames.find((f) => f.type === "message" && (f.message as { role: string }).role === "tool_result");
    expect(toolResult).toMatchObject({ message: { content: "shipped v2", is_error: false } });
    const injects = frames.filter((f) => f.type === "channel_inject");
    expect(injects.map((f) => [f.channel, f.device_id])).toEqual([
      ["websocket", "e2e-phone"],
      ["websocket", "e2e-phone"],
      ["websocket", "e2e-phone"],
      ["websocket", "e2e-phone"],
    ]);
    expect(injects[0]).toMatchObject({ external_id: "phone-1" });
    // The steer reached the model inside the conversation.
    const requests = await models.requests(modelId);
    expect(JSON.stringify(requests[1]!.body.messages)).toContain("keep it brief");
    socket.close();
  });
});
