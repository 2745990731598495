/**
 * `/api/mcp`: connecting an `auth: "oauth"` MCP server (docs/mcp.md, "Connect a hosted MCP server").
 * `POST /servers/{name}/connect` runs the MCP SDK's client-side discovery and registration and answers
 * the URL to send the admin's browser to (or null when Beaver is already authorized); the server's
 * authorization page sends the browser back to the console's `/mcp-servers/callback`, which hands the
 * code and state to `POST /oauth/callback` for the token exchange (PKCE). `DELETE
 * /servers/{name}/connection` forgets the stored tokens. Admin scope: the tokens are the workspace's.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { outboundFetch } from "../../../storage/outbound.ts";
import { mcpConfigOf, type McpServerConfig } from "../../../domains/mcp/config.ts";
import { invalidateDiscovery } from "../../../domains/mcp/discovery.ts";
import { finishAuthorization, forgetRecord, startAuthorization, takeState } from "../../../domains/mcp/oauth-client.ts";

/** The console page that receives the server's redirect (console/src/pages/mcp.tsx). */
export const MCP_OAUTH_CALLBACK_PATH = "/mcp-servers/callback";

const ServerName = z.object({ name: z.string().min(1).max(32) });

const connect = createRoute({
  method: "post",
  path: "/servers/{name}/connect",
  tags: ["mcp"],
  summary: "Start authorizing Beaver to an `auth: oauth` MCP server",
  middleware: [requireScope("admin")] as const,
  request: { params: ServerName },
  responses: {
    200: jsonResponse(
      z.object({ authorization_url: z.string().nullable().describe("Where to send the browser; null when already authorized") }),
      "Started",
    ),
    ...errorResponses(404, 502),
  },
});

const callback = createRoute({
  method: "post",
  path: "/oauth/callback",
  tags: ["mcp"],
  summary: "Finish authorizing an MCP server with the code its authorization server sent back",
  middleware: [requireScope("admin")] as const,
  request: { body: jsonBody(z.strictObject({ code: z.string().min(1).max(4096), state: z.string().min(1).max(512) })) },
  responses: {
    200: jsonResponse(z.object({ server: z.string(), status: z.literal("connected") }), "Connected"),
    ...errorResponses(404, 502),
  },
});

const disconnect = createRoute({
  method: "delete",
  path: "/servers/{name}/connection",
  tags: ["mcp"],
  summary: "Forget the OAuth tokens Beaver holds for an MCP server",
  middleware: [requireScope("admin")] as const,
  request: { params: ServerName },
  responses: { 200: jsonResponse(z.object({ server: z.string(), forgotten: z.literal(true) }), "Forgotten"), ...errorResponses(404) },
});

async function oauthServer(env: Parameters<typeof loadConfig>[0], workspaceId: string, name: string): Promise<McpServerConfig> {
  const server = mcpConfigOf(await loadConfig(env, workspaceId)).servers.find((s) => s.name === name);
  if (!server) throw notFound(`MCP server '${name}'`);
  if (server.auth !== "oauth") throw new AppError("bad_request", `MCP server '${name}' is not configured with auth: "oauth"`);
  return server;
}

const upstream = (err: unknown) =>
  err instanceof AppError
    ? err
    : new AppError("provider_error", `Authorization failed: ${err instanceof Error ? err.message : String(err)}`);

export const mcpOAuthRoutes = newRouter()
  .openapi(connect, async (c) => {
    const workspaceId = c.get("principal").workspaceId;
    const server = await oauthServer(c.env, workspaceId, c.req.valid("param").name);
    const redirectUrl = `${new URL(c.req.url).origin}${MCP_OAUTH_CALLBACK_PATH}`;
    try {
      const url = await startAuthorization(c.env, workspaceId, server, redirectUrl, outboundFetch(c.env));
      if (!url) invalidateDiscovery(workspaceId, server);
      return c.json({ authorization_url: url ? url.href : null }, 200);
    } catch (err) {
      throw upstream(err);
    }
  })
  .openapi(callback, async (c) => {
    const workspaceId = c.get("principal").workspaceId;
    const { code, state } = c.req.valid("json");
    const pending = await takeState(c.env, workspaceId, state);
    // Another workspace's (or an expired, or a used) state is simply not found here.
    if (!pending) throw notFound("Authorization in progress");
    const server = await oauthServer(c.env, workspaceId, pending);
    try {
      const result = await finishAuthorization(c.env, workspaceId, server, code, outboundFetch(c.env));
      if (result !== "AUTHORIZED") throw new AppError("provider_error", "The authorization server did not issue tokens");
    } catch (err) {
      throw upstream(err);
    }
    invalidateDiscovery(workspaceId, server);
    return c.json({ server: server.name, status: "connected" as const }, 200);
  })
  .openapi(disconnect, async (c) => {
    const workspaceId = c.get("principal").workspaceId;
    const server = await oauthServer(c.env, workspaceId, c.req.valid("param").name);
    await forgetRecord(c.env, workspaceId, server.name);
    invalidateDiscovery(workspaceId, server);
    return c.json({ server: server.name, forgotten: true as const }, 200);
  });
