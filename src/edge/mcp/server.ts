/**
 * Beaver as an MCP server (docs/mcp.md, "Beaver as an MCP server"): one official-SDK `McpServer` per
 * request behind its web-standard Streamable HTTP transport, stateless (no MCP session to keep
 * between requests, which suits Workers) and answering JSON rather than SSE. The tools offered are
 * those the caller's token has the scope for, so a read token never sees `send_message`.
 */
import type { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
import type * as ServerSdkModule from "./sdk.ts";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import type { Env } from "../../storage/env.ts";
import type { Principal } from "../http/context.ts";
import { hasScope } from "../http/auth.ts";
import { VERSION } from "../http/routes/ping.ts";
import { BEAVER_MCP_TOOLS, type ApiCall } from "./tools.ts";

export const SERVER_INFO = { name: "beaver", version: VERSION } as const;

/** The tools a principal may see and call. */
export function toolsFor(principal: Principal) {
  return BEAVER_MCP_TOOLS.filter((tool) => hasScope(principal, tool.scope));
}

type ServerSdk = typeof ServerSdkModule;

export function buildMcpServer(sdk: ServerSdk, env: Env, principal: Principal, api: ApiCall): McpServer {
  // ajv (the SDK's default validator) compiles schemas with `new Function`, which workerd forbids.
  const server = new sdk.McpServer(SERVER_INFO, {
    capabilities: { tools: {}, logging: {} },
    jsonSchemaValidator: new CfWorkerJsonSchemaValidator(),
    instructions:
      "Beaver is an agent harness. Use list_sessions/search_sessions/read_transcript to look at conversations, " +
      "send_message to talk to an agent, list_tasks/read_task for toolchain work and list_skills/view_skill for skills.",
  });
  for (const tool of toolsFor(principal)) {
    server.registerTool(
      tool.name,
      {
        title: tool.title,
        description: tool.description,
        inputSchema: tool.input,
        annotations: {
          title: tool.title,
          readOnlyHint: tool.readOnly,
          openWorldHint: false,
          ...(tool.readOnly ? { idempotentHint: true } : {}),
        },
      },
      (args: Record<string, unknown>, extra: { signal: AbortSignal }) => tool.run(args, { env, principal, api, signal: extra.signal }),
    );
  }
  return server;
}

/** Answers one MCP request (POST /mcp; GET and DELETE answer 405 in stateless mode). */
export async function handleMcpRequest(
  request: Request,
  parsedBody: unknown,
  env: Env,
  principal: Principal,
  api: ApiCall,
): Promise<Response> {
  // The SDK loads on the first /mcp request, not at the Worker's startup (sdk.ts).
  const sdk = await import("./sdk.ts");
  const server = buildMcpServer(sdk, env, principal, api);
  const transport = new sdk.WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined, enableJsonResponse: true });
  await server.connect(transport);
  return transport.handleRequest(request, parsedBody === undefined ? {} : { parsedBody });
}
