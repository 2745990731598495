/**
 * The Worker's bindings, kept in one place so routes, Durable Objects and tests agree on names.
 */

export interface Env {
  DB: D1Database;
  BLOBS: R2Bucket;
  /**
   * Typed stubs come from the layer that owns each class (runtime/session/service.ts,
   * domains/governance/client.ts), so this file names no class above the storage layer.
   */
  SESSIONS: DurableObjectNamespace;
  WORKSPACES: DurableObjectNamespace;
  /** Workers AI; bound only in the deploy environment (see wrangler.toml). */
  AI?: Ai;
  /** Optional service binding outbound HTTP to tenant-chosen hosts goes through (storage/outbound.ts). */
  OUTBOUND?: { fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> };
  BEAVER_ADMIN_TOKEN?: string;
  BEAVER_SECRETS_KEY?: string;
  /** How long explicit skill and plugin writes wait for the workspace lock, in ms (default 10000; domains/governance/client.ts). */
  BEAVER_LOCK_WAIT_MS?: string;
}

/** Read a Worker var/secret by a name chosen at runtime (single-tenant secret fallback). */
export function readEnvString(env: Env, name: string): string | undefined {
  const value = (env as unknown as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}
