/**
 * What `GET /api/mcp/servers` shows (docs/mcp.md, "Server status"): each configured server with the
 * outcome of its latest discovery — `connected` with the tools runs get, or `error` with why — and
 * when that discovery happened. Served from the discovery cache while it is fresh, so looking does
 * not cost each server a connection; `refresh` lists every server again.
 */
import type { Env } from "../../storage/env.ts";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { mcpConfigOf } from "./config.ts";
import { discoverTools, type Discovery } from "./discovery.ts";
import { describeTool, isIdempotent } from "./tools.ts";
import { selectTools } from "./names.ts";
import type { McpServerConfig } from "./config.ts";

export interface McpServerStatus {
  name: string;
  url: string;
  /** `oauth` when Beaver authorizes itself to the server (Connect in the console). */
  auth: "oauth" | null;
  transport: McpServerConfig["transport"];
  /** Each member connects their own account; `status` is the caller's (docs/mcp.md, "Personal servers"). */
  personal: boolean;
  /** `needs_authorization`: an `auth: "oauth"` server without a live grant (Connect it in the console). */
  status: "connected" | "error" | "needs_authorization";
  error: { code: string; message: string } | null;
  /** When the shown discovery ran (ms since the epoch). */
  discovered_at: number;
  /** Whether the discovery shown came from the cache. */
  cached: boolean;
  /** The tools runs get (after allow/deny), with the names the model sees. */
  tools: { name: string; mcp_name: string; description: string; idempotent: boolean }[];
}

export async function mcpServerStatuses(
  env: Env,
  workspaceId: string,
  config: WorkspaceConfig,
  refresh = false,
  /** The caller (API token id): a personal server's status is theirs. */
  member: string | null = null,
): Promise<McpServerStatus[]> {
  const { servers } = mcpConfigOf(config);
  const found = await Promise.all(servers.map((server) => discoverTools({ env, workspaceId, server, member, refresh })));
  return servers.map((server, i) => statusOf(server, found[i]!));
}

export function statusOf(server: McpServerConfig, discovery: Discovery): McpServerStatus {
  const base = {
    name: server.name,
    url: server.url,
    auth: server.auth ?? null,
    transport: server.transport,
    personal: server.personal === true,
    discovered_at: discovery.discovered_at,
    cached: discovery.cached,
  };
  if (!discovery.ok) {
    const status = discovery.error.code === "needs_authorization" ? "needs_authorization" : "error";
    return { ...base, status, error: discovery.error, tools: [] };
  }
  return {
    ...base,
    status: "connected",
    error: null,
    tools: selectTools(server.name, discovery.tools, server).map(({ registryName, tool }) => ({
      name: registryName,
      mcp_name: tool.name,
      description: describeTool(server.name, tool),
      idempotent: isIdempotent(tool),
    })),
  };
}
