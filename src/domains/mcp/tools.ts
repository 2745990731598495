/**
 * A discovered MCP tool as a Beaver `ToolSpec` (docs/mcp.md, "Tools in a run"): named
 * `mcp__<server>__<tool>`, its arguments validated against the server's input schema, marked
 * idempotent when the server says it is read-only or idempotent (so a run resumed after an
 * eviction may call it again), and executed over a fresh connection whose failures and timeouts
 * come back as tool errors the model can read — never as a failed run.
 */
import { fail, type ToolResult, type ToolSpec } from "../../runtime/index.ts";
import type { Env } from "../../storage/env.ts";
import type { McpServerConfig } from "./config.ts";
import { McpFailure, withMcpClient } from "./connection.ts";
import { invalidateDiscovery, type McpToolInfo } from "./discovery.ts";
import { inputSchemaOf, normaliseInputSchema } from "./input-schema.ts";
import { mcpResultToToolResult } from "./results.ts";
import { selectTools } from "./names.ts";
import { sentByOf } from "../../kernel/sent-by.ts";

/** Characters of a tool description offered to the model. */
export const MAX_DESCRIPTION_CHARS = 1_024;

/** `readOnlyHint` or `idempotentHint`: calling the tool twice does no harm. */
export function isIdempotent(tool: McpToolInfo): boolean {
  return tool.annotations?.readOnlyHint === true || tool.annotations?.idempotentHint === true;
}

export function describeTool(server: string, tool: McpToolInfo): string {
  const text = tool.description ?? tool.title ?? tool.annotations?.title ?? `Tool ${tool.name}`;
  const cut = text.length > MAX_DESCRIPTION_CHARS ? `${text.slice(0, MAX_DESCRIPTION_CHARS)}…` : text;
  return `${cut} (MCP server ${server}, tool ${tool.name})`;
}

/** Calls one tool on the server; every failure becomes an error result. */
export type McpCaller = (args: {
  env: Env;
  workspaceId: string;
  server: McpServerConfig;
  /** Who sent the run's message: a personal server is called with their tokens. */
  member?: string | null;
  tool: string;
  arguments: unknown;
  signal: AbortSignal;
}) => Promise<ToolResult>;

/** The allowed tools of one server as ToolSpecs. */
export function mcpToolSpecs(server: McpServerConfig, tools: readonly McpToolInfo[], call: McpCaller = callMcpTool): ToolSpec<unknown>[] {
  return selectTools(server.name, tools, server).map(({ registryName, tool }) => {
    const { input } = inputSchemaOf(tool.inputSchema);
    return {
      name: registryName,
      description: describeTool(server.name, tool),
      input,
      inputJsonSchema: normaliseInputSchema(tool.inputSchema),
      ...(isIdempotent(tool) ? { idempotent: true } : {}),
      // MCP's readOnlyHint: calls of one step to such tools run in parallel (docs/agent-loop.md).
      ...(tool.annotations?.readOnlyHint === true ? { readOnly: true } : {}),
      execute: (args, ctx) =>
        call({
          env: ctx.env,
          workspaceId: ctx.workspaceId,
          server,
          member: sentByOf(ctx.data),
          tool: tool.name,
          arguments: args,
          signal: ctx.signal,
        }),
    };
  });
}

/** `tools/call` over a fresh connection, within the server's `timeout_ms`. Never throws. */
export async function callMcpTool(args: Parameters<McpCaller>[0]): Promise<ToolResult> {
  try {
    const result = await withMcpClient(
      {
        env: args.env,
        workspaceId: args.workspaceId,
        server: args.server,
        member: args.member ?? null,
        signal: args.signal,
        onToolsChanged: () => invalidateDiscovery(args.workspaceId, args.server, args.member),
      },
      (client, request) =>
        client.callTool({ name: args.tool, arguments: (args.arguments ?? {}) as Record<string, unknown> }, undefined, request),
    );
    return mcpResultToToolResult(result);
  } catch (err) {
    if (err instanceof McpFailure) {
      // A grant that lapsed or asks for step-up: the next listing (status, runs) shows needs_authorization.
      if (err.code === "needs_authorization") invalidateDiscovery(args.workspaceId, args.server, args.member);
      return fail(err.code, err.message);
    }
    return fail("mcp_error", err instanceof Error ? err.message : String(err));
  }
}
