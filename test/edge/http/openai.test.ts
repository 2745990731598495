/**
 * The OpenAI-compatible API (docs/openai-api.md) inside workerd with real sessions and a scripted
 * model: how chat messages and response inputs map onto a session and its runs, the wire formats
 * (completion, chunks with the usage chunk, response events), `previous_response_id`, the models a
 * workspace accepts, scopes, and errors in OpenAI's shape.
 */
import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";
import { ScriptedModel, doEvents, scriptedWorkspace, text, toolCalls, type ScriptedWorkspace } from "../../support/sessions.ts";
import { parseResponseId, responseId } from "../../../src/edge/http/openai/response-id.ts";

type OpenAiErr = { error: { message: string; type: string; code: string; param: string | null } };
type Completion = {
  id: string;
  object: string;
  model: string;
  choices: { message: { role: string; content: string }; finish_reason: string }[];
  usage: { prompt_tokens: number; completion_tokens: number; total_tokens: number };
  beaver: { session_id: string; run_id: string };
};
type Chunk = { object: string; choices: { delta: { content?: string; role?: string }; finish_reason: string | null }[]; usage?: unknown };
type ResponseObj = {
  id: string;
  object: string;
  status: string;
  previous_response_id: string | null;
  output: { type: string; role: string; content: { type: string; text: string }[] }[];
  usage: { input_tokens: number; output_tokens: number; total_tokens: number };
  beaver: { session_id: string; run_id: string };
};

/** The JSON of each `data:` line of an SSE body (`[DONE]` as the string), with the `event:` name when there is one. */
async function sse(res: Response): Promise<{ event: string | null; data: unknown }[]> {
  const out: { event: string | null; data: unknown }[] = [];
  for (const block of (await res.text()).split("\n\n")) {
    const lines = block.split("\n");
    const data = lines.find((l) => l.startsWith("data: "))?.slice(6);
    if (data === undefined) continue;
    out.push({ event: lines.find((l) => l.startsWith("event: "))?.slice(7) ?? null, data: data === "[DONE]" ? data : JSON.parse(data) });
  }
  return out;
}

async function sessionCount(token: string): Promise<number> {
  return (await json<{ sessions: unknown[] }>(await call("GET", "/api/sessions", { token }))).sessions.length;
}

function chatCall(ws: ScriptedWorkspace, body: Record<string, unknown>, headers: Record<string, string> = {}) {
  return call("POST", "/v1/chat/completions", { token: ws.member, body: { model: "beaver", ...body }, headers });
}

describe("POST /v1/chat/completions", () => {
  it("runs the last user message in a new session, with the system message and the earlier turns as this run's instructions", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("Paris", " it is.")]));
    const res = await chatCall(ws, {
      messages: [
        { role: "system", content: "Answer in one line." },
        { role: "user", content: "I am planning a trip." },
        { role: "assistant", content: "Where to?" },
        { role: "user", content: [{ type: "text", text: "Capital of France?" }] },
      ],
    });
    expect(res.status).toBe(200);
    const body = await json<Completion>(res);
    expect(body.object).toBe("chat.completion");
    expect(body.model).toBe("beaver");
    expect(body.choices[0]!.message).toMatchObject({ role: "assistant", content: "Paris it is." });
    expect(body.choices[0]!.finish_reason).toBe("stop");
    expect(body.usage).toMatchObject({ prompt_tokens: 10, completion_tokens: 4, total_tokens: 14 });
    const sessionId = res.headers.get("X-Beaver-Session-Id")!;
    expect(body.beaver.session_id).toBe(sessionId);
    expect(body.id).toBe(`chatcmpl-${body.beaver.run_id}`);

    // The session stores the user's message and the answer, not the resent turns or the system message.
    const stored = (await doEvents(sessionId, ws.id)).filter((e) => e.type === "message").map((e) => e.type === "message" && e.message);
    expect(stored.map((m) => m && m.role)).toEqual(["user", "assistant"]);
    expect(stored[0]).toMatchObject({ content: "Capital of France?" });
    // The model saw the instructions and the earlier turns in its system prompt.
    const prompt = ws.main.promptText(0);
    expect(prompt).toContain("Answer in one line.");
    expect(prompt).toContain("I am planning a trip.");
    expect(prompt).toContain("Where to?");
    const session = await json<{ metadata: Record<string, unknown> }>(await call("GET", `/api/sessions/${sessionId}`, { token: ws.read }));
    expect(session.metadata).toMatchObject({ source: "openai", api: "chat.completions" });
  });

  it("streams chunks of every assistant message of the run (tool calls run on the server), then finish, usage and [DONE]", async () => {
    const ws = await scriptedWorkspace(
      new ScriptedModel([
        [
          { type: "text-start", id: "a" },
          { type: "text-delta", id: "a", delta: "Checking." },
          { type: "text-end", id: "a" },
          ...toolCalls({ id: "c1", name: "current_time", args: {} }),
        ],
        text("It is ", "late."),
      ]),
    );
    const res = await chatCall(ws, {
      messages: [{ role: "user", content: "What time is it?" }],
      stream: true,
      stream_options: { include_usage: true },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    const frames = await sse(res);
    expect(frames.at(-1)!.data).toBe("[DONE]");
    const chunks = frames.slice(0, -1).map((f) => f.data as Chunk);
    expect(chunks.every((c) => c.object === "chat.completion.chunk")).toBe(true);
    expect(chunks[0]!.choices[0]!.delta.role).toBe("assistant");
    const content = chunks.map((c) => c.choices[0]?.delta.content ?? "").join("");
    expect(content).toBe("Checking.\n\nIt is late.");
    const finish = chunks.at(-2)!;
    expect(finish.choices[0]!.finish_reason).toBe("stop");
    expect(finish.usage).toBeNull();
    const usage = chunks.at(-1)!;
    expect(usage.choices).toEqual([]);
    expect(usage.usage).toMatchObject({ prompt_tokens: 20, completion_tokens: 8, total_tokens: 28 });
    // The server ran Beaver's own tool: the model's second call saw its result.
    expect(ws.main.calls).toHaveLength(2);
    expect(ws.main.promptText(1)).toContain("current_time");
  });

  it("continues the session X-Beaver-Session-Id names: its own log is the history, the resent turns are not repeated", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("first answer"), text("second answer")]));
    const first = await chatCall(ws, { messages: [{ role: "user", content: "first question" }] });
    const sessionId = first.headers.get("X-Beaver-Session-Id")!;
    const second = await chatCall(
      ws,
      {
        messages: [
          { role: "user", content: "first question" },
          { role: "assistant", content: "first answer" },
          { role: "user", content: "second question" },
        ],
      },
      { "X-Beaver-Session-Id": sessionId },
    );
    expect(second.status).toBe(200);
    expect(second.headers.get("X-Beaver-Session-Id")).toBe(sessionId);
    expect((await json<Completion>(second)).choices[0]!.message.content).toBe("second answer");
    expect(await sessionCount(ws.read)).toBe(1);
    const prompt = ws.main.promptText(1);
    expect(prompt).not.toContain("Earlier conversation");
    expect(prompt.split("first answer").length - 1).toBe(1); // once, from the session's log
    // Another workspace's session is not found.
    const other = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const foreign = await chatCall(other, { messages: [{ role: "user", content: "hi" }] }, { "X-Beaver-Session-Id": sessionId });
    expect(foreign.status).toBe(404);
    expect((await json<OpenAiErr>(foreign)).error.type).toBe("not_found_error");
  });

  it("refuses client tools, tool results, several choices and images with a 400 in OpenAI's shape naming the field, creating nothing", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("never")]));
    const user = [{ role: "user", content: "hi" }];
    const cases: [Record<string, unknown>, string][] = [
      [{ messages: user, tools: [{ type: "function", function: { name: "f", parameters: {} } }] }, "tools"],
      [{ messages: user, functions: [{ name: "f" }] }, "functions"],
      [{ messages: user, tool_choice: "required" }, "tool_choice"],
      [{ messages: user, n: 2 }, "n"],
      [{ messages: user, response_format: { type: "json_object" } }, "response_format"],
      [
        {
          messages: [
            { role: "user", content: "hi" },
            { role: "tool", tool_call_id: "c", content: "42" },
          ],
        },
        "messages.1",
      ],
      [{ messages: [{ role: "user", content: [{ type: "image_url", image_url: { url: "https://x/y.png" } }] }] }, "messages.0.content.0"],
      [
        {
          messages: [
            { role: "user", content: "hi" },
            { role: "assistant", content: "hello" },
          ],
        },
        "messages",
      ],
    ];
    for (const [body, param] of cases) {
      const res = await chatCall(ws, body);
      expect(res.status, param).toBe(400);
      const err = await json<OpenAiErr>(res);
      expect(err.error, param).toMatchObject({ type: "invalid_request_error", code: "bad_request", param });
      expect(err.error.message, param).toContain(param);
    }
    // `tools: []` and tool_choice "none"/"auto" ask for nothing and are accepted.
    expect((await chatCall(ws, { messages: user, tools: [], tool_choice: "none" })).status).toBe(200);
    expect(ws.main.calls).toHaveLength(1);
    expect(await sessionCount(ws.read)).toBe(1);
  });

  it("answers validation, auth, scope, unknown model, size and run failures in OpenAI's error shape", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ fail: 503 }]));
    const invalid = await chatCall(ws, { messages: "hello" });
    expect(invalid.status).toBe(400);
    expect((await json<OpenAiErr>(invalid)).error).toMatchObject({
      type: "invalid_request_error",
      code: "validation_failed",
      param: "messages",
    });

    const noToken = await call("POST", "/v1/chat/completions", { token: null, body: { model: "beaver", messages: [] } });
    expect(noToken.status).toBe(401);
    expect((await json<OpenAiErr>(noToken)).error).toMatchObject({ type: "authentication_error", code: "unauthorized", param: null });

    const readOnly = await call("POST", "/v1/chat/completions", {
      token: ws.read,
      body: { model: "beaver", messages: [{ role: "user", content: "hi" }] },
    });
    expect(readOnly.status).toBe(403);
    expect((await json<OpenAiErr>(readOnly)).error.type).toBe("permission_error");

    const unknown = await chatCall(ws, { model: "gpt-4o", messages: [{ role: "user", content: "hi" }] });
    expect(unknown.status).toBe(404);
    const unknownErr = await json<OpenAiErr>(unknown);
    expect(unknownErr.error).toMatchObject({ type: "not_found_error", code: "not_found", param: "model" });
    expect(unknownErr.error.message).toContain("/v1/models");

    const big = await chatCall(ws, { messages: [{ role: "user", content: "x".repeat(70_000) }] });
    expect(big.status).toBe(413);
    expect((await json<OpenAiErr>(big)).error).toMatchObject({ code: "payload_too_large", param: "messages" });
    expect(await sessionCount(ws.read)).toBe(0);

    const failed = await chatCall(ws, { messages: [{ role: "user", content: "hi" }] });
    expect(failed.status).toBe(502);
    expect((await json<OpenAiErr>(failed)).error).toMatchObject({ type: "server_error", code: "provider_error" });

    const streamed = await chatCall(ws, { messages: [{ role: "user", content: "hi" }], stream: true });
    expect(streamed.status).toBe(200);
    const frames = await sse(streamed);
    const error = frames.map((f) => f.data as { error?: OpenAiErr["error"] }).find((d) => typeof d === "object" && d.error);
    expect(error?.error).toMatchObject({ code: "provider_error", type: "server_error" });
    expect(frames.at(-1)!.data).toBe("[DONE]");

    const unrouted = await call("GET", "/v1/nothing", { token: ws.read });
    expect(unrouted.status).toBe(404);
    expect((await json<OpenAiErr>(unrouted)).error.type).toBe("not_found_error");
  });
});

describe("POST /v1/responses", () => {
  it("answers a response whose id names its session, and previous_response_id continues that session", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("Hello Ada."), text("Your name is Ada.")]));
    const first = await call("POST", "/v1/responses", {
      token: ws.member,
      body: { model: "beaver", input: "My name is Ada.", instructions: "Be brief." },
    });
    expect(first.status).toBe(200);
    const r1 = await json<ResponseObj>(first);
    expect(r1).toMatchObject({ object: "response", status: "completed", previous_response_id: null });
    expect(r1.output[0]).toMatchObject({ type: "message", role: "assistant", content: [{ type: "output_text", text: "Hello Ada." }] });
    expect(r1.usage).toMatchObject({ input_tokens: 10, output_tokens: 4, total_tokens: 14 });
    expect(parseResponseId(r1.id)).toEqual({ sessionId: r1.beaver.session_id, runId: r1.beaver.run_id });
    expect(ws.main.promptText(0)).toContain("Be brief.");

    const second = await call("POST", "/v1/responses", {
      token: ws.member,
      body: {
        model: "beaver",
        input: [{ role: "user", content: [{ type: "input_text", text: "What is my name?" }] }],
        previous_response_id: r1.id,
      },
    });
    expect(second.status).toBe(200);
    const r2 = await json<ResponseObj>(second);
    expect(r2.beaver.session_id).toBe(r1.beaver.session_id);
    expect(r2.previous_response_id).toBe(r1.id);
    expect(r2.output[0]!.content[0]!.text).toBe("Your name is Ada.");
    expect(ws.main.promptText(1)).toContain("My name is Ada."); // from the session's own log
    expect(await sessionCount(ws.read)).toBe(1);

    // An older response of the session is not continued silently: 409, naming the latest.
    const stale = await call("POST", "/v1/responses", {
      token: ws.member,
      body: { model: "beaver", input: "again", previous_response_id: r1.id },
    });
    expect(stale.status).toBe(409);
    const staleErr = await json<OpenAiErr & { error: { message: string } }>(stale);
    expect(staleErr.error).toMatchObject({ type: "conflict_error", param: "previous_response_id" });
    expect(staleErr.error.message).toContain(r2.id);

    // Another workspace cannot continue it, nor can a made-up id.
    const other = await newWorkspace();
    for (const id of [r2.id, responseId("ses_nope", "run_nope"), "resp_%%%"]) {
      const res = await call("POST", "/v1/responses", {
        token: other.member,
        body: { model: "beaver", input: "hi", previous_response_id: id },
      });
      expect(res.status, id).toBe(404);
      expect((await json<OpenAiErr>(res)).error.param, id).toBe("previous_response_id");
    }
  });

  it("streams response events in order with sequence numbers, the text deltas adding up to the completed response", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("Streaming ", "works.")]));
    const res = await call("POST", "/v1/responses", { token: ws.member, body: { model: "beaver", input: "stream please", stream: true } });
    expect(res.status).toBe(200);
    const events = await sse(res);
    const types = events.map((e) => e.event);
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(types).toEqual(
      expect.arrayContaining(["response.output_item.added", "response.content_part.added", "response.output_text.done"]),
    );
    const datas = events.map((e) => e.data as { type: string; sequence_number: number; delta?: string; response?: ResponseObj });
    expect(datas.map((d) => d.type)).toEqual(types);
    expect(datas.map((d) => d.sequence_number)).toEqual(datas.map((_, i) => i));
    const deltas = datas.filter((d) => d.type === "response.output_text.delta").map((d) => d.delta);
    expect(deltas.join("")).toBe("Streaming works.");
    const completed = datas.at(-1)!.response!;
    expect(completed.status).toBe("completed");
    expect(completed.output[0]!.content[0]!.text).toBe("Streaming works.");
    expect(completed.id).toBe(datas[0]!.response!.id);
  });

  it("refuses client tools, function call outputs and conversations", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("never")]));
    const cases: [Record<string, unknown>, string][] = [
      [{ input: "hi", tools: [{ type: "function", name: "f", parameters: {} }] }, "tools"],
      [{ input: [{ type: "function_call_output", call_id: "c", output: "1" }] }, "input.0"],
      [{ input: "hi", conversation: "conv_1" }, "conversation"],
      [{ input: "hi", background: true }, "background"],
    ];
    for (const [body, param] of cases) {
      const res = await call("POST", "/v1/responses", { token: ws.member, body: { model: "beaver", ...body } });
      expect(res.status, param).toBe(400);
      expect((await json<OpenAiErr>(res)).error, param).toMatchObject({ type: "invalid_request_error", param });
    }
    expect(ws.main.calls).toHaveLength(0);
  });
});

describe("GET /v1/models", () => {
  it("lists beaver, the configured main model's id and enabled agents, for a read token; each name runs", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("by main id"), text("by agent")]));
    const created = await call("POST", "/api/agents", {
      token: ws.admin,
      body: { id: "rev", gitea_username: "rev-bot", roles: ["reviewer"] },
    });
    expect(created.status).toBe(201);
    const res = await call("GET", "/v1/models", { token: ws.read });
    expect(res.status).toBe(200);
    const list = await json<{ object: string; data: { id: string; object: string; owned_by: string }[] }>(res);
    expect(list.object).toBe("list");
    const config = await json<{ model: { id: string } }>(await call("GET", "/api/config", { token: ws.admin }));
    expect(list.data.map((m) => m.id)).toEqual(["beaver", config.model.id, "agent:rev"]);
    expect(list.data.every((m) => m.object === "model")).toBe(true);
    const one = await call("GET", "/v1/models/agent:rev", { token: ws.read });
    expect(one.status).toBe(200);
    expect(await json(one)).toMatchObject({ id: "agent:rev", object: "model", owned_by: "beaver" });
    const missing = await call("GET", "/v1/models/gpt-4o", { token: ws.read });
    expect(missing.status).toBe(404);
    expect((await json<OpenAiErr>(missing)).error).toMatchObject({ type: "not_found_error", param: "model" });

    const byId = await chatCall(ws, { model: config.model.id, messages: [{ role: "user", content: "hi" }] });
    expect((await json<Completion>(byId)).choices[0]!.message.content).toBe("by main id");
    const byAgent = await chatCall(ws, { model: "agent:rev", messages: [{ role: "user", content: "hi" }] });
    expect((await json<Completion>(byAgent)).choices[0]!.message.content).toBe("by agent");
    // A disabled agent is no longer a model.
    await call("PATCH", "/api/agents/rev", { token: ws.admin, body: { enabled: false } });
    expect((await chatCall(ws, { model: "agent:rev", messages: [{ role: "user", content: "hi" }] })).status).toBe(404);
  });
});
