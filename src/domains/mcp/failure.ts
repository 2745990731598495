/**
 * Why an MCP connection or request failed (docs/mcp.md, "Connections"). Apart from connection.ts so
 * the callers that only classify a failure (discovery, tool calls) need not load the MCP SDK: the
 * connection is imported on first use, and the SDK's schemas stay out of the Worker's startup
 * (docs/performance.md, "Startup, third pass").
 */

/** Why a connection or a request failed, in the words a tool error and the server status use. */
export type McpFailureCode =
  | "mcp_timeout"
  | "mcp_unavailable"
  | "mcp_error"
  | "egress_refused"
  | "mcp_config"
  | "cancelled"
  /** An `auth: "oauth"` server was never connected, or its grant lapsed: Connect it in the console (docs/mcp.md). */
  | "needs_authorization";

export class McpFailure extends Error {
  constructor(
    readonly code: McpFailureCode,
    message: string,
  ) {
    super(message);
    this.name = "McpFailure";
  }
}
