/**
 * The MCP tool source the composition root registers with the runtime (`RuntimeServices.toolSources`,
 * docs/layering.md): when a run opens (or resumes), every configured server's tools, from the
 * discovery cache or listed now, join the run's tool set and take part in tool assembly like any
 * other tool. A server that cannot be listed contributes no tools; the run goes on.
 */
import type { ToolSource } from "../../runtime/index.ts";
import { log } from "../../kernel/log.ts";
import { mcpConfigOf } from "./config.ts";
import { discoverTools } from "./discovery.ts";
import { mcpToolSpecs } from "./tools.ts";
import { sentByOf } from "../../kernel/sent-by.ts";

export const mcpToolSource: ToolSource = async ({ env, workspaceId, config, data, signal }) => {
  const { servers } = mcpConfigOf(config);
  if (servers.length === 0) return [];
  // A personal server is listed with the tokens of whoever sent the run's message.
  const member = sentByOf(data);
  const found = await Promise.all(
    servers.map((server) => discoverTools({ env, workspaceId, server, member, ...(signal ? { signal } : {}) })),
  );
  return found.flatMap((discovery, i) => {
    const server = servers[i]!;
    if (discovery.ok) return mcpToolSpecs(server, discovery.tools);
    log.warn("MCP server offers no tools to this run", {
      server: server.name,
      code: discovery.error.code,
      reason: discovery.error.message,
    });
    return [];
  });
};
