/**
 * A scripted OpenAI-compatible chat completions server for e2e tests and benchmarks. They run in
 * other processes than whoever started it (wrangler dev's workerd, vitest workers), so it is
 * steered over HTTP:
 *
 * - `POST /v1/chat/completions` — streaming (SSE chunks shaped like OpenAI's, incl. `tool_calls`
 *   deltas, `finish_reason` and a final usage chunk when `stream_options.include_usage`) or not.
 * - `POST /__script {model, steps}` — queue steps for a model id, consumed one per request.
 * - `GET /__requests[?model=id]` — `{ requests: [{ model, authorization, body }] }` as received.
 * - `POST /__reset` — forget scripts and recorded requests.
 *
 * Without a queued step a model id answers by rule; the rule is the part before the first `:`, so
 * tests can use their own ids (`echo:my-test`) and filter `/__requests` by them:
 * - `echo` → text `echo: <last user text>`;
 * - `tools-N` → one `echo` tool call per request until the turn (since the last user message) has
 *   N tool results, then a final text;
 * - `down` → HTTP 500, always;
 * - `json-tool` → writes an `echo` call as JSON text (raw tool-call detection), then a final text
 *   once a tool result is in the turn.
 * Whatever the rule, a request for the structured output named `judgement` (an evaluation judge,
 * docs/evaluation.md) is answered with a fixed, schema-valid judgement (`judgementStep`).
 */
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";

export interface ScriptedToolCall {
  name: string;
  /** An object, or a string sent verbatim (to script malformed arguments). */
  arguments: Record<string, unknown> | string;
}

export interface ScriptedStep {
  text?: string;
  reasoning?: string;
  tool_calls?: ScriptedToolCall[];
  /** Answer with this HTTP error status instead of a completion. */
  status?: number;
  /** Wait before answering. */
  delay_ms?: number;
  /** Wait between streamed chunks (to exercise cancellation mid-stream). */
  chunk_delay_ms?: number;
}

export interface RecordedRequest {
  model: string;
  authorization: string | null;
  body: ChatRequest;
  /** When the request arrived and when its answer started (ms since the epoch): overlapping requests show parallel callers. */
  received_at: number;
  answered_at?: number;
}

/** A scripted embedding: texts containing `contains` embed as `vector`. */
export interface EmbeddingRule {
  contains: string;
  vector: number[];
}

function isEmbeddingRules(v: unknown): v is EmbeddingRule[] {
  return (
    Array.isArray(v) &&
    v.every(
      (r) =>
        typeof r === "object" &&
        r !== null &&
        typeof (r as EmbeddingRule).contains === "string" &&
        Array.isArray((r as EmbeddingRule).vector) &&
        (r as EmbeddingRule).vector.every((n) => typeof n === "number"),
    )
  );
}

export interface ScriptedModelServer {
  /** `http://127.0.0.1:<port>`; the OpenAI base URL is `${url}/v1`. */
  url: string;
  baseUrl: string;
  stop(): Promise<void>;
}

interface ChatMessage {
  role: string;
  content?: string | null | { type: string; text?: string }[];
  tool_calls?: unknown[];
  tool_call_id?: string;
}

interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  stream?: boolean;
  stream_options?: { include_usage?: boolean };
  [key: string]: unknown;
}

const MAX_BODY = 8 * 1024 * 1024;

export async function startScriptedModelServer(): Promise<ScriptedModelServer> {
  const scripts = new Map<string, ScriptedStep[]>();
  let requests: RecordedRequest[] = [];
  const embeddingRules = new Map<string, EmbeddingRule[]>();
  let embeddingRequests: { model: string; input: string[] }[] = [];
  let callCounter = 0;
  /** Open streaming responses, ended on stop so `server.close()` never waits on a slow script. */
  const open = new Set<ServerResponse>();

  const server = createServer((req, res) => {
    handle(req, res).catch((err: unknown) => {
      if (!res.headersSent) sendJson(res, 500, openAiError(`scripted server failure: ${String(err)}`, "server_error"));
      else res.end();
    });
  });

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", "http://localhost");
    if (req.method === "GET" && url.pathname === "/__requests") {
      const model = url.searchParams.get("model");
      return sendJson(res, 200, { requests: model ? requests.filter((r) => r.model === model) : requests });
    }
    // A web page for the web_fetch tool: the `html` query parameter, served as text/html.
    if (req.method === "GET" && url.pathname === "/__page") {
      const html = url.searchParams.get("html") ?? "";
      res.writeHead(200, { "Content-Type": "text/html; charset=utf-8", "Content-Length": Buffer.byteLength(html) });
      return void res.end(html);
    }
    if (req.method === "POST" && url.pathname === "/__embeddings") {
      const body = (await readJson(req)) as { model?: unknown; rules?: unknown };
      if (typeof body.model !== "string" || !isEmbeddingRules(body.rules))
        return sendJson(res, 400, { error: "expected {model: string, rules: {contains: string, vector: number[]}[]}" });
      embeddingRules.set(body.model, body.rules);
      return sendJson(res, 200, { ok: true });
    }
    if (req.method === "POST" && url.pathname === "/v1/embeddings") {
      // OpenAI's embeddings API: each input gets the vector of the first rule its text contains (case-insensitive)
      // among the rules scripted for the model, else a vector orthogonal to every rule's.
      const body = (await readJson(req)) as { model?: unknown; input?: unknown };
      const inputs = typeof body.input === "string" ? [body.input] : body.input;
      if (typeof body.model !== "string" || !Array.isArray(inputs) || !inputs.every((i) => typeof i === "string"))
        return sendJson(res, 400, openAiError("expected {model, input: string | string[]}", "invalid_request_error"));
      embeddingRequests.push({ model: body.model, input: inputs });
      const rules = embeddingRules.get(body.model) ?? [];
      const dims = Math.max(1, ...rules.map((r) => r.vector.length)) + 1;
      const vectorOf = (text: string) => {
        const rule = rules.find((r) => text.toLowerCase().includes(r.contains.toLowerCase()));
        const v = Array.from({ length: dims }, (_, i) => (rule ? (rule.vector[i] ?? 0) : i === dims - 1 ? 1 : 0));
        return v;
      };
      return sendJson(res, 200, {
        object: "list",
        model: body.model,
        data: inputs.map((text, index) => ({ object: "embedding", index, embedding: vectorOf(text) })),
        usage: { prompt_tokens: inputs.length, total_tokens: inputs.length },
      });
    }
    if (req.method === "GET" && url.pathname === "/__embedding_requests") {
      return sendJson(res, 200, { requests: embeddingRequests });
    }
    if (req.method === "POST" && url.pathname === "/__reset") {
      embeddingRules.clear();
      embeddingRequests = [];
      scripts.clear();
      requests = [];
      return sendJson(res, 200, { ok: true });
    }
    if (req.method === "POST" && url.pathname === "/__script") {
      const body = await readJson(req);
      if (!isScript(body)) return sendJson(res, 400, { error: "expected {model: string, steps: ScriptedStep[]}" });
      const queue = scripts.get(body.model) ?? [];
      queue.push(...body.steps);
      scripts.set(body.model, queue);
      return sendJson(res, 200, { queued: queue.length });
    }
    if (req.method === "POST" && url.pathname === "/v1/chat/completions") {
      let body: unknown;
      try {
        body = await readJson(req);
      } catch {
        return sendJson(res, 400, openAiError("request body is not JSON", "invalid_request_error"));
      }
      if (!isChatRequest(body)) return sendJson(res, 400, openAiError("expected {model, messages[]}", "invalid_request_error"));
      const record: RecordedRequest = {
        model: body.model,
        authorization: req.headers.authorization ?? null,
        body,
        received_at: Date.now(),
      };
      requests.push(record);
      const step = scripts.get(body.model)?.shift() ?? ruleStep(body);
      if (!step)
        return sendJson(
          res,
          404,
          openAiError(`no script and no rule for model '${body.model}' (rules: echo, tools-N, down, json-tool)`, "model_not_found"),
        );
      if (step.delay_ms) await sleep(step.delay_ms);
      record.answered_at = Date.now();
      if (step.status && step.status >= 400)
        return sendJson(res, step.status, openAiError(`scripted failure (HTTP ${step.status})`, "server_error"));
      const completion = toCompletion(step, () => `call_${++callCounter}`);
      if (body.stream) return streamCompletion(res, body, completion, step.chunk_delay_ms ?? 0, open);
      return sendJson(res, 200, completionBody(body, completion));
    }
    sendJson(res, 404, openAiError(`no route ${req.method} ${url.pathname}`, "not_found"));
  }

  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const port = (server.address() as AddressInfo).port;
  const url = `http://127.0.0.1:${port}`;
  return {
    url,
    baseUrl: `${url}/v1`,
    stop: () =>
      new Promise<void>((resolve, reject) => {
        for (const res of open) res.destroy();
        server.closeAllConnections();
        server.close((err) => (err ? reject(err) : resolve()));
      }),
  };
}

/** A small client for the control endpoints, for tests and benchmarks in any process. */
export function scriptedModelClient(url: string) {
  return {
    async script(model: string, steps: ScriptedStep[]): Promise<void> {
      const res = await fetch(`${url}/__script`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model, steps }),
      });
      if (!res.ok) throw new Error(`__script failed: ${res.status} ${await res.text()}`);
    },
    /** Vectors `/v1/embeddings` answers for `model`: the first rule whose `contains` the text holds. */
    async embeddings(model: string, rules: EmbeddingRule[]): Promise<void> {
      const res = await fetch(`${url}/__embeddings`, {
        method: "POST",
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ model, rules }),
      });
      if (!res.ok) throw new Error(`__embeddings failed: ${res.status} ${await res.text()}`);
    },
    async embeddingRequests(model: string): Promise<string[][]> {
      const res = await fetch(`${url}/__embedding_requests`);
      const { requests } = (await res.json()) as { requests: { model: string; input: string[] }[] };
      return requests.filter((r) => r.model === model).map((r) => r.input);
    },
    async requests(model?: string): Promise<RecordedRequest[]> {
      const res = await fetch(`${url}/__requests${model ? `?model=${encodeURIComponent(model)}` : ""}`);
      return ((await res.json()) as { requests: RecordedRequest[] }).requests;
    },
    async reset(): Promise<void> {
      await fetch(`${url}/__reset`, { method: "POST" });
    },
  };
}

// ---- rules -------------------------------------------------------------------------------------

function ruleStep(body: ChatRequest): ScriptedStep | null {
  const [, rule = "", delay] = /^([^:@]*)(?:@(\d+))?/.exec(body.model) ?? [];
  const step = judgementStep(body) ?? stepByRule(rule, body);
  return step && delay ? { ...step, delay_ms: Number(delay) } : step;
}

/** The fixed answer to an evaluation judge (a `json_schema` response format named `judgement`). */
export const SCRIPTED_JUDGEMENT = { baseline_score: 6, candidate_score: 8, winner: "candidate", reason: "scripted judgement" };

function judgementStep(body: ChatRequest): ScriptedStep | null {
  const format = body.response_format as { type?: string; json_schema?: { name?: string } } | undefined;
  if (format?.type !== "json_schema" || format.json_schema?.name !== "judgement") return null;
  return { text: JSON.stringify(SCRIPTED_JUDGEMENT) };
}

function stepByRule(rule: string, body: ChatRequest): ScriptedStep | null {
  const turn = currentTurn(body.messages);
  const lastUser = textOf(turn.user);
  const toolResults = turn.after.filter((m) => m.role === "tool");
  if (rule === "echo") return { text: `echo: ${lastUser}` };
  if (rule === "down") return { status: 500 };
  if (rule === "json-tool") {
    if (toolResults.length > 0) return { text: `json-tool done: ${textOf(toolResults[toolResults.length - 1])}` };
    return { text: JSON.stringify({ name: "echo", arguments: { text: lastUser } }) };
  }
  const tools = /^tools-(\d+)$/.exec(rule);
  if (tools) {
    const wanted = Number(tools[1]);
    if (toolResults.length < wanted)
      return { tool_calls: [{ name: "echo", arguments: { text: `call ${toolResults.length + 1} of ${wanted}` } }] };
    return { text: `done after ${toolResults.length} tool calls` };
  }
  return null;
}

function currentTurn(messages: ChatMessage[]): { user: ChatMessage | undefined; after: ChatMessage[] } {
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]!.role === "user") return { user: messages[i], after: messages.slice(i + 1) };
  }
  return { user: undefined, after: messages };
}

function textOf(message: ChatMessage | undefined): string {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => p.text ?? "").join("");
  return "";
}

// ---- OpenAI wire format --------------------------------------------------------------------------

interface Completion {
  text: string;
  reasoning: string;
  toolCalls: { id: string; name: string; arguments: string }[];
  finishReason: "stop" | "tool_calls";
}

function toCompletion(step: ScriptedStep, nextId: () => string): Completion {
  const toolCalls = (step.tool_calls ?? []).map((c) => ({
    id: nextId(),
    name: c.name,
    arguments: typeof c.arguments === "string" ? c.arguments : JSON.stringify(c.arguments),
  }));
  return { text: step.text ?? "", reasoning: step.reasoning ?? "", toolCalls, finishReason: toolCalls.length > 0 ? "tool_calls" : "stop" };
}

function usageOf(body: ChatRequest, c: Completion) {
  const prompt = Math.ceil(JSON.stringify(body.messages).length / 4);
  const completion = Math.ceil(
    (c.text.length + c.reasoning.length + c.toolCalls.reduce((n, t) => n + t.name.length + t.arguments.length, 0)) / 4,
  );
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function completionBody(body: ChatRequest, c: Completion) {
  const message: Record<string, unknown> = { role: "assistant", content: c.text.length > 0 || c.toolCalls.length === 0 ? c.text : null };
  if (c.reasoning) message.reasoning_content = c.reasoning;
  if (c.toolCalls.length > 0)
    message.tool_calls = c.toolCalls.map((t) => ({ id: t.id, type: "function", function: { name: t.name, arguments: t.arguments } }));
  return {
    id: `chatcmpl-${Date.now()}`,
    object: "chat.completion",
    created: Math.floor(Date.now() / 1000),
    model: body.model,
    system_fingerprint: null,
    choices: [{ index: 0, message, logprobs: null, finish_reason: c.finishReason }],
    usage: usageOf(body, c),
  };
}

async function streamCompletion(
  res: ServerResponse,
  body: ChatRequest,
  c: Completion,
  chunkDelayMs: number,
  open: Set<ServerResponse>,
): Promise<void> {
  const includeUsage = body.stream_options?.include_usage === true;
  const id = `chatcmpl-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: body.model,
    system_fingerprint: null,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finishReason }],
    ...(includeUsage ? { usage: null } : {}),
  });

  const frames: unknown[] = [chunk({ role: "assistant", content: "" })];
  for (const piece of pieces(c.reasoning)) frames.push(chunk({ reasoning_content: piece }));
  for (const piece of pieces(c.text)) frames.push(chunk({ content: piece }));
  c.toolCalls.forEach((t, index) => {
    frames.push(chunk({ tool_calls: [{ index, id: t.id, type: "function", function: { name: t.name, arguments: "" } }] }));
    for (const piece of pieces(t.arguments, 8)) frames.push(chunk({ tool_calls: [{ index, function: { arguments: piece } }] }));
  });
  frames.push(chunk({}, c.finishReason));
  if (includeUsage)
    frames.push({
      id,
      object: "chat.completion.chunk",
      created,
      model: body.model,
      system_fingerprint: null,
      choices: [],
      usage: usageOf(body, c),
    });

  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  open.add(res);
  let closed = false;
  res.on("close", () => {
    closed = true;
    open.delete(res);
  });
  for (const frame of frames) {
    if (closed) return;
    res.write(`data: ${JSON.stringify(frame)}\n\n`);
    if (chunkDelayMs > 0) await sleep(chunkDelayMs);
  }
  if (!closed) res.end("data: [DONE]\n\n");
}

/** Splits text into word-sized pieces (keeping whitespace), like a model streaming tokens. */
function pieces(text: string, size?: number): string[] {
  if (text === "") return [];
  if (size) {
    const out: string[] = [];
    for (let i = 0; i < text.length; i += size) out.push(text.slice(i, i + size));
    return out;
  }
  return text.match(/\S+\s*|\s+/g) ?? [text];
}

function openAiError(message: string, type: string) {
  return { error: { message, type, param: null, code: null } };
}

// ---- plumbing ------------------------------------------------------------------------------------

function sendJson(res: ServerResponse, status: number, body: unknown): void {
  const text = JSON.stringify(body);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

async function readJson(req: IncomingMessage): Promise<unknown> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req) {
    size += (chunk as Buffer).length;
    if (size > MAX_BODY) throw new Error("request body too large");
    chunks.push(chunk as Buffer);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

function isChatRequest(v: unknown): v is ChatRequest {
  return typeof v === "object" && v !== null && typeof (v as ChatRequest).model === "string" && Array.isArray((v as ChatRequest).messages);
}

function isScript(v: unknown): v is { model: string; steps: ScriptedStep[] } {
  if (typeof v !== "object" || v === null) return false;
  const { model, steps } = v as { model?: unknown; steps?: unknown };
  return typeof model === "string" && Array.isArray(steps) && steps.every((s) => typeof s === "object" && s !== null);
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
