#!/usr/bin/env node
/**
 * The "client command" of `@modelcontextprotocol/conformance client --scenario auth/...`
 * (docs/mcp.md, "Conformance"): drives Beaver's own MCP client path — the code that runs inside the
 * Worker (src/domains/mcp/oauth-client.ts) — against the scenario's MCP server, through Beaver's API
 * exactly as the console does. The runner appends the scenario server's URL as the last argument;
 * BEAVER_URL and BEAVER_TOKEN (an admin token of a workspace with private egress allowed) name the
 * running Beaver (scripts/conformance-mcp.ts starts one with `wrangler dev`); MODEL_URL the scripted
 * OpenAI-compatible server (test/support/scripted-openai.ts) that plays the workspace's model. A
 * scenario's MCP_CONFORMANCE_CONTEXT with a `client_id` (and `client_secret`) is configured as a
 * pre-registered client (`oauth.client_id`, the secret in the workspace secrets store).
 *
 * Steps: configure the server with `auth: "oauth"` → Connect (discovery, registration, PKCE in the
 * Worker) → open the authorization URL as a browser would (the scenario's authorization server
 * approves at once and redirects to Beaver's callback) → hand code and state to Beaver's callback
 * endpoint (token exchange in the Worker) → list the server's tools with the token → a run whose model
 * calls the server's tool. A step-up (403 insufficient_scope) leaves the server `needs_authorization`
 * with the wider scope remembered: Connect again and call again (3 authorizations at most). Exits 0
 * when the tool call succeeded.
 */
const serverUrl = process.argv.at(-1);
const beaver = process.env.BEAVER_URL;
const token = process.env.BEAVER_TOKEN;
const modelUrl = process.env.MODEL_URL;
if (!serverUrl || !beaver || !token || !modelUrl) {
  console.error("usage: BEAVER_URL=… BEAVER_TOKEN=… MODEL_URL=… mcp-conformance-client.mjs <mcp-server-url>");
  process.exit(2);
}

async function api(method, path, body) {
  const res = await fetch(`${beaver}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body ? { "Content-Type": "application/json" } : {}) },
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`${method} ${path}: ${res.status} ${text}`);
  return JSON.parse(text);
}

const model = `conformance:${Date.now()}`;
const config = await api("GET", "/api/config");
// A scenario with a client issued out of band (auth/pre-registration) names it in its context.
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT ?? "{}");
const oauth = {};
if (context.client_id) {
  oauth.oauth = { client_id: context.client_id };
  if (context.client_secret) {
    await api("PUT", "/api/secrets/CONFORMANCE_CLIENT_SECRET", { value: context.client_secret });
    oauth.oauth.client_secret_secret = "CONFORMANCE_CLIENT_SECRET";
  }
}
const servers = [{ name: "conformance", url: serverUrl, auth: "oauth", ...oauth }];
await api("PUT", "/api/config", {
  ...config,
  model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` },
  mcp: { servers },
});

/** Connect as the console does; the scenario's authorization server approves at once. At most 3 (no loops). */
let authorizations = 0;
async function authorize() {
  authorizations++;
  const { authorization_url: authorizationUrl } = await api("POST", "/api/mcp/servers/conformance/connect");
  if (!authorizationUrl) return;
  console.log(`authorization URL: ${authorizationUrl}`);
  const page = await fetch(authorizationUrl, { redirect: "manual" });
  const location = page.headers.get("location");
  if (!location) throw new Error(`the authorization server answered ${page.status} without a redirect`);
  const back = new URL(location, authorizationUrl);
  const code = back.searchParams.get("code");
  const state = back.searchParams.get("state");
  if (!code || !state) throw new Error(`the redirect carries no code/state: ${back.href}`);
  console.log(await api("POST", "/api/mcp/oauth/callback", { code, state }));
}

async function status() {
  const { servers } = await api("GET", "/api/mcp/servers?refresh=true");
  const server = servers.find((s) => s.name === "conformance");
  console.log(JSON.stringify({ status: server?.status, error: server?.error, tools: server?.tools.map((t) => t.mcp_name) }));
  return server;
}

/** A run whose (scripted) model calls the server's first tool: what the tool answered, as the model read it. */
async function callTool(tool) {
  await fetch(`${modelUrl}/__script`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ model, steps: [{ tool_calls: [{ name: tool, arguments: {} }] }, { text: "done" }] }),
  });
  const session = await api("POST", "/api/sessions", {});
  const { run_id: runId } = await api("POST", `/api/sessions/${session.id}/messages`, { content: "call the tool" });
  for (let i = 0; i < 200; i++) {
    const run = await api("GET", `/api/sessions/${session.id}/runs/${runId}`);
    if (run.status !== "queued" && run.status !== "running") break;
    await new Promise((r) => setTimeout(r, 100));
  }
  const { requests } = await (await fetch(`${modelUrl}/__requests?model=${encodeURIComponent(model)}`)).json();
  const answer =
    requests
      .at(-1)
      ?.body.messages.filter((m) => m.role === "tool")
      .at(-1)?.content ?? "";
  console.log(`${tool}: ${typeof answer === "string" ? answer : JSON.stringify(answer)}`);
  return String(typeof answer === "string" ? answer : JSON.stringify(answer));
}

await authorize();
let server = await status();
if (server?.status === "needs_authorization") {
  await authorize();
  server = await status();
}
let ok = false;
const tool = server?.tools[0]?.name;
if (server?.status === "connected" && tool) {
  // A step-up (403 insufficient_scope) leaves the server needs_authorization with the wider scope: Connect again.
  for (;;) {
    const answer = await callTool(tool);
    ok = !answer.includes("needs_authorization") && !answer.includes("mcp_error") && !answer.includes("mcp_unavailable");
    if (ok || authorizations >= 3 || (await status())?.status !== "needs_authorization") break;
    await authorize();
  }
}
process.exit(ok ? 0 : 1);
