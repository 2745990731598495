/**
 * `/api/mcp`: connecting an `auth: "oauth"` MCP server (docs/mcp.md, "Connect a hosted MCP server").
 * `POST /servers/{name}/connect` runs the MCP SDK's client-side discovery and registration and answers
 * the URL to send the caller's browser to (or null when Beaver is already authorized); the server's
 * authorization page sends the browser back to the console's `/mcp-servers/callback`, which hands the
 * code and state to `POST /oauth/callback` for the token exchange (PKCE). `DELETE
 * /servers/{name}/connection` forgets the stored tokens. A workspace's tokens need the admin scope; a
 * `personal` server's are the caller's own (member scope), and only the member who started an
 * authorization can finish it ("Personal servers"). `GET /client-metadata.json` (public) is Beaver's
 * client ID metadata document ("Client ID metadata document").
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { assertScope, requireScope } from "../auth.ts";
import type { AppEnv } from "../context.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { outboundFetch } from "../../../storage/outbound.ts";
import { mcpConfigOf, type McpServerConfig } from "../../../domains/mcp/config.ts";
import { invalidateDiscovery } from "../../../domains/mcp/discovery.ts";
import {
  clientMetadataDocument,
  finishAuthorization,
  forgetRecord,
  startAuthorization,
  takeState,
  type TokenHolder,
} from "../../../domains/mcp/oauth-client.ts";

/** The console page that receives the server's redirect (console/src/pages/mcp.tsx). */
export const MCP_OAUTH_CALLBACK_PATH = "/mcp-servers/callback";

const ServerName = z.object({ name: z.string().min(1).max(32) });

const connect = createRoute({
  method: "post",
  path: "/servers/{name}/connect",
  tags: ["mcp"],
  summary: "Start authorizing Beaver to an `auth: oauth` MCP server (admin; member for a personal server)",
  middleware: [requireScope("member")] as const,
  request: { params: ServerName },
  responses: {
    200: jsonResponse(
      z.object({ authorization_url: z.string().nullable().describe("Where to send the browser; null when already authorized") }),
      "Started",
    ),
    ...errorResponses(403, 404, 502),
  },
});

const callback = createRoute({
  method: "post",
  path: "/oauth/callback",
  tags: ["mcp"],
  summary: "Finish authorizing an MCP server with the code its authorization server sent back (whoever started it)",
  middleware: [requireScope("member")] as const,
  request: { body: jsonBody(z.strictObject({ code: z.string().min(1).max(4096), state: z.string().min(1).max(512) })) },
  responses: {
    200: jsonResponse(z.object({ server: z.string(), status: z.literal("connected") }), "Connected"),
    ...errorResponses(403, 404, 502),
  },
});

const disconnect = createRoute({
  method: "delete",
  path: "/servers/{name}/connection",
  tags: ["mcp"],
  summary: "Forget the OAuth tokens Beaver holds for an MCP server (admin; member for their own on a personal server)",
  middleware: [requireScope("member")] as const,
  request: { params: ServerName },
  responses: {
    200: jsonResponse(z.object({ server: z.string(), forgotten: z.literal(true) }), "Forgotten"),
    ...errorResponses(403, 404),
  },
});

const clientMetadata = createRoute({
  method: "get",
  path: "/client-metadata.json",
  tags: ["mcp"],
  summary: "Beaver's OAuth client ID metadata document, its URL the client_id offered to authorization servers that support them (public)",
  responses: {
    200: jsonResponse(
      z.object({
        client_id: z.string(),
        client_name: z.string().optional(),
        client_uri: z.string(),
        redirect_uris: z.array(z.string()),
        grant_types: z.array(z.string()).optional(),
        response_types: z.array(z.string()).optional(),
        token_endpoint_auth_method: z.string().optional(),
      }),
      "Client metadata",
    ),
  },
});

async function oauthServer(env: Parameters<typeof loadConfig>[0], workspaceId: string, name: string): Promise<McpServerConfig> {
  const server = mcpConfigOf(await loadConfig(env, workspaceId)).servers.find((s) => s.name === name);
  if (!server) throw notFound(`MCP server '${name}'`);
  if (server.auth !== "oauth") throw new AppError("bad_request", `MCP server '${name}' is not configured with auth: "oauth"`);
  return server;
}

/** Whose tokens the caller manages: their own on a personal server, else the workspace's (admin only). */
function holderOfCaller(c: Context<AppEnv>, server: McpServerConfig): TokenHolder {
  const p = c.get("principal");
  if (server.personal) return { workspaceId: p.workspaceId, member: p.tokenId };
  assertScope(p, "admin");
  return { workspaceId: p.workspaceId, member: null };
}

const upstream = (err: unknown) =>
  err instanceof AppError
    ? err
    : new AppError("provider_error", `Authorization failed: ${err instanceof Error ? err.message : String(err)}`);

export const mcpOAuthRoutes = newRouter()
  .openapi(clientMetadata, (c) => {
    c.header("Cache-Control", "public, max-age=3600");
    return c.json(clientMetadataDocument(new URL(c.req.url).origin, MCP_OAUTH_CALLBACK_PATH), 200);
  })
  .openapi(connect, async (c) => {
    const server = await oauthServer(c.env, c.get("principal").workspaceId, c.req.valid("param").name);
    const holder = holderOfCaller(c, server);
    const redirectUrl = `${new URL(c.req.url).origin}${MCP_OAUTH_CALLBACK_PATH}`;
    try {
      const url = await startAuthorization(c.env, holder, server, redirectUrl, outboundFetch(c.env));
      if (!url) invalidateDiscovery(holder.workspaceId, server, holder.member);
      return c.json({ authorization_url: url ? url.href : null }, 200);
    } catch (err) {
      throw upstream(err);
    }
  })
  .openapi(callback, async (c) => {
    const p = c.get("principal");
    const { code, state } = c.req.valid("json");
    const pending = await takeState(c.env, { workspaceId: p.workspaceId, member: p.tokenId }, state);
    // Another workspace's (or member's, or an expired, or a used) state is simply not found here.
    if (!pending) throw notFound("Authorization in progress");
    if (pending.holder.member === null) assertScope(p, "admin");
    const server = await oauthServer(c.env, p.workspaceId, pending.server);
    try {
      const result = await finishAuthorization(c.env, pending.holder, server, code, outboundFetch(c.env));
      if (result !== "AUTHORIZED") throw new AppError("provider_error", "The authorization server did not issue tokens");
    } catch (err) {
      throw upstream(err);
    }
    invalidateDiscovery(p.workspaceId, server, pending.holder.member);
    return c.json({ server: server.name, status: "connected" as const }, 200);
  })
  .openapi(disconnect, async (c) => {
    const server = await oauthServer(c.env, c.get("principal").workspaceId, c.req.valid("param").name);
    const holder = holderOfCaller(c, server);
    await forgetRecord(c.env, holder, server.name);
    invalidateDiscovery(holder.workspaceId, server, holder.member);
    return c.json({ server: server.name, forgotten: true as const }, 200);
  });
