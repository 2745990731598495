/**
 * The MCP SDK's client side, as Beaver uses it: one module of re-exports that connection.ts and
 * oauth-client.ts import on first use (`mcpSdk()`), so the SDK's modules (and the zod schemas they
 * build at their top level) are evaluated on the first connection or authorization, not at the
 * Worker's startup. The boundary is this module and not connection.ts: a dynamic `import()` of one of
 * Beaver's own modules would make the bundler wrap everything that module imports (storage, drizzle,
 * hono) in lazy initialisers that startup then runs anyway (docs/performance.md, "Startup, third pass").
 */
export { Client } from "@modelcontextprotocol/sdk/client/index.js";
export { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
export { SSEClientTransport } from "@modelcontextprotocol/sdk/client/sse.js";
export { UnauthorizedError, auth, extractWWWAuthenticateParams } from "@modelcontextprotocol/sdk/client/auth.js";
export { ToolListChangedNotificationSchema, McpError, ErrorCode, LATEST_PROTOCOL_VERSION } from "@modelcontextprotocol/sdk/types.js";
