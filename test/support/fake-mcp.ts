/**
 * An MCP server inside the test isolate (for test/domains/mcp/): the official SDK's low-level
 * `Server` behind its web-standard Streamable HTTP transport, stateless (a fresh server per request,
 * as on Workers), answering through a `FetchFn` a test installs with `setOutboundFetch`. Tools are
 * declared with raw JSON Schemas so a test controls exactly what Beaver discovers and gets back.
 */
import { Server } from "@modelcontextprotocol/sdk/server/index.js";
import { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { CallToolRequestSchema, ListToolsRequestSchema, type CallToolResult, type Tool } from "@modelcontextprotocol/sdk/types.js";
import type { FetchFn } from "../../src/storage/outbound.ts";

export interface FakeTool {
  tool: Tool;
  call(args: Record<string, unknown>, notify: { toolsChanged(): Promise<void> }): Promise<CallToolResult> | CallToolResult;
}

export interface FakeMcp {
  fetch: FetchFn;
  /** Every JSON-RPC method received (`initialize`, `tools/list`, ...), in order. */
  methods: string[];
  /** The headers of every request received. */
  headers: Headers[];
  tools: FakeTool[];
}

export function fakeMcp(tools: FakeTool[]): FakeMcp {
  const state: FakeMcp = { fetch: null as unknown as FetchFn, methods: [], headers: [], tools };
  state.fetch = async (input, init) => {
    const request = new Request(input, init);
    state.headers.push(request.headers);
    if (request.method === "POST") {
      const body: unknown = await request.clone().json();
      for (const m of Array.isArray(body) ? body : [body]) state.methods.push(String((m as { method?: string }).method ?? "response"));
    }
    const server = new Server(
      { name: "fake-mcp", version: "1.0.0" },
      { capabilities: { tools: { listChanged: true } }, jsonSchemaValidator: new CfWorkerJsonSchemaValidator() },
    );
    server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: state.tools.map((t) => t.tool) }));
    server.setRequestHandler(CallToolRequestSchema, async (req, extra) => {
      const found = state.tools.find((t) => t.tool.name === req.params.name);
      if (!found) return { content: [{ type: "text", text: `unknown tool ${req.params.name}` }], isError: true };
      // Sent on the call's own stream: a stateless server has no standalone stream to send it on.
      return found.call(req.params.arguments ?? {}, {
        toolsChanged: () => extra.sendNotification({ method: "notifications/tools/list_changed" }),
      });
    });
    const transport = new WebStandardStreamableHTTPServerTransport({ sessionIdGenerator: undefined });
    await server.connect(transport);
    return transport.handleRequest(request);
  };
  return state;
}

/** Routes outbound requests by host: each host's fetch, anything else fails like a host that is down. */
export function routeHosts(routes: Record<string, FetchFn>): FetchFn {
  return async (input, init) => {
    const url = new URL(input instanceof Request ? input.url : input instanceof URL ? input.href : input);
    const route = routes[url.host];
    if (!route) throw new TypeError(`fetch failed: connect ECONNREFUSED ${url.host}`);
    return route(input, init);
  };
}
