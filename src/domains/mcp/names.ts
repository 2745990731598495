/**
 * How an MCP server's tools are named and chosen (docs/mcp.md, "Tool names"): each becomes
 * `mcp__<server>__<tool>`, spelt so every model provider accepts it (letters, digits, `_`, `-`, at
 * most 64 characters), and `allow_tools`/`deny_tools` pick which tools a workspace takes — globs in
 * the tool policy's dialect (picomatch, `matchesToolName`), so one pattern means the same everywhere. Pure.
 */
import { matchesToolName } from "../../runtime/index.ts";

/** Providers accept tool names of at most this many characters (OpenAI: `^[a-zA-Z0-9_-]{1,64}$`). */
export const MAX_TOOL_NAME = 64;

export const MCP_PREFIX = "mcp__";

/** The registry name of an MCP tool: other characters become `_`; over-long names are cut. */
export function mcpToolName(server: string, tool: string): string {
  const safe = tool.replace(/[^A-Za-z0-9_-]/g, "_");
  return `${MCP_PREFIX}${server}__${safe}`.slice(0, MAX_TOOL_NAME);
}

/** A tool is taken when `allow_tools` is absent or names it, and `deny_tools` does not (deny wins). */
export function isToolAllowed(
  tool: string,
  rules: { allow_tools?: readonly string[] | undefined; deny_tools: readonly string[] },
): boolean {
  if (rules.deny_tools.some((p) => matchesToolName(tool, p))) return false;
  return rules.allow_tools === undefined || rules.allow_tools.some((p) => matchesToolName(tool, p));
}

/**
 * The tools a server contributes, each with its registry name: the allowed ones, in the server's
 * order; a tool whose spelt name repeats an earlier one is left out (the registry refuses duplicates).
 */
export function selectTools<T extends { name: string }>(
  server: string,
  tools: readonly T[],
  rules: { allow_tools?: readonly string[] | undefined; deny_tools: readonly string[] },
): { registryName: string; tool: T }[] {
  const out: { registryName: string; tool: T }[] = [];
  const taken = new Set<string>();
  for (const tool of tools) {
    if (!isToolAllowed(tool.name, rules)) continue;
    const registryName = mcpToolName(server, tool.name);
    if (taken.has(registryName)) continue;
    taken.add(registryName);
    out.push({ registryName, tool });
  }
  return out;
}
