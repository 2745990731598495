/**
 * `POST /api/ui/chat` and `GET /api/ui/chat/:id/stream` read by the `ai` package itself
 * (docs/ui-stream.md): DefaultChatTransport (which validates every chunk against the SDK's UI chunk
 * schema) and readUIMessageStream, against the Worker with a scripted model.
 */
import { describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { DefaultChatTransport, readUIMessageStream, type UIMessage, type UIMessageChunk } from "ai";
import type { BeaverUIMetadata } from "../../../src/runtime/session/ui-chunks.ts";
import { call } from "../../support/api.ts";
import { ScriptedModel, deferred, scriptedWorkspace, text, toolCalls, until, heldHelloWorld } from "../../support/sessions.ts";
import { randomToken } from "../../../src/kernel/ids.ts";

type BeaverMessage = UIMessage<BeaverUIMetadata>;

function transport(token: string) {
  return new DefaultChatTransport<BeaverMessage>({
    api: "https://beaver.test/api/ui/chat",
    headers: { Authorization: `Bearer ${token}` },
    fetch: (input, init) => exports.default.fetch(new Request(input as string, init)),
  });
}

const userMessage = (content: string): BeaverMessage => ({
  id: `msg_${randomToken(8)}`,
  role: "user",
  parts: [{ type: "text", text: content }],
});

async function lastMessage(stream: ReadableStream<UIMessageChunk>): Promise<BeaverMessage> {
  let last: BeaverMessage | undefined;
  for await (const m of readUIMessageStream<BeaverMessage>({ stream, terminateOnError: true })) last = m;
  if (!last) throw new Error("no message");
  return last;
}

describe("AI SDK UI chat", () => {
  it("streams a run: a tool call with its arguments and result, the answer, finish with usage and model; history stays in the session", async () => {
    const main = new ScriptedModel((i) =>
      i % 2 === 0 ? toolCalls({ id: `call_${i}`, name: "echo", args: { text: `ping ${i}` } }) : text("All ", "done."),
    );
    const ws = await scriptedWorkspace(main);
    const chatId = `ses_ui_${randomToken(8)}`;
    const first = userMessage("echo something");
    const stream = await transport(ws.member).sendMessages({
      chatId,
      messages: [first],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const message = await lastMessage(stream);
    const tool = message.parts.find((p) => p.type === "dynamic-tool");
    expect(tool).toMatchObject({
      toolName: "echo",
      toolCallId: "call_0",
      state: "output-available",
      input: { text: "ping 0" },
      output: "ping 0",
    });
    expect(message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["All done."]);
    expect(message.metadata).toMatchObject({ session_id: chatId, status: "completed", model: expect.any(String) });
    expect(message.metadata?.usage?.total_tokens).toBe(28);

    // The session exists in the caller's workspace and holds the run; a second turn sends only its last message.
    const session = await call("GET", `/api/sessions/${chatId}`, { token: ws.read });
    expect(session.status).toBe(200);
    const second = await lastMessage(
      await transport(ws.member).sendMessages({
        chatId,
        messages: [first, message, userMessage("again")],
        trigger: "submit-message",
        messageId: undefined,
        abortSignal: undefined,
      }),
    );
    expect(second.parts.some((p) => p.type === "dynamic-tool" && p.toolCallId === "call_2")).toBe(true);
    expect(JSON.stringify(main.calls[2]?.prompt)).toContain("echo something"); // history came from the session, not the request
    // No run is active any more: resuming answers 204, which the transport reads as "nothing to resume".
    expect(await transport(ws.read).reconnectToStream({ chatId })).toBeNull();
  });

  it("a client that disconnects mid-answer resumes the run from its start and reads it to the end", async () => {
    const gate = deferred();
    const main = new ScriptedModel([heldHelloWorld(gate.promise)]);
    const ws = await scriptedWorkspace(main);
    const chatId = `ses_ui_${randomToken(8)}`;
    const stream = await transport(ws.member).sendMessages({
      chatId,
      messages: [userMessage("greet")],
      trigger: "submit-message",
      messageId: undefined,
      abortSignal: undefined,
    });
    const reader = stream.getReader();
    const seen: UIMessageChunk[] = [];
    while (!seen.some((c) => c.type === "text-delta")) {
      const { value, done } = await reader.read();
      if (done) throw new Error("ended early");
      seen.push(value);
    }
    await reader.cancel(); // the page reloads
    await until(
      async () =>
        (await (await call("GET", `/api/sessions/${chatId}`, { token: ws.read })).json<{ active_run_id: string | null }>())
          .active_run_id !== null,
    );

    const resumed = await transport(ws.read).reconnectToStream({ chatId });
    expect(resumed).not.toBeNull();
    gate.resolve();
    const message = await lastMessage(resumed!);
    expect(message.parts.filter((p) => p.type === "text").map((p) => (p as { text: string }).text)).toEqual(["Hello world"]);
    expect(message.metadata).toMatchObject({ session_id: chatId, status: "completed" });
  });

  it("refuses what it cannot submit, and another workspace's chat id answers 404", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const other = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const chatId = `ses_ui_${randomToken(8)}`;
    const post = (token: string, body: unknown) => call("POST", "/api/ui/chat", { token, body });
    const ok = await post(ws.member, { id: chatId, messages: [userMessage("hi")], trigger: "submit-message" });
    expect(ok.status).toBe(200);
    expect(ok.headers.get("x-vercel-ai-ui-message-stream")).toBe("v1");
    await ok.text();

    expect((await post(other.member, { id: chatId, messages: [userMessage("hi")] })).status).toBe(404);
    expect((await call("GET", `/api/ui/chat/${chatId}/stream`, { token: other.read })).status).toBe(404);
    expect((await post(ws.read, { id: chatId, messages: [userMessage("hi")] })).status).toBe(403);
    const notUser = await post(ws.member, { id: chatId, messages: [{ id: "a", role: "assistant", parts: [{ type: "text", text: "x" }] }] });
    expect(notUser.status).toBe(400);
    const regenerate = await post(ws.member, { id: chatId, messages: [userMessage("hi")], trigger: "regenerate-message" });
    expect(regenerate.status).toBe(422);
    expect((await post(ws.member, { id: "bad id!", messages: [userMessage("hi")] })).status).toBe(400);
  });
});
