/**
 * An MCP `tools/call` result as a Beaver `ToolResult` (docs/mcp.md, "Results"). Tool results reach
 * the model as text, so each content block becomes text: text as is, an embedded text resource with
 * its URI, images, audio and binary resources as a one-line description (type, MIME type, size),
 * resource links as their URI and name; `structuredContent` is added as JSON when no text block
 * carries it. `isError` makes an error result the model can read. Pure.
 */
import { fail, type ToolResult } from "../../runtime/index.ts";

/** The parts of a CallToolResult this mapping reads (kept loose: servers send what they send). */
export interface McpCallResult {
  content?: unknown;
  structuredContent?: unknown;
  isError?: unknown;
  /** The pre-2025-06 `toolResult` form some servers still answer with. */
  toolResult?: unknown;
}

export function mcpResultToToolResult(result: McpCallResult): ToolResult {
  const blocks = Array.isArray(result.content) ? result.content : [];
  const parts = blocks.map(describeBlock).filter((t) => t.length > 0);
  if (result.structuredContent !== undefined && parts.length === 0) parts.push(JSON.stringify(result.structuredContent));
  if (result.toolResult !== undefined && parts.length === 0) parts.push(JSON.stringify(result.toolResult));
  // Length is not bounded here: the tool executor cuts every result at the central `tool_result_chars` cap.
  const text = parts.join("\n\n");
  if (result.isError === true) return fail("mcp_tool_error", text || "The MCP tool reported an error without a message");
  return { ok: true, content: text || "(the tool returned no content)" };
}

function describeBlock(block: unknown): string {
  if (block === null || typeof block !== "object") return "";
  const b = block as Record<string, unknown>;
  switch (b.type) {
    case "text":
      return typeof b.text === "string" ? b.text : "";
    case "image":
    case "audio":
      return `[${b.type}: ${str(b.mimeType) ?? "unknown type"}, ${base64Bytes(b.data)} bytes]`;
    case "resource":
      return describeResource(b.resource);
    case "resource_link": {
      const name = str(b.name) ?? str(b.title);
      const about = [str(b.mimeType), str(b.description)].filter(Boolean).join("; ");
      return `[resource link: ${str(b.uri) ?? "?"}${name ? ` (${name})` : ""}${about ? ` — ${about}` : ""}]`;
    }
    default:
      return `[${typeof b.type === "string" ? b.type : "unknown"} content]`;
  }
}

function describeResource(resource: unknown): string {
  if (resource === null || typeof resource !== "object") return "";
  const r = resource as Record<string, unknown>;
  const uri = str(r.uri) ?? "?";
  if (typeof r.text === "string") return `[resource ${uri}${str(r.mimeType) ? ` (${str(r.mimeType)})` : ""}]\n${r.text}`;
  return `[resource ${uri}: ${str(r.mimeType) ?? "binary"}, ${base64Bytes(r.blob)} bytes]`;
}

const str = (v: unknown): string | undefined => (typeof v === "string" && v.length > 0 ? v : undefined);

/** Decoded size of base64 data (without decoding it). */
function base64Bytes(data: unknown): number {
  if (typeof data !== "string") return 0;
  const clean = data.replace(/\s/g, "");
  const padding = clean.endsWith("==") ? 2 : clean.endsWith("=") ? 1 : 0;
  return Math.max(0, Math.floor((clean.length * 3) / 4) - padding);
}
