/**
 * `/mcp`: Beaver's MCP server over Streamable HTTP (docs/mcp.md, "Beaver as an MCP server"),
 * authenticated with the same bearer tokens as /api, or an OAuth grant's (edge/oauth/provider.ts). Stateless: every POST carries whole JSON-RPC
 * messages and gets a JSON answer; GET (a server-to-client stream) and DELETE (ending an MCP session)
 * answer 405, as the transport specification allows for a server without either. Tools reach
 * Beaver's own routes in-process through `dispatch` as the caller (src/edge/mcp/tools.ts).
 */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import type { Env } from "../../../storage/env.ts";
import { handleMcpRequest } from "../../mcp/server.ts";
import type { ApiCall } from "../../mcp/tools.ts";
import { markPrincipal } from "../../oauth/principal.ts";

/** Sends a request through the whole Beaver app (auth, limits, routes). */
export type Dispatch = (request: Request, env: Env, ctx: Context["executionCtx"]) => Response | Promise<Response>;

const JsonRpcMessage = z.looseObject({ jsonrpc: z.literal("2.0") }).openapi("JsonRpcMessage", {
  description: "A JSON-RPC 2.0 request, notification or response (MCP 2025-06-18 / 2025-11-25)",
});

const post = createRoute({
  method: "post",
  path: "/",
  tags: ["mcp"],
  summary: "MCP Streamable HTTP endpoint (stateless; Accept: application/json, text/event-stream)",
  request: {
    body: {
      required: true,
      content: { "application/json": { schema: z.union([JsonRpcMessage, z.array(JsonRpcMessage).min(1).max(100)]) } },
    },
  },
  responses: {
    200: jsonResponse(z.union([JsonRpcMessage, z.array(JsonRpcMessage)]), "JSON-RPC response(s)"),
    202: { description: "Notifications and responses accepted" },
    406: { description: "The Accept header does not list application/json and text/event-stream" },
    ...errorResponses(),
  },
});

const notAllowed = () =>
  new Response(
    JSON.stringify({
      jsonrpc: "2.0",
      error: { code: -32000, message: "Method not allowed: this server is stateless (POST only)" },
      id: null,
    }),
    {
      status: 405,
      headers: { "Content-Type": "application/json", Allow: "POST" },
    },
  );

export function mcpEndpointRoutes(dispatch: Dispatch) {
  const router = newRouter().openapi(post, async (c) => {
    const principal = c.get("principal");
    // The caller's principal rides on the request's ExecutionContext, which the in-process calls share
    // (edge/oauth/principal.ts): an OAuth grant's token is not an API token the routes could look up again.
    markPrincipal(c.executionCtx, principal);
    const api: ApiCall = async (method, path, body) =>
      dispatch(
        new Request(new URL(path, c.req.url), {
          method,
          headers: body === undefined ? {} : { "Content-Type": "application/json" },
          ...(body === undefined ? {} : { body: JSON.stringify(body) }),
        }),
        c.env,
        c.executionCtx,
      );
    return handleMcpRequest(c.req.raw, c.req.valid("json"), c.env, principal, api);
  });
  router.on(["GET", "DELETE"], "/", () => notAllowed());
  return router;
}
