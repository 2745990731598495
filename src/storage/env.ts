/**
 * The Worker's bindings, kept in one place so routes, Durable Objects and tests agree on names.
 */

export interface Env {
  DB: D1Database;
  BLOBS: R2Bucket;
  /**
   * Typed stubs come from the layer that owns each class (runtime/session/client.ts,
   * domains/governance/client.ts), so this file names no class above the storage layer.
   */
  SESSIONS: DurableObjectNamespace;
  WORKSPACES: DurableObjectNamespace;
  /** One ScheduleDO per workspace (domains/schedules); optional so Workers built without it still type-check. */
  SCHEDULES?: DurableObjectNamespace;
  /** One EvaluationDO per workspace and draft (domains/learning/evaluation, docs/evaluation.md); optional like SCHEDULES. */
  EVALUATIONS?: DurableObjectNamespace;
  /** Workers AI; bound only in the deploy environment (see wrangler.toml). */
  AI?: Ai;
  /**
   * The web console's static assets (`[assets]` in wrangler.toml, docs/console.md). Paths the Worker does
   * not own never reach it; optional because the Worker itself serves no asset.
   */
  ASSETS?: Fetcher;
  /**
   * Grants, clients and hashed tokens of Beaver's OAuth authorization server for `/mcp`
   * (`@cloudflare/workers-oauth-provider`, edge/oauth/provider.ts); without it `/mcp` takes static tokens only.
   */
  OAUTH_KV?: KVNamespace;
  /** Optional service binding outbound HTTP to tenant-chosen hosts goes through (storage/outbound.ts). */
  OUTBOUND?: { fetch(input: RequestInfo | URL, init?: RequestInit): Promise<Response> };
  /**
   * The shell Worker (shell/index.ts, `[[services]]` in wrangler.toml): the `bash` tool's interpreter, in a
   * Worker of its own so this one's bundle leaves it out (docs/workspace.md, "The shell"). Its RPC interface
   * is the runtime's shell-protocol.ts; absent, `bash` answers that the shell is not available.
   */
  SHELL?: Fetcher;
  /**
   * Rate Limiting bindings (`[[ratelimits]]` in wrangler.toml, docs/limits.md): runs started per token
   * and per workspace (messages, chat), webhook deliveries per workspace. Absent ones fail open.
   */
  RATE_LIMIT_TOKEN?: RateLimit;
  RATE_LIMIT_WORKSPACE?: RateLimit;
  RATE_LIMIT_WEBHOOK?: RateLimit;
  /** Operator overrides of the size limits, list budget and quotas: a JSON object (storage/limits.ts). */
  BEAVER_LIMITS?: string | Record<string, unknown>;
  BEAVER_ADMIN_TOKEN?: string;
  BEAVER_SECRETS_KEY?: string;
  /** Comma-separated Worker secret names lent to the workspaces below (storage/secrets/store.ts); none by default. */
  BEAVER_SHARED_SECRETS?: string;
  /** Comma-separated workspace ids those names are lent to; `default` when unset. */
  BEAVER_SHARED_SECRETS_WORKSPACES?: string;
  /** Levels of objects/arrays a JSON request body may nest (edge/http/json-body.ts); 32 when unset. */
  BEAVER_MAX_JSON_DEPTH?: string;
  /** `true` lets tenant-chosen URLs reach loopback and private networks (local model servers): storage/egress.ts. */
  BEAVER_ALLOW_PRIVATE_EGRESS?: string;
  /** How long explicit skill and plugin writes wait for the workspace lock, in ms (default 10000; domains/governance/client.ts). */
  BEAVER_LOCK_WAIT_MS?: string;
  /** Comma-separated origins browser apps may call from (edge/http/cors.ts, docs/cors.md); CORS is off when unset. */
  BEAVER_CORS_ORIGINS?: string;
  /** `all` writes an access line for every request; otherwise only for error statuses and slow answers (edge/http/request-context.ts). */
  BEAVER_ACCESS_LOG?: string;
}

/** The platform's Rate Limiting binding: `success: false` once the key has used its limit this period. */
export interface RateLimit {
  limit(options: { key: string }): Promise<{ success: boolean }>;
}

/** Read a Worker var/secret by a name chosen at runtime (the lent Worker secrets of storage/secrets/store.ts). */
export function readEnvString(env: Env, name: string): string | undefined {
  const value = (env as unknown as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}
