/**
 * `GET /api/mcp/servers`: the workspace's configured MCP servers, each with its status (connected or
 * the error of its latest discovery, and when that was) and the tools its runs get (docs/mcp.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { mcpServerStatuses } from "../../../domains/mcp/status.ts";
import { Flag } from "./session-schemas.ts";

const McpServerStatusDoc = z
  .object({
    name: z.string(),
    url: z.string(),
    transport: z.enum(["streamable-http", "sse"]),
    auth: z.enum(["oauth"]).nullable().describe("`oauth`: Beaver authorizes itself with OAuth (Connect in the console)"),
    personal: z.boolean().describe("Each member connects their own account: `status` is the caller's"),
    status: z.enum(["connected", "error", "needs_authorization"]),
    error: z.object({ code: z.string(), message: z.string() }).nullable(),
    discovered_at: z.number().describe("When the shown discovery ran (ms since the epoch)"),
    cached: z.boolean().describe("The discovery came from the cache (5 minutes after a success, 30 s after a failure)"),
    tools: z.array(
      z.object({
        name: z.string().describe("The name runs and the model see: mcp__<server>__<tool>"),
        mcp_name: z.string().describe("The tool's name on the server"),
        description: z.string(),
        idempotent: z.boolean().describe("readOnlyHint or idempotentHint: may run again when a run resumes"),
      }),
    ),
  })
  .openapi("McpServerStatus");

const list = createRoute({
  method: "get",
  path: "/servers",
  tags: ["mcp"],
  summary: "Configured MCP servers with their status and tools",
  middleware: [requireScope("read")] as const,
  request: { query: z.strictObject({ refresh: Flag.optional().describe("List every server's tools again instead of using the cache") }) },
  responses: { 200: jsonResponse(z.object({ servers: z.array(McpServerStatusDoc) }), "Servers"), ...errorResponses() },
});

export const mcpRoutes = newRouter().openapi(list, async (c) => {
  const workspaceId = c.get("principal").workspaceId;
  const config = await loadConfig(c.env, workspaceId);
  const servers = await mcpServerStatuses(c.env, workspaceId, config, c.req.valid("query").refresh === true, c.get("principal").tokenId);
  return c.json({ servers }, 200);
});
