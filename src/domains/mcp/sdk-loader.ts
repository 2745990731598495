/**
 * Loads the MCP SDK's client side (sdk.ts) on first use, once per isolate (docs/performance.md,
 * "Startup, third pass").
 */
import type * as Sdk from "./sdk.ts";

export type McpSdk = typeof Sdk;

let loading: Promise<McpSdk> | undefined;

export function mcpSdk(): Promise<McpSdk> {
  return (loading ??= import("./sdk.ts"));
}
