/**
 * Tool discovery with a cache (docs/mcp.md, "Discovery and its cache"): a server's `tools/list`
 * (all pages) is kept in the isolate's memory per workspace and server configuration, for
 * `DISCOVERY_TTL_MS` after a success and, after failures, for the kernel's jittered backoff over
 * `FAILURE_TTL_MS` (kernel/backoff.ts: 15–30 s after the first, doubling up to `FAILURE_MAX_TTL_MS`),
 * so a server that is down does not cost every run a connection attempt. A `notifications/tools/list_changed` seen on any
 * connection to the server drops the entry, so the next run lists again. Isolate memory, not D1:
 * the list is cheap to fetch again, differs per secret-bearing configuration, and a stale isolate
 * only costs one extra `tools/list`.
 */
import type { Env } from "../../storage/env.ts";
import type { McpServerConfig } from "./config.ts";
import { withMcpClient, McpFailure, type McpFailureCode } from "./connection.ts";
import { setBounded } from "../../kernel/memo.ts";
import { backoffDelay } from "../../kernel/backoff.ts";

export const DISCOVERY_TTL_MS = 5 * 60_000;
export const FAILURE_TTL_MS = 30_000;
/** The longest a failed discovery is remembered (a server down for long is still tried every few minutes). */
export const FAILURE_MAX_TTL_MS = 5 * 60_000;
/** Pages of `tools/list` read at most (a server that pages forever is cut off). */
export const MAX_LIST_PAGES = 20;
/** Tools kept per server at most. */
export const MAX_TOOLS_PER_SERVER = 500;
/** Cache entries per isolate; the oldest goes first. */
const MAX_ENTRIES = 1_000;

/** What Beaver keeps of one listed tool. */
export interface McpToolInfo {
  name: string;
  title?: string;
  description?: string;
  inputSchema: unknown;
  annotations?: { readOnlyHint?: boolean; idempotentHint?: boolean; destructiveHint?: boolean; title?: string };
}

export type Discovery =
  | { ok: true; tools: McpToolInfo[]; discovered_at: number; cached: boolean }
  | { ok: false; error: { code: McpFailureCode; message: string }; discovered_at: number; cached: boolean };

interface Entry {
  value: Discovery;
  expiresAt: number;
  /** Consecutive failed discoveries (drives the backoff); 0 after a success. */
  failures: number;
}

const cache = new Map<string, Entry>();

/** Per workspace and configuration; per member too for a personal server (each member has their own tokens). */
export function cacheKey(workspaceId: string, server: McpServerConfig, member?: string | null): string {
  return `${workspaceId}\n${server.personal ? `${member ?? ""}\n` : ""}${JSON.stringify(server)}`;
}

/** Forgets every cached discovery (tests; a configuration change needs none: the key includes it). */
export function clearDiscoveryCache(): void {
  cache.clear();
}

/** Forgets the cached discovery of one server of one workspace (its tool list changed). */
export function invalidateDiscovery(workspaceId: string, server: McpServerConfig, member?: string | null): void {
  cache.delete(cacheKey(workspaceId, server, member));
}

/** The server's tools, from the cache while fresh (unless `refresh`), else listed now. Never throws. */
export async function discoverTools(opts: {
  env: Env;
  workspaceId: string;
  server: McpServerConfig;
  /** Whose tokens a personal server uses (docs/mcp.md, "Personal servers"). */
  member?: string | null;
  signal?: AbortSignal;
  refresh?: boolean;
  now?: () => number;
}): Promise<Discovery> {
  const now = opts.now ?? Date.now;
  const key = cacheKey(opts.workspaceId, opts.server, opts.member);
  const hit = cache.get(key);
  if (hit && !opts.refresh && hit.expiresAt > now()) return { ...hit.value, cached: true };

  let value: Discovery;
  try {
    const tools = await withMcpClient(
      {
        env: opts.env,
        workspaceId: opts.workspaceId,
        server: opts.server,
        member: opts.member ?? null,
        ...(opts.signal ? { signal: opts.signal } : {}),
        onToolsChanged: () => cache.delete(key),
      },
      async (client, request) => {
        const out: McpToolInfo[] = [];
        let cursor: string | undefined;
        for (let page = 0; page < MAX_LIST_PAGES && out.length < MAX_TOOLS_PER_SERVER; page++) {
          const listed = await client.listTools(cursor ? { cursor } : {}, request);
          out.push(...listed.tools.map(toolInfo));
          cursor = listed.nextCursor;
          if (!cursor) break;
        }
        return out.slice(0, MAX_TOOLS_PER_SERVER);
      },
    );
    value = { ok: true, tools, discovered_at: now(), cached: false };
  } catch (err) {
    const failure = err instanceof McpFailure ? err : new McpFailure("mcp_unavailable", String(err));
    value = { ok: false, error: { code: failure.code, message: failure.message }, discovered_at: now(), cached: false };
    // A cancelled run says nothing about the server: nothing to remember.
    if (failure.code === "cancelled") return value;
  }
  const failures = value.ok ? 0 : (hit?.failures ?? 0) + 1;
  const ttl = value.ok ? DISCOVERY_TTL_MS : backoffDelay(failures, { baseMs: FAILURE_TTL_MS, maxMs: FAILURE_MAX_TTL_MS });
  remember(key, { value, expiresAt: now() + ttl, failures });
  return value;
}

function remember(key: string, entry: Entry): void {
  setBounded(cache, key, entry, MAX_ENTRIES);
}

function toolInfo(tool: {
  name: string;
  title?: string | undefined;
  description?: string | undefined;
  inputSchema: unknown;
  annotations?: McpToolInfo["annotations"] | undefined;
}): McpToolInfo {
  return {
    name: tool.name,
    ...(tool.title ? { title: tool.title } : {}),
    ...(tool.description ? { description: tool.description } : {}),
    inputSchema: tool.inputSchema,
    ...(tool.annotations ? { annotations: tool.annotations } : {}),
  };
}
