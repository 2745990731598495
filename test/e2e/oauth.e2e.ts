/**
 * Beaver's `/mcp` as an OAuth 2.1 protected MCP server on `wrangler dev` (docs/mcp.md, "Add Beaver to
 * your assistant"), driven from nothing by the MCP SDK's own client and its `OAuthClientProvider`:
 * the 401 challenge → protected-resource metadata (RFC 9728) → authorization-server metadata
 * (RFC 8414) → dynamic registration (RFC 7591) → the console's authorization page in headless
 * Chromium (signed in as a member, who picks the `member` scope and approves) → the code at the
 * client's loopback callback → token with PKCE → `tools/list` → `send_message` answered by the
 * scripted model; then a refresh, and after the grant is revoked in the console's API the client is
 * refused (401 invalid_token) and its refresh fails (invalid_grant).
 *
 * And the other way: Beaver as the OAuth client of an OAuth-protected MCP server the test starts from
 * the MCP SDK's own pieces (test/support/oauth-mcp-server.ts). A workspace configures it with
 * `auth: "oauth"`; an admin presses Connect in the console (Chromium), approves on the server's page,
 * the browser comes back to the console's callback, the server shows `connected`, and the scripted
 * model's agent calls its tool in a run; once the server forgets the token, it shows
 * `needs_authorization`.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { createServer, type Server } from "node:http";
import type { BrowserContext } from "playwright-core";
import { launchChromium, type Chromium } from "../support/chromium.ts";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { auth, UnauthorizedError, type OAuthClientProvider } from "@modelcontextprotocol/sdk/client/auth.js";
import type { OAuthClientInformationMixed, OAuthClientMetadata, OAuthTokens } from "@modelcontextprotocol/sdk/shared/auth.js";
import { api, baseUrl, newWorkspace, waitFor } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";
import { startOAuthMcpServer, type OAuthMcpServer } from "../support/oauth-mcp-server.ts";

const models = scriptedModelClient(inject("modelUrl"));

/** An assistant's side of the flow, kept in memory as the SDK's interface asks. */
class TestAssistant implements OAuthClientProvider {
  client?: OAuthClientInformationMixed;
  saved?: OAuthTokens;
  verifier = "";
  authorizationUrl?: URL;
  constructor(readonly redirect: string) {}
  get redirectUrl() {
    return this.redirect;
  }
  get clientMetadata(): OAuthClientMetadata {
    return {
      client_name: "SDK assistant",
      redirect_uris: [this.redirect],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    };
  }
  clientInformation() {
    return this.client;
  }
  saveClientInformation(info: OAuthClientInformationMixed) {
    this.client = info;
  }
  tokens() {
    return this.saved;
  }
  saveTokens(tokens: OAuthTokens) {
    this.saved = tokens;
  }
  redirectToAuthorization(url: URL) {
    this.authorizationUrl = url;
  }
  saveCodeVerifier(verifier: string) {
    this.verifier = verifier;
  }
  codeVerifier() {
    return this.verifier;
  }
}

let callback: Server;
let callbackUrl: string;
const codes: URLSearchParams[] = [];
let browser: Chromium;
let context: BrowserContext;

beforeAll(async () => {
  // The assistant's loopback redirect target: records what the authorization server sent back.
  callback = createServer((req, res) => {
    const url = new URL(req.url ?? "/", "http://127.0.0.1");
    if (url.pathname === "/callback") codes.push(url.searchParams); // not the browser's /favicon.ico
    res.writeHead(200, { "Content-Type": "text/plain" }).end("You can close this window.");
  });
  await new Promise<void>((ok) => callback.listen(0, "127.0.0.1", ok));
  const address = callback.address();
  callbackUrl = `http://127.0.0.1:${typeof address === "object" && address ? address.port : 0}/callback`;
  browser = await launchChromium();
  context = browser.context;
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await new Promise((ok) => {
    callback?.close(ok);
    callback?.closeAllConnections();
  });
});

async function connect(assistant: TestAssistant): Promise<Client> {
  const client = new Client({ name: "sdk-assistant", version: "1.0.0" });
  await client.connect(new StreamableHTTPClientTransport(new URL(`${baseUrl()}/mcp`), { authProvider: assistant }));
  return client;
}

describe("e2e: an MCP client connects to Beaver's /mcp with OAuth from nothing", () => {
  it("discovers, registers, is approved in the console, calls send_message, refreshes, and is refused after revocation", async () => {
    const model = `oauth-e2e:${Date.now()}`;
    await models.script(model, [{ text: "Hello, assistant." }]);
    const ws = await newWorkspace();
    const put = await api("PUT", "/api/config", {
      token: ws.token,
      body: { model: { provider: "openai-compatible", id: model, base_url: `${inject("modelUrl")}/v1` } },
    });
    expect(put.status).toBe(200);
    const memberRes = await api("POST", "/api/tokens", { token: ws.token, body: { name: "member", scopes: ["member"] } });
    const member = ((await memberRes.json()) as { token: string }).token;

    // 1. From nothing: the first connection is challenged; the SDK discovers and registers, then asks for the browser.
    const assistant = new TestAssistant(callbackUrl);
    await expect(connect(assistant)).rejects.toBeInstanceOf(UnauthorizedError);
    expect(assistant.client?.client_id).toBeTruthy();
    const authorizationUrl = assistant.authorizationUrl!;
    expect(authorizationUrl.origin + authorizationUrl.pathname).toBe(`${baseUrl()}/oauth/authorize`);
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizationUrl.searchParams.get("resource")).toBe(`${baseUrl()}/mcp`);

    // 2. The console's authorization page, signed in as a member, in Chromium.
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/`);
    await page.evaluate((t) => sessionStorage.setItem("beaver.token", t), member);
    await page.goto(authorizationUrl.href);
    await page.getByTestId("oauth-client").waitFor();
    expect(await page.getByTestId("oauth-client").textContent()).toBe("SDK assistant");
    await page.locator('input[name="scope-member"]').check();
    await Promise.all([page.waitForURL(/\/callback\?/), page.getByRole("button", { name: "Approve" }).click()]);
    const back = codes.at(-1)!;
    expect(back.get("state")).toBe(authorizationUrl.searchParams.get("state"));
    const code = back.get("code")!;
    await page.close();

    // 3. Code → tokens (PKCE), then tools/list and send_message on the grant.
    expect(await auth(assistant, { serverUrl: `${baseUrl()}/mcp`, authorizationCode: code })).toBe("AUTHORIZED");
    expect(assistant.saved?.scope?.split(" ").sort()).toEqual(["member", "read"]);
    const client = await connect(assistant);
    const tools = (await client.listTools()).tools.map((t) => t.name);
    expect(tools).toContain("send_message");
    const sent = await client.callTool({ name: "send_message", arguments: { content: "Hi Beaver", title: "From the assistant" } });
    expect(sent.isError).toBeFalsy();
    expect(JSON.parse((sent.content as { text: string }[])[0]!.text)).toMatchObject({
      status: "completed",
      output_text: "Hello, assistant.",
    });
    await client.close();

    // 4. Refresh: the SDK exchanges its refresh token for a new access token, which works.
    const before = assistant.saved!.access_token;
    expect(await auth(assistant, { serverUrl: `${baseUrl()}/mcp` })).toBe("AUTHORIZED");
    expect(assistant.saved!.access_token).not.toBe(before);
    const again = await connect(assistant);
    expect((await again.listTools()).tools.length).toBeGreaterThan(0);
    await again.close();

    // 5. Revoked in the console's API: refused, and the refresh fails too (the SDK falls back to asking the browser).
    const grants = (await (await api("GET", "/api/oauth/grants", { token: member })).json()) as {
      grants: { id: string; client_name: string }[];
    };
    expect(grants.grants.map((g) => g.client_name)).toEqual(["SDK assistant"]);
    expect((await api("DELETE", `/api/oauth/grants/${grants.grants[0]!.id}`, { token: member })).status).toBe(200);
    const raw = await fetch(`${baseUrl()}/mcp`, {
      method: "POST",
      headers: {
        Authorization: `Bearer ${assistant.saved!.access_token}`,
        "Content-Type": "application/json",
        Accept: "application/json, text/event-stream",
      },
      body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
    });
    expect(raw.status).toBe(401);
    expect(raw.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    // The SDK's automatic refresh is refused with invalid_grant ("Grant not found").
    await expect(connect(assistant)).rejects.toThrow(/grant/i);
  });
});

type ServerStatus = {
  name: string;
  auth: string | null;
  status: string;
  error: { code: string; message: string } | null;
  tools: { name: string }[];
};
const serverStatus = async (token: string, refresh = false) =>
  ((await (await api("GET", `/api/mcp/servers${refresh ? "?refresh=true" : ""}`, { token })).json()) as { servers: ServerStatus[] })
    .servers[0]!;

describe("e2e: Beaver connects to an OAuth-protected MCP server built from the SDK's pieces", () => {
  let hosted: OAuthMcpServer;
  beforeAll(async () => {
    hosted = await startOAuthMcpServer();
  });
  afterAll(async () => {
    await hosted?.stop();
  });

  it("Connect in the console, approve on the server's page, a run calls its tool, and a revoked token shows needs_authorization", async () => {
    const model = `oauth-client-e2e:${Date.now()}`;
    await models.script(model, [{ tool_calls: [{ name: "mcp__tickets__lookup", arguments: { id: 42 } }] }, { text: "looked it up" }]);
    const ws = await newWorkspace();
    const put = await api("PUT", "/api/config", {
      token: ws.token,
      body: {
        model: { provider: "openai-compatible", id: model, base_url: `${inject("modelUrl")}/v1` },
        mcp: { servers: [{ name: "tickets", url: hosted.url, auth: "oauth" }] },
      },
    });
    expect(put.status).toBe(200);
    expect(await serverStatus(ws.token)).toMatchObject({ auth: "oauth", status: "needs_authorization" });

    // The admin presses Connect in the console: discovery and registration, then the server's own page.
    const page = await context.newPage();
    await page.goto(`${baseUrl()}/`);
    await page.evaluate((t) => sessionStorage.setItem("beaver.token", t), ws.token);
    await page.goto(`${baseUrl()}/mcp-servers`);
    await Promise.all([
      page.waitForURL((url) => url.href.startsWith(new URL("/authorize", hosted.url).href)),
      page.getByTestId("mcp-connect").click(),
    ]);
    const authorizeUrl = new URL(page.url());
    expect(authorizeUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect(authorizeUrl.searchParams.get("resource")).toBe(hosted.url);
    expect(authorizeUrl.searchParams.get("redirect_uri")).toBe(`${baseUrl()}/mcp-servers/callback`);
    expect(await page.locator("#client").textContent()).toBe("Beaver");
    // Approve: the server sends the browser back to the console's callback, which finishes the exchange.
    await page.getByRole("button", { name: "Approve" }).click();
    const connected = await waitFor("the server to show connected", async () => {
      const s = await serverStatus(ws.token);
      return s.status === "connected" ? s : undefined;
    });
    expect(connected.tools.map((t) => t.name)).toEqual(["mcp__tickets__lookup"]);
    await page.getByTestId("mcp-server").waitFor();
    await page.close();

    // The agent calls the tool with Beaver's token and the model reads its result.
    const session = (await (await api("POST", "/api/sessions", { token: ws.token, body: {} })).json()) as { id: string };
    const sent = await api("POST", `/api/sessions/${session.id}/messages`, { token: ws.token, body: { content: "look up ticket 42" } });
    expect(sent.status).toBe(202);
    const { run_id } = (await sent.json()) as { run_id: string };
    const done = await waitFor("the run to end", async () => {
      const run = (await (await api("GET", `/api/sessions/${session.id}/runs/${run_id}`, { token: ws.token })).json()) as {
        status: string;
        result?: { output_text: string };
      };
      return run.status === "queued" || run.status === "running" ? undefined : run;
    });
    expect(done).toMatchObject({ status: "completed", result: { output_text: "looked it up" } });
    expect(hosted.calls()).toBe(1);
    const requests = await models.requests(model);
    const toolMessages = (requests[1]!.body.messages as { role: string; content?: unknown }[]).filter((m) => m.role === "tool");
    expect(JSON.stringify(toolMessages)).toMatch(/ticket 42: fix the dam \(for client [0-9a-f-]{36}\)/);

    // The authorization server revokes the token: Beaver shows needs_authorization rather than failing runs opaquely.
    hosted.revokeAll();
    const lapsed = await serverStatus(ws.token, true);
    expect(lapsed.error?.message).toContain("needs authorization");
    expect(lapsed).toMatchObject({ status: "needs_authorization", error: { code: "needs_authorization" } });
  });
});
