// `npm run demo-model`: a DEMO model server, so the README's quick start answers offline and without a key.
// It is not an AI: it speaks OpenAI's chat completions API (streaming and not) with canned answers that say
// they come from the demo, and it makes one tool call when asked for the time (if Beaver offers the
// `current_time` tool), so a newcomer sees a tool call go through Beaver. Listens on 127.0.0.1 at $PORT
// (default 8788); `HOST` changes the address. Node's standard library only. See README, "Quick start".
import { createServer } from "node:http";

const PORT = Number(process.env.PORT ?? 8788);
const HOST = process.env.HOST ?? "127.0.0.1";
const DEMO_MODEL_ID = "beaver-demo";
const LABEL = "[demo model]";
const MAX_BODY = 8 * 1024 * 1024;

/** The text of a chat message's content (a string or text parts). */
function textOf(message) {
  const content = message?.content;
  if (typeof content === "string") return content;
  if (Array.isArray(content)) return content.map((p) => (typeof p?.text === "string" ? p.text : "")).join("");
  return "";
}

/** What the demo answers to a request: `{ text }` or `{ toolCall: { name, arguments } }`. */
function demoAnswer(body) {
  const messages = Array.isArray(body.messages) ? body.messages : [];
  let lastUser = -1;
  for (let i = messages.length - 1; i >= 0; i--) {
    if (messages[i]?.role === "user") {
      lastUser = i;
      break;
    }
  }
  const asked = lastUser >= 0 ? textOf(messages[lastUser]).trim() : "";
  const toolResult = messages.slice(lastUser + 1).find((m) => m?.role === "tool");
  if (toolResult) {
    return { text: `${LABEL} I called the current_time tool through Beaver and it answered:\n${textOf(toolResult)}` };
  }
  const offered = (Array.isArray(body.tools) ? body.tools : []).map((t) => t?.function?.name);
  if (/\b(time|date|day|clock)\b/i.test(asked)) {
    if (offered.includes("current_time")) return { toolCall: { name: "current_time", arguments: "{}" } };
    return { text: `${LABEL} You asked for the time, but Beaver did not offer me the current_time tool this turn.` };
  }
  const quoted = asked.length > 200 ? `${asked.slice(0, 200)}…` : asked;
  return {
    text:
      `${LABEL} Hello from Beaver's demo model. I am not an AI: I answer with canned text so you can try Beaver offline. ` +
      `You said: "${quoted}". Ask me "What time is it?" to see a tool call, then configure a real provider (README, "Real providers").`,
  };
}

function usageOf(body, answer) {
  const prompt = Math.ceil(JSON.stringify(body.messages ?? []).length / 4);
  const completion = Math.ceil((answer.text ?? JSON.stringify(answer.toolCall)).length / 4);
  return { prompt_tokens: prompt, completion_tokens: completion, total_tokens: prompt + completion };
}

function sendJson(res, status, value) {
  const text = JSON.stringify(value);
  res.writeHead(status, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
}

const openAiError = (message, type) => ({ error: { message, type, param: null, code: null } });

async function readJson(req) {
  const chunks = [];
  let size = 0;
  for await (const chunk of req) {
    size += chunk.length;
    if (size > MAX_BODY) throw new Error("request body too large");
    chunks.push(chunk);
  }
  return JSON.parse(Buffer.concat(chunks).toString("utf8"));
}

let calls = 0;

function completion(body, answer) {
  const id = `chatcmpl-demo-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const message = answer.toolCall
    ? {
        role: "assistant",
        content: null,
        tool_calls: [{ id: `call_demo_${++calls}`, type: "function", function: answer.toolCall }],
      }
    : { role: "assistant", content: answer.text };
  return {
    id,
    object: "chat.completion",
    created,
    model: body.model,
    choices: [{ index: 0, message, logprobs: null, finish_reason: answer.toolCall ? "tool_calls" : "stop" }],
    usage: usageOf(body, answer),
  };
}

function stream(res, body, answer) {
  const id = `chatcmpl-demo-${Date.now()}`;
  const created = Math.floor(Date.now() / 1000);
  const includeUsage = body.stream_options?.include_usage === true;
  const chunk = (delta, finish = null) => ({
    id,
    object: "chat.completion.chunk",
    created,
    model: body.model,
    choices: [{ index: 0, delta, logprobs: null, finish_reason: finish }],
  });
  const frames = [chunk({ role: "assistant", content: "" })];
  if (answer.toolCall) {
    frames.push(
      chunk({
        tool_calls: [{ index: 0, id: `call_demo_${++calls}`, type: "function", function: { name: answer.toolCall.name, arguments: "" } }],
      }),
    );
    frames.push(chunk({ tool_calls: [{ index: 0, function: { arguments: answer.toolCall.arguments } }] }));
  } else {
    for (const word of answer.text.match(/\S+\s*|\s+/g) ?? []) frames.push(chunk({ content: word }));
  }
  frames.push(chunk({}, answer.toolCall ? "tool_calls" : "stop"));
  if (includeUsage)
    frames.push({ id, object: "chat.completion.chunk", created, model: body.model, choices: [], usage: usageOf(body, answer) });
  res.writeHead(200, { "Content-Type": "text/event-stream", "Cache-Control": "no-cache", Connection: "keep-alive" });
  for (const frame of frames) res.write(`data: ${JSON.stringify(frame)}\n\n`);
  res.end("data: [DONE]\n\n");
}

async function handle(req, res) {
  const url = new URL(req.url ?? "/", "http://localhost");
  if (req.method === "GET" && url.pathname === "/v1/models") {
    return sendJson(res, 200, { object: "list", data: [{ id: DEMO_MODEL_ID, object: "model", created: 0, owned_by: "beaver-demo" }] });
  }
  if (req.method === "POST" && url.pathname === "/v1/chat/completions") {
    let body;
    try {
      body = await readJson(req);
    } catch {
      return sendJson(res, 400, openAiError("request body is not JSON", "invalid_request_error"));
    }
    if (typeof body?.model !== "string" || !Array.isArray(body.messages)) {
      return sendJson(res, 400, openAiError("expected {model, messages[]}", "invalid_request_error"));
    }
    const answer = demoAnswer(body);
    if (body.stream === true) return stream(res, body, answer);
    return sendJson(res, 200, completion(body, answer));
  }
  sendJson(res, 404, openAiError(`${LABEL} no route ${req.method} ${url.pathname}; try POST /v1/chat/completions`, "not_found"));
}

const server = createServer((req, res) => {
  handle(req, res).catch((err) => {
    if (!res.headersSent) sendJson(res, 500, openAiError(`${LABEL} ${String(err)}`, "server_error"));
    else res.end();
  });
});
server.listen(PORT, HOST, () => {
  console.log(
    `Beaver DEMO model (canned answers, not an AI) listening on http://${HOST}:${PORT}/v1 — model id "${DEMO_MODEL_ID}". Stop it with Ctrl-C.`,
  );
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.close(() => process.exit(0)));
