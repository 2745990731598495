/**
 * Who sent a run's message, carried in the run's `tool_data` (as a schedule's run carries
 * `scheduled_by`): the API token (or OAuth grant, `grant:<id>`) behind the request. The HTTP faces
 * set it; tools and tool sources that keep something per member read it — a personal MCP server's
 * OAuth tokens (docs/mcp.md, "Personal servers"). Delegated children and team turns inherit their
 * parent's (they work on the sender's behalf); runs nobody sent through the API (schedules, toolchain
 * tasks, mail) carry none.
 */

export const SENT_BY_KEY = "sent_by";

/** The `tool_data` entry naming the sender. */
export const sentByData = (tokenId: string): Record<string, unknown> => ({ [SENT_BY_KEY]: tokenId });

/** The sender a run's `tool_data` names, if any. */
export function sentByOf(data: Readonly<Record<string, unknown>> | undefined): string | null {
  const value = data?.[SENT_BY_KEY];
  return typeof value === "string" && value !== "" ? value : null;
}
