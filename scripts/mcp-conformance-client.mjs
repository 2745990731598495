#!/usr/bin/env node
/**
 * The "client command" of `@modelcontextprotocol/conformance client --scenario auth/...`
 * (docs/mcp.md, "Conformance"): drives Beaver's own MCP client path — the code that runs inside the
 * Worker (src/domains/mcp/oauth-client.ts) — against the scenario's MCP server, through Beaver's API
 * exactly as the console does. The runner appends the scenario server's URL as the last argument;
 * BEAVER_URL and BEAVER_TOKEN (an admin token of a workspace with private egress allowed) name the
 * running Beaver (scripts/conformance-mcp.ts starts one with `wrangler dev`).
 *
 * Steps: configure the server with `auth: "oauth"` → Connect (discovery, registration, PKCE in the
 * Worker) → open the authorization URL as a browser would (the scenario's authorization server
 * approves at once and redirects to Beaver's callback) → hand code and state to Beaver's callback
 * endpoint (token exchange in the Worker) → list the server's tools with the token. Exits 0 when the
 * server shows `connected`.
 */
const serverUrl = process.argv.at(-1);
const beaver = process.env.BEAVER_URL;
const token = process.env.BEAVER_TOKEN;
if (!serverUrl || !beaver || !token) {
  console.error("usage: BEAVER_URL=… BEAVER_TOKEN=… mcp-conformance-client.mjs <mcp-server-url>");
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

const config = await api("GET", "/api/config");
await api("PUT", "/api/config", { ...config, mcp: { servers: [{ name: "conformance", url: serverUrl, auth: "oauth" }] } });
const { authorization_url: authorizationUrl } = await api("POST", "/api/mcp/servers/conformance/connect");
if (authorizationUrl) {
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
const { servers } = await api("GET", "/api/mcp/servers?refresh=true");
const server = servers.find((s) => s.name === "conformance");
console.log(JSON.stringify({ status: server?.status, error: server?.error, tools: server?.tools.map((t) => t.mcp_name) }));
process.exit(server?.status === "connected" ? 0 : 1);
