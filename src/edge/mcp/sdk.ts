/**
 * The MCP SDK's server side, as Beaver's MCP endpoint uses it: re-exports that server.ts imports on
 * the first /mcp request, so the SDK's modules (and the zod schemas they build at their top level) are
 * not evaluated at the Worker's startup. The boundary is this module rather than server.ts, whose own
 * imports the bundler would otherwise wrap in lazy initialisers that startup runs anyway
 * (docs/performance.md, "Startup, third pass"; the client side is domains/mcp/sdk.ts).
 */
export { McpServer } from "@modelcontextprotocol/sdk/server/mcp.js";
export { WebStandardStreamableHTTPServerTransport } from "@modelcontextprotocol/sdk/server/webStandardStreamableHttp.js";
