/**
 * The official `openai` npm client against Beaver's /v1 on a real `wrangler dev` (docs/openai-api.md):
 * chat completions streamed and not, responses streamed and not, `previous_response_id` continuing
 * the same session, a server-side tool call inside a streamed answer, the model list, and client
 * tools refused with an error the client raises as a 400. The workspace's model is the scripted
 * OpenAI-compatible server (test/support/scripted-openai.ts), whose `echo` rule repeats the last user text.
 */
import { beforeAll, describe, expect, inject, it } from "vitest";
import OpenAI from "openai";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const scripted = scriptedModelClient(modelUrl);

let client: OpenAI;
let token: string;
const echoModel = `echo:openai-${Math.random().toString(36).slice(2, 8)}`;

beforeAll(async () => {
  const ws = await newWorkspace();
  token = ws.token;
  const config = await api("PUT", "/api/config", {
    token,
    body: { model: { provider: "openai-compatible", id: echoModel, base_url: `${modelUrl}/v1` } },
  });
  if (config.status !== 200) throw new Error(`config: ${config.status} ${await config.text()}`);
  client = new OpenAI({ apiKey: token, baseURL: `${baseUrl()}/v1`, maxRetries: 0 });
});

async function sessionOf(id: string): Promise<{ id: string; metadata: Record<string, unknown> }> {
  const res = await api("GET", `/api/sessions/${id}`, { token });
  expect(res.status).toBe(200);
  return (await res.json()) as { id: string; metadata: Record<string, unknown> };
}

describe("the openai client against /v1", () => {
  it("gets a chat completion, with the session it ran in", async () => {
    const { data, response } = await client.chat.completions
      .create({ model: "beaver", messages: [{ role: "user", content: "hello from the openai client" }] })
      .withResponse();
    expect(data.object).toBe("chat.completion");
    expect(data.choices[0]!.message.content).toBe("echo: hello from the openai client");
    expect(data.choices[0]!.finish_reason).toBe("stop");
    expect(data.usage!.total_tokens).toBeGreaterThan(0);
    const session = await sessionOf(response.headers.get("x-beaver-session-id")!);
    expect(session.metadata).toMatchObject({ source: "openai", api: "chat.completions" });
  });

  it("streams a chat completion with the usage chunk", async () => {
    const stream = await client.chat.completions.create({
      model: "beaver",
      messages: [
        { role: "system", content: "You echo." },
        { role: "user", content: "stream this back please" },
      ],
      stream: true,
      stream_options: { include_usage: true },
    });
    let text = "";
    let finish: string | null = null;
    let usage: OpenAI.CompletionUsage | null | undefined;
    for await (const chunk of stream) {
      text += chunk.choices[0]?.delta.content ?? "";
      finish = chunk.choices[0]?.finish_reason ?? finish;
      if (chunk.usage) usage = chunk.usage;
    }
    expect(text).toBe("echo: stream this back please");
    expect(finish).toBe("stop");
    expect(usage!.prompt_tokens).toBeGreaterThan(0);
    // The system message reached the model as this run's instructions.
    const sent = await scripted.requests(echoModel);
    expect(JSON.stringify(sent.at(-1)!.body.messages[0])).toContain("You echo.");
  });

  it("streams an answer whose run called one of Beaver's tools on the server", async () => {
    const ws = await newWorkspace();
    const put = await api("PUT", "/api/config", {
      token: ws.token,
      body: { model: { provider: "openai-compatible", id: "tools-1:openai-e2e", base_url: `${modelUrl}/v1` } },
    });
    expect(put.status).toBe(200);
    const own = new OpenAI({ apiKey: ws.token, baseURL: `${baseUrl()}/v1`, maxRetries: 0 });
    const stream = await own.chat.completions.create({
      model: "beaver",
      messages: [{ role: "user", content: "use a tool" }],
      stream: true,
    });
    let text = "";
    for await (const chunk of stream) text += chunk.choices[0]?.delta.content ?? "";
    expect(text).toBe("done after 1 tool calls");
  });

  it("gets a response, and previous_response_id continues the same session", async () => {
    const first = await client.responses.create({ model: "beaver", input: "my name is Ada", instructions: "Remember names." });
    expect(first.status).toBe("completed");
    expect(first.output_text).toBe("echo: my name is Ada");
    const second = await client.responses.create({ model: "beaver", input: "what is my name?", previous_response_id: first.id });
    expect(second.output_text).toBe("echo: what is my name?");
    expect(second.previous_response_id).toBe(first.id);
    const sessions = [first, second].map((r) => (r as unknown as { beaver: { session_id: string } }).beaver.session_id);
    expect(sessions[1]).toBe(sessions[0]);
    // The model saw the first turn from the session's own log.
    const sent = await scripted.requests(echoModel);
    const history = JSON.stringify(sent.at(-1)!.body.messages);
    expect(history).toContain("my name is Ada");
    expect(history).toContain("echo: my name is Ada");
    expect((await sessionOf(sessions[0]!)).metadata).toMatchObject({ api: "responses" });
  });

  it("streams a response, as events and through the client's response stream helper", async () => {
    const events = await client.responses.create({ model: "beaver", input: "streamed response", stream: true });
    const types: string[] = [];
    let text = "";
    for await (const event of events) {
      types.push(event.type);
      if (event.type === "response.output_text.delta") text += event.delta;
    }
    expect(types[0]).toBe("response.created");
    expect(types.at(-1)).toBe("response.completed");
    expect(text).toBe("echo: streamed response");

    const helper = client.responses.stream({ model: "beaver", input: "through the helper" });
    const final = await helper.finalResponse();
    expect(final.output_text).toBe("echo: through the helper");
  });

  it("lists the workspace's models", async () => {
    const ids: string[] = [];
    for await (const model of client.models.list()) ids.push(model.id);
    expect(ids).toEqual(["beaver", echoModel]);
  });

  it("refuses client tools with a 400 the client raises, naming the parameter", async () => {
    const tools: OpenAI.ChatCompletionTool[] = [
      { type: "function", function: { name: "lookup", parameters: { type: "object", properties: {} } } },
    ];
    const chat = client.chat.completions.create({ model: "beaver", messages: [{ role: "user", content: "hi" }], tools });
    await expect(chat).rejects.toBeInstanceOf(OpenAI.BadRequestError);
    await chat.catch((err: InstanceType<typeof OpenAI.BadRequestError>) => {
      expect(err.status).toBe(400);
      expect(err.param).toBe("tools");
      expect(err.message).toContain("client-side tools are not supported");
    });
    const response = client.responses.create({
      model: "beaver",
      input: "hi",
      tools: [{ type: "function", name: "lookup", parameters: { type: "object", properties: {} }, strict: false }],
    });
    await expect(response).rejects.toMatchObject({ status: 400, param: "tools" });
    // A bad token is the client's AuthenticationError.
    const stranger = new OpenAI({ apiKey: "not-a-token", baseURL: `${baseUrl()}/v1`, maxRetries: 0 });
    await expect(stranger.models.list()).rejects.toBeInstanceOf(OpenAI.AuthenticationError);
  });
});
