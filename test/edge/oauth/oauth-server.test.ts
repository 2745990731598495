/**
 * Beaver as an OAuth 2.1 protected MCP server (src/edge/oauth/, src/edge/http/routes/oauth.ts), through
 * the Worker's own fetch with real KV, D1 and Durable Objects: metadata (RFC 9728, RFC 8414), dynamic
 * registration (RFC 7591), the console's approval with PKCE (RFC 7636), the MCP SDK client on the
 * issued token, refresh, revocation (RFC 7009 and the console's API) — and each bad input the issue
 * names refused with the RFC's error, nothing granted half-way. Static API tokens keep working.
 */
import { afterEach, describe, expect, it } from "vitest";
import { env, exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { ADMIN, call, json, newWorkspace } from "../../support/api.ts";
import { ScriptedModel, scriptedWorkspace, text } from "../../support/sessions.ts";

const ORIGIN = "https://beaver.test";
const REDIRECT = "http://127.0.0.1:33418/callback";

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

const worker = (input: string, init?: RequestInit) => exports.default.fetch(new Request(new URL(input, ORIGIN), init));

function b64url(bytes: ArrayBuffer | Uint8Array): string {
  return btoa(String.fromCharCode(...new Uint8Array(bytes)))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
}

async function pkce(): Promise<{ verifier: string; challenge: string }> {
  const verifier = b64url(crypto.getRandomValues(new Uint8Array(32)));
  const challenge = b64url(await crypto.subtle.digest("SHA-256", new TextEncoder().encode(verifier)));
  return { verifier, challenge };
}

async function register(redirectUris = [REDIRECT]): Promise<string> {
  const res = await worker("/oauth/register", {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({ client_name: "Test assistant", redirect_uris: redirectUris, token_endpoint_auth_method: "none" }),
  });
  expect(res.status).toBe(201);
  return (await json<{ client_id: string }>(res)).client_id;
}

function authQuery(clientId: string, challenge: string | null, extra: Record<string, string> = {}): string {
  const q = new URLSearchParams({ response_type: "code", client_id: clientId, redirect_uri: REDIRECT, state: "st-1", ...extra });
  if (challenge) {
    q.set("code_challenge", challenge);
    q.set("code_challenge_method", "S256");
  }
  return q.toString();
}

const form = (fields: Record<string, string>) => ({
  method: "POST",
  headers: { "Content-Type": "application/x-www-form-urlencoded" },
  body: new URLSearchParams(fields).toString(),
});

interface Tokens {
  access_token: string;
  refresh_token: string;
  scope: string;
  token_type: string;
}

/** Approves in the console's name and exchanges the code: a full authorization-code flow with PKCE. */
async function authorize(memberToken: string, scopes: string[], workspaceId?: string) {
  const clientId = await register();
  const { verifier, challenge } = await pkce();
  const query = authQuery(clientId, challenge);
  const approved = await call("POST", "/api/oauth/authorize", {
    token: memberToken,
    body: { query, scopes, ...(workspaceId ? { workspace_id: workspaceId } : {}) },
  });
  expect(approved.status).toBe(200);
  const redirect = new URL((await json<{ redirect_to: string }>(approved)).redirect_to);
  expect(redirect.origin + redirect.pathname).toBe(REDIRECT);
  expect(redirect.searchParams.get("state")).toBe("st-1");
  const code = redirect.searchParams.get("code")!;
  const res = await worker(
    "/oauth/token",
    form({ grant_type: "authorization_code", code, redirect_uri: REDIRECT, client_id: clientId, code_verifier: verifier }),
  );
  expect(res.status).toBe(200);
  return { clientId, code, verifier, tokens: await json<Tokens>(res) };
}

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL(`${ORIGIN}/mcp`), {
    fetch: (input, init) => exports.default.fetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

const mcpPing = (token: string) =>
  worker("/mcp", {
    method: "POST",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json", Accept: "application/json, text/event-stream" },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method: "ping" }),
  });

describe("OAuth for /mcp", () => {
  it("publishes protected-resource and authorization-server metadata, and challenges a request without a token", async () => {
    const unauth = await worker("/mcp", { method: "POST", body: "{}" });
    expect(unauth.status).toBe(401);
    const challenge = unauth.headers.get("WWW-Authenticate") ?? "";
    expect(challenge).toMatch(/^Bearer /);
    const prmUrl = /resource_metadata="([^"]+)"/.exec(challenge)?.[1];
    expect(prmUrl).toBe(`${ORIGIN}/.well-known/oauth-protected-resource/mcp`);

    const prm = await json<{ resource: string; authorization_servers: string[] }>(await worker(prmUrl!));
    expect(prm.resource).toBe(`${ORIGIN}/mcp`);
    expect(prm.authorization_servers).toEqual([ORIGIN]);

    const as = await json<Record<string, unknown>>(await worker("/.well-known/oauth-authorization-server"));
    expect(as).toMatchObject({
      issuer: ORIGIN,
      authorization_endpoint: `${ORIGIN}/oauth/authorize`,
      token_endpoint: `${ORIGIN}/oauth/token`,
      registration_endpoint: `${ORIGIN}/oauth/register`,
      code_challenge_methods_supported: ["S256"],
      scopes_supported: ["read", "member"],
    });
    expect(as.grant_types_supported).toEqual(expect.arrayContaining(["authorization_code", "refresh_token"]));
    expect(typeof as.revocation_endpoint).toBe("string");
  });

  it("runs the whole flow: registration, the console's approval, PKCE, tools on the grant's workspace, refresh and revocation", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("Hello from the grant.")]));
    const consent = await call("POST", "/api/oauth/requests", {
      token: ws.member,
      body: { query: authQuery(await register(), "x".repeat(43)) },
    });
    expect(consent.status).toBe(200);
    expect(await json(consent)).toMatchObject({
      client_name: "Test assistant",
      redirect_host: "127.0.0.1",
      redirect_is_loopback: true,
      grantable_scopes: ["read", "member"],
      workspaces: [{ id: ws.id }],
    });

    const { clientId, tokens } = await authorize(ws.member, ["member"]);
    expect(tokens.token_type.toLowerCase()).toBe("bearer");
    expect(tokens.scope).toBe("member");

    const client = await connect(tokens.access_token);
    expect((await client.listTools()).tools.map((t) => t.name)).toContain("send_message");
    const sent = await client.callTool({ name: "send_message", arguments: { content: "Hi", title: "Via OAuth" } });
    expect(sent.isError).toBeFalsy();
    const result = JSON.parse((sent.content as { text: string }[])[0]!.text) as { session_id: string; output_text: string };
    expect(result.output_text).toBe("Hello from the grant.");
    // The session landed in the grant's workspace.
    expect((await call("GET", `/api/sessions/${result.session_id}`, { token: ws.read })).status).toBe(200);

    // The console lists the grant; refresh gives a new working access token.
    const listed = await json<{ grants: { id: string; client_id: string; scopes: string[] }[] }>(
      await call("GET", "/api/oauth/grants", { token: ws.member }),
    );
    expect(listed.grants).toEqual([expect.objectContaining({ client_id: clientId, scopes: ["member"], client_name: "Test assistant" })]);
    const refreshed = await worker(
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: tokens.refresh_token, client_id: clientId }),
    );
    expect(refreshed.status).toBe(200);
    const next = await json<Tokens>(refreshed);
    expect(next.access_token).not.toBe(tokens.access_token);
    expect((await mcpPing(next.access_token)).status).toBe(200);

    // Revoked in the console: both access tokens and the refresh token stop at once.
    const grantId = listed.grants[0]!.id;
    expect((await call("DELETE", `/api/oauth/grants/${grantId}`, { token: ws.member })).status).toBe(200);
    for (const t of [tokens.access_token, next.access_token]) {
      const refused = await mcpPing(t);
      expect(refused.status).toBe(401);
      expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    }
    const again = await worker(
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: next.refresh_token, client_id: clientId }),
    );
    expect(again.status).toBe(400);
    expect(await json(again)).toMatchObject({ error: "invalid_grant" });
    expect((await json<{ grants: unknown[] }>(await call("GET", "/api/oauth/grants", { token: ws.member }))).grants).toEqual([]);
  });

  it("a grant lasts only as long as the API token that approved it", async () => {
    const ws = await newWorkspace();
    const memberToken = async (name: string) =>
      json<{ id: string; token: string }>(await call("POST", "/api/tokens", { token: ws.admin, body: { name, scopes: ["member"] } }));
    const leaver = await memberToken("leaver");
    const stays = await authorize(ws.member, ["member"]);
    const gone = await authorize(leaver.token, ["member"]);
    expect((await mcpPing(gone.tokens.access_token)).status).toBe(200);

    // Revoked through the API: its grant is revoked with it (refresh refused, no longer listed); the other member's stays.
    expect((await call("DELETE", `/api/tokens/${leaver.id}`, { token: ws.admin })).status).toBe(200);
    const refused = await mcpPing(gone.tokens.access_token);
    expect(refused.status).toBe(401);
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    const refresh = await worker(
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: gone.tokens.refresh_token, client_id: gone.clientId }),
    );
    expect(await json(refresh)).toMatchObject({ error: "invalid_grant" });
    const listed = await json<{ grants: { client_id: string }[] }>(await call("GET", "/api/oauth/grants", { token: ws.member }));
    expect(listed.grants.map((g) => g.client_id)).toEqual([stays.clientId]);
    expect((await mcpPing(stays.tokens.access_token)).status).toBe(200);

    // Revoked without passing through this route's cleanup (as a revocation that failed half-way, or a
    // grant approved while it ran would be): the grant is refused on its next request all the same.
    const late = await memberToken("late");
    const approved = await authorize(late.token, ["member"]);
    await env.DB.prepare("UPDATE api_tokens SET revoked_at = ?1 WHERE id = ?2").bind(Date.now(), late.id).run();
    const lapsed = await mcpPing(approved.tokens.access_token);
    expect(lapsed.status).toBe(401);
    expect(lapsed.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    // Listing the grants ends it for good: it is not listed, and its refresh token is refused.
    const after = await json<{ grants: { client_id: string }[] }>(await call("GET", "/api/oauth/grants", { token: ws.member }));
    expect(after.grants.map((g) => g.client_id)).toEqual([stays.clientId]);
    const refreshLate = await worker(
      "/oauth/token",
      form({ grant_type: "refresh_token", refresh_token: approved.tokens.refresh_token, client_id: approved.clientId }),
    );
    expect(await json(refreshLate)).toMatchObject({ error: "invalid_grant" });
  });

  it("grants read only when asked, and a read grant never sees send_message", async () => {
    const ws = await newWorkspace();
    const { tokens } = await authorize(ws.read, ["read"]);
    const client = await connect(tokens.access_token);
    const names = (await client.listTools()).tools.map((t) => t.name);
    expect(names).toContain("list_sessions");
    expect(names).not.toContain("send_message");
  });

  it("refuses scopes beyond the member's own, unknown scopes, and another workspace — granting nothing", async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const clientId = await register();
    const { challenge } = await pkce();
    const query = authQuery(clientId, challenge);

    const beyond = await call("POST", "/api/oauth/authorize", { token: ws.read, body: { query, scopes: ["member"] } });
    expect(beyond.status).toBe(403);
    const elsewhere = await call("POST", "/api/oauth/authorize", {
      token: ws.member,
      body: { query, scopes: ["read"], workspace_id: other.id },
    });
    expect(elsewhere.status).toBe(403);
    const admin = await call("POST", "/api/oauth/authorize", { token: ws.admin, body: { query, scopes: ["admin"] } });
    expect(admin.status).toBe(400);

    const unknown = await call("POST", "/api/oauth/requests", {
      token: ws.member,
      body: { query: authQuery(clientId, challenge, { scope: "admin" }) },
    });
    expect(unknown.status).toBe(400);
    const details = (await json<{ error: { details: { oauth_error: string; redirect_to: string } } }>(unknown)).error.details;
    expect(details.oauth_error).toBe("invalid_scope");
    expect(new URL(details.redirect_to).searchParams.get("error")).toBe("invalid_scope");
    expect(new URL(details.redirect_to).searchParams.get("state")).toBe("st-1");

    expect((await json<{ grants: unknown[] }>(await call("GET", "/api/oauth/grants", { token: ws.member }))).grants).toEqual([]);
    expect((await json<{ grants: unknown[] }>(await call("GET", "/api/oauth/grants", { token: other.member }))).grants).toEqual([]);
  });

  it("the bootstrap admin may grant another workspace; a grant's token reaches only its workspace", async () => {
    const a = await scriptedWorkspace(new ScriptedModel([text("in b")]));
    const b = await newWorkspace();
    const { tokens } = await authorize(ADMIN, ["member"], b.id);
    const onB = await connect(tokens.access_token);
    const sent = JSON.parse(((await onB.callTool({ name: "list_sessions", arguments: {} })).content as { text: string }[])[0]!.text) as {
      sessions: unknown[];
    };
    expect(sent.sessions).toEqual([]);
    // A session of workspace a is a 404 through b's grant.
    const created = await json<{ id: string }>(await call("POST", "/api/sessions", { token: a.member, body: {} }));
    const foreign = await onB.callTool({ name: "read_transcript", arguments: { session_id: created.id } });
    expect(foreign.isError).toBe(true);
    expect((foreign.content as { text: string }[])[0]!.text).toContain("404");
    // Grants are per workspace: a cannot see or revoke b's grant.
    const bGrants = await json<{ grants: { id: string }[] }>(await call("GET", "/api/oauth/grants", { token: b.member }));
    expect(bGrants.grants).toHaveLength(1);
    expect((await call("DELETE", `/api/oauth/grants/${bGrants.grants[0]!.id}`, { token: a.member })).status).toBe(404);
    expect((await mcpPing(tokens.access_token)).status).toBe(200);
  });

  it("refuses a wrong redirect URI without redirecting, and a missing PKCE challenge", async () => {
    const ws = await newWorkspace();
    const clientId = await register();
    const { challenge } = await pkce();
    const wrong = await call("POST", "/api/oauth/requests", {
      token: ws.member,
      body: { query: authQuery(clientId, challenge, { redirect_uri: "https://evil.example/cb" }) },
    });
    expect(wrong.status).toBe(400);
    const details = (await json<{ error: { details: Record<string, unknown> } }>(wrong)).error.details;
    expect(details.oauth_error).toBe("invalid_request");
    expect(details.redirect_to).toBeUndefined();

    const unknownClient = await call("POST", "/api/oauth/requests", { token: ws.member, body: { query: authQuery("nope", challenge) } });
    expect(unknownClient.status).toBe(400);

    const noPkce = await call("POST", "/api/oauth/authorize", {
      token: ws.member,
      body: { query: authQuery(clientId, null), scopes: ["read"] },
    });
    expect(noPkce.status).toBe(400);
    expect((await json<{ error: { details: Record<string, unknown> } }>(noPkce)).error.details.oauth_error).toBe("invalid_request");
  });

  it("refuses a wrong or missing code verifier and a replayed code (invalid_grant), and revokes through RFC 7009", async () => {
    const ws = await newWorkspace();
    const clientId = await register();
    const { verifier, challenge } = await pkce();
    const approve = async () => {
      const res = await call("POST", "/api/oauth/authorize", {
        token: ws.member,
        body: { query: authQuery(clientId, challenge), scopes: ["read"] },
      });
      return new URL((await json<{ redirect_to: string }>(res)).redirect_to).searchParams.get("code")!;
    };
    const exchange = (code: string, codeVerifier?: string) =>
      worker(
        "/oauth/token",
        form({
          grant_type: "authorization_code",
          code,
          redirect_uri: REDIRECT,
          client_id: clientId,
          ...(codeVerifier === undefined ? {} : { code_verifier: codeVerifier }),
        }),
      );

    const badVerifier = await exchange(await approve(), (await pkce()).verifier);
    expect(badVerifier.status).toBe(400);
    expect(await json(badVerifier)).toMatchObject({ error: "invalid_grant" });
    const missing = await exchange(await approve());
    expect(missing.status).toBe(400);
    expect(["invalid_grant", "invalid_request"]).toContain((await json<{ error: string }>(missing)).error);

    const code = await approve();
    const first = await exchange(code, verifier);
    expect(first.status).toBe(200);
    const tokens = await json<Tokens>(first);
    expect((await mcpPing(tokens.access_token)).status).toBe(200);
    const replay = await exchange(code, verifier);
    expect(replay.status).toBe(400);
    expect(await json(replay)).toMatchObject({ error: "invalid_grant" });
    // A replayed code revokes what it issued (RFC 6749 §4.1.2; OAuth 2.1 §4.1.3).
    expect((await mcpPing(tokens.access_token)).status).toBe(401);

    const wrongRedirect = await worker(
      "/oauth/token",
      form({
        grant_type: "authorization_code",
        code: await approve(),
        redirect_uri: "http://127.0.0.1:1/other",
        client_id: clientId,
        code_verifier: verifier,
      }),
    );
    expect(wrongRedirect.status).toBe(400);
    expect(await json(wrongRedirect)).toMatchObject({ error: "invalid_grant" });

    const as = await json<{ revocation_endpoint: string }>(await worker("/.well-known/oauth-authorization-server"));
    const fresh = await json<Tokens>(await exchange(await approve(), verifier));
    expect((await mcpPing(fresh.access_token)).status).toBe(200);
    const revoked = await worker(as.revocation_endpoint, form({ token: fresh.refresh_token, client_id: clientId }));
    expect(revoked.status).toBe(200);
    expect((await mcpPing(fresh.access_token)).status).toBe(401);
  });

  it("refuses an expired access token, and declining redirects with access_denied", async () => {
    const ws = await newWorkspace();
    const { tokens } = await authorize(ws.member, ["read"]);
    const kv = (env as unknown as { OAUTH_KV: KVNamespace }).OAUTH_KV;
    const grantId = tokens.access_token.split(":")[1]!;
    const keys = await kv.list({ prefix: `token:${ws.id}:${grantId}:` });
    expect(keys.keys.length).toBeGreaterThan(0);
    for (const { name } of keys.keys) {
      const record = await kv.get<Record<string, unknown>>(name, "json");
      await kv.put(name, JSON.stringify({ ...record, expiresAt: Math.floor(Date.now() / 1000) - 10 }));
    }
    const expired = await mcpPing(tokens.access_token);
    expect(expired.status).toBe(401);
    expect(expired.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');

    const { challenge } = await pkce();
    const denied = await call("POST", "/api/oauth/deny", { token: ws.member, body: { query: authQuery(await register(), challenge) } });
    const to = new URL((await json<{ redirect_to: string }>(denied)).redirect_to);
    expect(to.searchParams.get("error")).toBe("access_denied");
    expect(to.searchParams.get("state")).toBe("st-1");
  });

  it("keeps static API tokens working on /mcp and refuses unknown ones with a challenge", async () => {
    const ws = await newWorkspace();
    expect((await mcpPing(ws.read)).status).toBe(200);
    expect((await mcpPing(ADMIN)).status).toBe(200);
    const unknown = await mcpPing("bvr_not-a-token");
    expect(unknown.status).toBe(401);
    expect(unknown.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
  });
});
