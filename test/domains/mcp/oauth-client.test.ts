/**
 * Beaver as an OAuth client of an OAuth-protected MCP server (src/domains/mcp/oauth-client.ts,
 * src/edge/http/routes/mcp-oauth.ts). The protected server is Beaver's own `/mcp` (the OAuth 2.1
 * provider of src/edge/oauth/) under a second host name, `hosted.test` (the egress policy refuses
 * Beaver's own host), reached through the outbound fetch every tenant-chosen URL takes, so
 * both halves meet here with real KV, D1 and Durable Objects: workspace A configures `auth: "oauth"`,
 * sees `needs_authorization`, Connects (discovery, registration, PKCE through the MCP SDK's client
 * auth), a member of workspace B approves, the callback exchanges the code, and A's agent calls a
 * tool there; revoking B's grant turns A's server back to `needs_authorization`. A `personal` server
 * keeps tokens per member: each member connects their own, and a run uses its sender's.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env, exports } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { MessageEvent, PersistentEvent } from "../../../src/runtime/session/events.ts";
import { clearDiscoveryCache } from "../../../src/domains/mcp/discovery.ts";
import { needsRefresh } from "../../../src/domains/mcp/oauth-client.ts";
import { setOutboundFetch } from "../../support/test-services.ts";
import { routeHosts } from "../../support/fake-mcp.ts";
import { ScriptedModel, doEvents, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";
import { call, json, newWorkspace } from "../../support/api.ts";
import { delegateCall, delegateResults } from "../../support/delegation.ts";

beforeEach(() => {
  clearDiscoveryCache();
  setOutboundFetch(routeHosts({ "hosted.test": (input, init) => exports.default.fetch(new Request(input, init)) }));
});
afterEach(() => setOutboundFetch(null));

type Status = {
  servers: {
    name: string;
    auth: string | null;
    personal: boolean;
    status: string;
    error: { code: string } | null;
    tools: { name: string }[];
  }[];
};
/** A member of the hosted server's workspace (`token`) approves `url` on its authorization page: the code and state the browser brings back. */
async function approveHosted(url: URL, token: string, scopes: string[]): Promise<{ code: string; state: string }> {
  const approved = await exports.default.fetch(
    new Request("https://hosted.test/api/oauth/authorize", {
      method: "POST",
      headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/json" },
      body: JSON.stringify({ query: url.search.slice(1), scopes }),
    }),
  );
  expect(approved.status, await approved.clone().text()).toBe(200);
  const back = new URL((await json<{ redirect_to: string }>(approved)).redirect_to);
  return { code: back.searchParams.get("code")!, state: back.searchParams.get("state")! };
}

const statusOf = async (token: string, refresh = false) =>
  json<Status>(await call("GET", `/api/mcp/servers${refresh ? "?refresh=true" : ""}`, { token }));

describe("auth: oauth MCP servers", () => {
  it("needs authorization, connects through the console's flow, runs a tool there, and lapses when the grant is revoked", async () => {
    const main = new ScriptedModel([toolCalls({ id: "c1", name: "mcp__hosted__list_sessions", args: {} }), text("done")]);
    const a = await scriptedWorkspace(main);
    const b = await newWorkspace();
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: a.admin }));
    const put = await call("PUT", "/api/config", {
      token: a.admin,
      body: { ...config, mcp: { servers: [{ name: "hosted", url: "https://hosted.test/mcp", auth: "oauth" }] } },
    });
    expect(put.status, await put.clone().text()).toBe(200);

    const before = await statusOf(a.admin);
    expect(before.servers[0]).toMatchObject({
      name: "hosted",
      auth: "oauth",
      status: "needs_authorization",
      error: { code: "needs_authorization" },
    });

    // Connect: the SDK discovers the server's authorization server, registers Beaver and asks for a browser.
    const connect = await call("POST", "/api/mcp/servers/hosted/connect", { token: a.admin });
    expect(connect.status).toBe(200);
    const authorizationUrl = new URL((await json<{ authorization_url: string }>(connect)).authorization_url);
    expect(authorizationUrl.pathname).toBe("/oauth/authorize");
    expect(authorizationUrl.searchParams.get("redirect_uri")).toBe("https://beaver.test/mcp-servers/callback");
    expect(authorizationUrl.searchParams.get("code_challenge_method")).toBe("S256");
    expect((await call("POST", "/api/mcp/servers/hosted/connect", { token: a.member })).status).toBe(403);

    // The hosted server's user (a member of b) approves; the browser comes back to a's console callback.
    expect(authorizationUrl.origin).toBe("https://hosted.test");
    const { code, state } = await approveHosted(authorizationUrl, b.member, ["read"]);
    // Another workspace cannot finish a's authorization.
    expect((await call("POST", "/api/mcp/oauth/callback", { token: b.admin, body: { code, state } })).status).toBe(404);
    const done = await call("POST", "/api/mcp/oauth/callback", { token: a.admin, body: { code, state } });
    expect(done.status).toBe(200);
    // The state works once.
    expect((await call("POST", "/api/mcp/oauth/callback", { token: a.admin, body: { code, state } })).status).toBe(404);

    const after = await statusOf(a.admin);
    expect(after.servers[0]).toMatchObject({ status: "connected", error: null });
    expect(after.servers[0]!.tools.map((t) => t.name)).toContain("mcp__hosted__list_sessions");
    expect(after.servers[0]!.tools.map((t) => t.name)).not.toContain("mcp__hosted__send_message");

    // a's agent calls the tool on the hosted server: it answers with b's sessions (none).
    const session = await createSession(env, { workspaceId: a.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: a.id, content: "what sessions are there?" });
    expect(await waitForRun(env, session.id, run_id, 20_000)).toMatchObject({ status: "completed", output_text: "done" });
    const events: PersistentEvent[] = await doEvents(session.id, a.id);
    const results = events
      .filter((e): e is MessageEvent => e.type === "message")
      .map((e) => e.message)
      .filter((m) => m.role === "tool_result");
    expect(results[0]).toMatchObject({ tool_call_id: "c1", is_error: false });
    expect(JSON.stringify(results[0])).toContain("sessions");

    // b revokes the grant: a's server shows needs_authorization instead of failing runs opaquely.
    const grants = await json<{ grants: { id: string; client_name: string }[] }>(
      await call("GET", "/api/oauth/grants", { token: b.member }),
    );
    expect(grants.grants.map((g) => g.client_name)).toEqual(["Beaver"]);
    expect((await call("DELETE", `/api/oauth/grants/${grants.grants[0]!.id}`, { token: b.member })).status).toBe(200);
    const lapsed = await statusOf(a.admin, true);
    expect(lapsed.servers[0]).toMatchObject({ status: "needs_authorization", error: { code: "needs_authorization" } });
  });

  it("a personal server holds tokens per member: each connects their own, runs use the sender's", async () => {
    const main = new ScriptedModel([
      toolCalls({ id: "m1", name: "mcp__hosted__list_sessions", args: {} }),
      text("done"),
      toolCalls({ id: "m2", name: "mcp__hosted__list_sessions", args: {} }),
      text("done"),
      // A delegated child of the member's run works on their behalf: their tokens (sent_by is inherited).
      delegateCall("d1", [{ task: "list the sessions" }]),
      toolCalls({ id: "c1", name: "mcp__hosted__list_sessions", args: {} }),
      text("child done"),
      text("done"),
    ]);
    const a = await scriptedWorkspace(main);
    const b = await newWorkspace();
    const other = (
      await json<{ token: string }>(await call("POST", "/api/tokens", { token: a.admin, body: { name: "m2", scopes: ["member"] } }))
    ).token;
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: a.admin }));
    const server = { name: "hosted", url: "https://hosted.test/mcp", auth: "oauth", personal: true };
    const refused = await call("PUT", "/api/config", {
      token: a.admin,
      body: { ...config, mcp: { servers: [{ ...server, auth: undefined }] } },
    });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("personal");
    expect((await call("PUT", "/api/config", { token: a.admin, body: { ...config, mcp: { servers: [server] } } })).status).toBe(200);
    expect((await statusOf(a.member)).servers[0]).toMatchObject({ personal: true, status: "needs_authorization" });

    // A member (not only an admin) connects their own account; the hosted side's user approves.
    const connect = await call("POST", "/api/mcp/servers/hosted/connect", { token: a.member });
    expect(connect.status).toBe(200);
    const authorizationUrl = new URL((await json<{ authorization_url: string }>(connect)).authorization_url);
    const body = await approveHosted(authorizationUrl, b.member, ["read"]);
    // Only the member who started it finishes it: another member, even an admin, does not find it.
    expect((await call("POST", "/api/mcp/oauth/callback", { token: other, body })).status).toBe(404);
    expect((await call("POST", "/api/mcp/oauth/callback", { token: a.admin, body })).status).toBe(404);
    expect((await call("POST", "/api/mcp/oauth/callback", { token: a.member, body })).status).toBe(200);

    expect((await statusOf(a.member)).servers[0]).toMatchObject({ status: "connected" });
    expect((await statusOf(other)).servers[0]).toMatchObject({ status: "needs_authorization", error: { code: "needs_authorization" } });
    expect((await statusOf(a.admin)).servers[0]).toMatchObject({ status: "needs_authorization" });

    // A run uses the tokens of whoever sent the message: the connected member's run gets the tool, the other's does not.
    const resultOf = async (token: string, id: string) => {
      const session = await json<{ id: string }>(await call("POST", "/api/sessions", { token, body: {} }));
      const sent = await call("POST", `/api/sessions/${session.id}/messages`, { token, body: { content: "what sessions are there?" } });
      expect(sent.status).toBe(202);
      expect(await waitForRun(env, session.id, (await json<{ run_id: string }>(sent)).run_id, 20_000)).toMatchObject({
        status: "completed",
      });
      const events: PersistentEvent[] = await doEvents(session.id, a.id);
      return events
        .filter((e): e is MessageEvent => e.type === "message")
        .map((e) => e.message)
        .find((m) => m.role === "tool_result" && m.tool_call_id === id);
    };
    const mine = await resultOf(a.member, "m1");
    expect(mine).toMatchObject({ is_error: false });
    expect(JSON.stringify(mine)).toContain("sessions");
    expect(JSON.stringify(await resultOf(other, "m2"))).toContain("unknown_tool");
    const delegated = await resultOf(a.member, "d1");
    expect(delegated).toMatchObject({ is_error: false });
    const [child] = delegateResults(String((delegated as { content: unknown }).content));
    expect(child).toMatchObject({ status: "completed", answer: "child done" });
    const childEvents: PersistentEvent[] = await doEvents(child!.session_id, a.id);
    const childCall = childEvents
      .filter((e): e is MessageEvent => e.type === "message")
      .map((e) => e.message)
      .find((m) => m.role === "tool_result" && m.tool_call_id === "c1");
    expect(childCall).toMatchObject({ is_error: false });
    expect(JSON.stringify(childCall)).toContain("sessions");

    // Disconnect forgets only the caller's own tokens.
    expect((await call("DELETE", "/api/mcp/servers/hosted/connection", { token: other })).status).toBe(200);
    expect((await statusOf(a.member, true)).servers[0]).toMatchObject({ status: "connected" });
    expect((await call("DELETE", "/api/mcp/servers/hosted/connection", { token: a.member })).status).toBe(200);
    expect((await statusOf(a.member)).servers[0]).toMatchObject({ status: "needs_authorization" });
  });

  it("what a revoked API token approved or connected ends with it: its grants on the hosted side, its personal tokens here", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    const memberToken = async (ws: { admin: string }, name: string) =>
      json<{ id: string; token: string }>(await call("POST", "/api/tokens", { token: ws.admin, body: { name, scopes: ["member"] } }));
    const leaver = await memberToken(a, "leaver");
    const approver = await memberToken(b, "approver");
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: a.admin }));
    const server = { name: "hosted", url: "https://hosted.test/mcp", auth: "oauth", personal: true };
    expect((await call("PUT", "/api/config", { token: a.admin, body: { ...config, mcp: { servers: [server] } } })).status).toBe(200);
    // Two members of A connect their own accounts: the leaver's grant approved by B's `approver`, the other's by B's member.
    for (const [member, hostedUser] of [
      [leaver.token, approver.token],
      [a.member, b.member],
    ] as const) {
      const started = await call("POST", "/api/mcp/servers/hosted/connect", { token: member });
      const body = await approveHosted(new URL((await json<{ authorization_url: string }>(started)).authorization_url), hostedUser, [
        "read",
      ]);
      expect((await call("POST", "/api/mcp/oauth/callback", { token: member, body })).status).toBe(200);
      expect((await statusOf(member)).servers[0]).toMatchObject({ status: "connected" });
    }

    // B revokes `approver`: the grant it approved ends with it, the member's stays.
    expect((await call("DELETE", `/api/tokens/${approver.id}`, { token: b.admin })).status).toBe(200);
    const grants = await json<{ grants: { approved_by: string | null }[] }>(await call("GET", "/api/oauth/grants", { token: b.member }));
    expect(grants.grants).toHaveLength(1);
    expect(grants.grants[0]!.approved_by).not.toBe(approver.id);
    expect((await statusOf(leaver.token, true)).servers[0]).toMatchObject({ status: "needs_authorization" });
    expect((await statusOf(a.member, true)).servers[0]).toMatchObject({ status: "connected" });

    // A revokes the leaver: their tokens for the personal server are forgotten, the other member's kept.
    const memberKeys = async () =>
      (await env.OAUTH_KV!.list({ prefix: `mcpc:${a.id}:` })).keys.map((k) => k.name).filter((k) => k.includes(":member:"));
    expect((await memberKeys()).filter((k) => k.endsWith(`:member:${leaver.id}`))).toHaveLength(1);
    expect((await call("DELETE", `/api/tokens/${leaver.id}`, { token: a.admin })).status).toBe(200);
    const left = await memberKeys();
    expect(left).toHaveLength(1);
    expect(left[0]).not.toContain(leaver.id);
    expect((await statusOf(a.member, true)).servers[0]).toMatchObject({ status: "connected" });
  });

  it("Connect asks the server first (scope, resource_metadata); a 403 insufficient_scope steps up to the union of scopes (conformance scope-from-www-authenticate, metadata-var3, scope-step-up, scope-retry-limit)", async () => {
    // Beaver's own /mcp on hosted.test, but its protected-resource metadata only at a custom URL
    // named by the 401 challenge (the well-known one answers an HTML 404), with a scope to ask for;
    // `tools/call` with the first grant's token is refused 403 insufficient_scope (step-up).
    const prm = "https://hosted.test/custom/metadata.json";
    const beaver = (input: RequestInfo | URL, init?: RequestInit) => exports.default.fetch(new Request(input, init));
    let firstToken: string | undefined;
    let challengeEveryCall = false;
    setOutboundFetch(
      routeHosts({
        "hosted.test": async (input, init) => {
          const req = new Request(input, init);
          const url = new URL(req.url);
          if (url.href === prm) return beaver("https://hosted.test/.well-known/oauth-protected-resource/mcp");
          if (url.pathname.startsWith("/.well-known/oauth-protected-resource")) return new Response("<html>no</html>", { status: 404 });
          const bearer = req.headers.get("Authorization");
          if (url.pathname === "/mcp" && !bearer)
            return Response.json(
              { error: "invalid_token" },
              { status: 401, headers: { "WWW-Authenticate": `Bearer scope="read", resource_metadata="${prm}"` } },
            );
          if (
            url.pathname === "/mcp" &&
            req.method === "POST" &&
            ((await req.clone().json()) as { method?: string }).method === "tools/call"
          ) {
            firstToken ??= bearer!;
            if (bearer === firstToken || challengeEveryCall)
              return Response.json(
                { error: "insufficient_scope" },
                {
                  status: 403,
                  headers: { "WWW-Authenticate": `Bearer error="insufficient_scope", scope="member", resource_metadata="${prm}"` },
                },
              );
          }
          return beaver(req);
        },
      }),
    );
    const main = new ScriptedModel([
      toolCalls({ id: "s1", name: "mcp__challenged__list_sessions", args: {} }),
      text("done"),
      toolCalls({ id: "s2", name: "mcp__challenged__list_sessions", args: {} }),
      text("done"),
      toolCalls({ id: "s3", name: "mcp__challenged__list_sessions", args: {} }),
      text("done"),
    ]);
    const ws = await scriptedWorkspace(main);
    const b = await newWorkspace();
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const servers = [{ name: "challenged", url: "https://hosted.test/mcp", auth: "oauth" }];
    expect((await call("PUT", "/api/config", { token: ws.admin, body: { ...config, mcp: { servers } } })).status).toBe(200);
    const authorize = async (scopes: string[]) => {
      const connect = await call("POST", "/api/mcp/servers/challenged/connect", { token: ws.admin });
      expect(connect.status, await connect.clone().text()).toBe(200);
      const url = new URL((await json<{ authorization_url: string }>(connect)).authorization_url);
      expect(url.origin).toBe("https://hosted.test");
      expect(url.searchParams.get("resource")).toBe("https://hosted.test/mcp");
      // The callback's token exchange finds the same authorization server (the remembered metadata URL).
      const body = await approveHosted(url, b.member, scopes);
      const done = await call("POST", "/api/mcp/oauth/callback", { token: ws.admin, body });
      expect(done.status, await done.clone().text()).toBe(200);
      return url.searchParams.get("scope");
    };
    const toolResult = async (id: string) => {
      const session = await createSession(env, { workspaceId: ws.id });
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "what sessions are there?" });
      expect(await waitForRun(env, session.id, run_id, 20_000)).toMatchObject({ status: "completed" });
      const events: PersistentEvent[] = await doEvents(session.id, ws.id);
      return events
        .filter((e): e is MessageEvent => e.type === "message")
        .map((e) => e.message)
        .find((m) => m.role === "tool_result" && m.tool_call_id === id);
    };

    // The first authorization asks for the 401 challenge's scope.
    expect(await authorize(["read"])).toBe("read");
    expect((await statusOf(ws.admin)).servers[0]).toMatchObject({ status: "connected" });

    // The call is refused for insufficient scope: a readable tool error, and the server needs authorization.
    const refused = await toolResult("s1");
    expect(refused).toMatchObject({ is_error: true });
    expect(JSON.stringify(refused)).toContain('needs a wider authorization (scope \\"read member\\")');
    expect((await statusOf(ws.admin)).servers[0]).toMatchObject({ status: "needs_authorization", error: { code: "needs_authorization" } });

    // The next Connect asks for the union of the scope asked before and the challenged one.
    expect(await authorize(["read", "member"])).toBe("read member");
    expect((await statusOf(ws.admin)).servers[0]).toMatchObject({ status: "connected" });
    const stepped = await toolResult("s2");
    expect(stepped).toMatchObject({ is_error: false });
    expect(JSON.stringify(stepped)).toContain("sessions");

    // A challenge for scopes the grant already holds is an error, not another authorization.
    challengeEveryCall = true;
    const again = await toolResult("s3");
    expect(again).toMatchObject({ is_error: true });
    expect(JSON.stringify(again)).toContain("already covers");
    expect((await statusOf(ws.admin, true)).servers[0]).toMatchObject({ status: "connected" });
  });

  it("uses a pre-registered client (oauth.client_id, client_secret_secret) instead of registering (conformance pre-registration)", async () => {
    const seen: string[] = [];
    setOutboundFetch(
      routeHosts({
        "hosted.test": (input, init) => {
          const req = new Request(input, init);
          seen.push(`${req.method} ${new URL(req.url).pathname} ${req.headers.get("Authorization")?.split(" ")[0] ?? "-"}`);
          return exports.default.fetch(req);
        },
      }),
    );
    // The hosted server's administrator issues a confidential client out of band.
    const issued = await json<{ client_id: string; client_secret: string }>(
      await exports.default.fetch(
        new Request("https://hosted.test/oauth/register", {
          method: "POST",
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({
            client_name: "Issued out of band",
            redirect_uris: ["https://beaver.test/mcp-servers/callback"],
            token_endpoint_auth_method: "client_secret_basic",
          }),
        }),
      ),
    );
    const ws = await newWorkspace();
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const server = {
      name: "issued",
      url: "https://hosted.test/mcp",
      oauth: { client_id: issued.client_id, client_secret_secret: "ISSUED_SECRET" },
    };
    const refused = await call("PUT", "/api/config", { token: ws.admin, body: { ...config, mcp: { servers: [server] } } });
    expect(refused.status).toBe(400);
    expect(await refused.text()).toContain("pre-registered");
    const put = await call("PUT", "/api/config", {
      token: ws.admin,
      body: { ...config, mcp: { servers: [{ ...server, auth: "oauth" }] } },
    });
    expect(put.status).toBe(200);
    const unset = await call("POST", "/api/mcp/servers/issued/connect", { token: ws.admin });
    expect(unset.status).toBe(400);
    expect(await unset.text()).toContain("ISSUED_SECRET is not set");
    expect((await call("PUT", "/api/secrets/ISSUED_SECRET", { token: ws.admin, body: { value: issued.client_secret } })).status).toBe(200);

    const connect = await call("POST", "/api/mcp/servers/issued/connect", { token: ws.admin });
    expect(connect.status, await connect.clone().text()).toBe(200);
    const url = new URL((await json<{ authorization_url: string }>(connect)).authorization_url);
    expect(url.searchParams.get("client_id")).toBe(issued.client_id);
    const b = await newWorkspace();
    const body = await approveHosted(url, b.member, ["read"]);
    const done = await call("POST", "/api/mcp/oauth/callback", { token: ws.admin, body });
    expect(done.status, await done.clone().text()).toBe(200);
    expect((await statusOf(ws.admin)).servers[0]).toMatchObject({ status: "connected" });
    // Beaver never registered; its token request authenticated the issued client (client_secret_basic).
    expect(seen.filter((r) => r.includes("/oauth/register"))).toEqual([]);
    expect(seen).toContain("POST /oauth/token Basic");
  });

  it("offers its client ID metadata document's URL as client_id where the authorization server supports them (conformance basic-cimd)", async () => {
    const seen: string[] = [];
    setOutboundFetch(
      routeHosts({
        "hosted.test": async (input, init) => {
          const req = new Request(input, init);
          seen.push(new URL(req.url).pathname);
          const res = await exports.default.fetch(req);
          if (!new URL(req.url).pathname.startsWith("/.well-known/oauth-authorization-server")) return res;
          // Beaver's own authorization server, as one that accepts URL-based client ids.
          return Response.json({ ...(await res.json<Record<string, unknown>>()), client_id_metadata_document_supported: true });
        },
      }),
    );
    const ws = await newWorkspace();
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const servers = [{ name: "cimd", url: "https://hosted.test/mcp", auth: "oauth" }];
    expect((await call("PUT", "/api/config", { token: ws.admin, body: { ...config, mcp: { servers } } })).status).toBe(200);
    const connect = await call("POST", "/api/mcp/servers/cimd/connect", { token: ws.admin });
    expect(connect.status, await connect.clone().text()).toBe(200);
    const url = new URL((await json<{ authorization_url: string }>(connect)).authorization_url);
    const clientId = url.searchParams.get("client_id")!;
    expect(clientId).toBe("https://beaver.test/api/mcp/client-metadata.json");
    expect(seen).not.toContain("/oauth/register");
    // The document is public, names itself and the callback the authorization request uses.
    const doc = await call("GET", "/api/mcp/client-metadata.json", { token: null });
    expect(doc.status).toBe(200);
    expect(await doc.json()).toMatchObject({
      client_id: clientId,
      client_name: "Beaver",
      redirect_uris: [url.searchParams.get("redirect_uri")],
      token_endpoint_auth_method: "none",
    });
  });

  it("refuses Connect for an unknown server or one without auth: oauth", async () => {
    const ws = await newWorkspace();
    expect((await call("POST", "/api/mcp/servers/nope/connect", { token: ws.admin })).status).toBe(404);
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    await call("PUT", "/api/config", {
      token: ws.admin,
      body: { ...config, mcp: { servers: [{ name: "plain", url: "https://hosted.test/mcp" }] } },
    });
    const plain = await call("POST", "/api/mcp/servers/plain/connect", { token: ws.admin });
    expect(plain.status, await plain.clone().text()).toBe(400);
    expect((await call("POST", "/api/mcp/oauth/callback", { token: ws.admin, body: { code: "x", state: "unknown" } })).status).toBe(404);
  });

  it("refreshes a minute before the access token expires", () => {
    const tokens = { access_token: "t", token_type: "bearer", expires_in: 3600, refresh_token: "r" };
    expect(needsRefresh({ server_url: "u", tokens, tokens_saved_at: 0 }, 3_600_000 - 61_000)).toBe(false);
    expect(needsRefresh({ server_url: "u", tokens, tokens_saved_at: 0 }, 3_600_000 - 59_000)).toBe(true);
    expect(needsRefresh({ server_url: "u", tokens: { ...tokens, expires_in: undefined }, tokens_saved_at: 0 }, 1e12)).toBe(false);
  });
});
