/**
 * The Worker's bindings and the Hono context types every route shares.
 * Kept in one place so routes, Durable Objects and tests agree on names.
 */
import type { SessionDO } from "../runtime/session/session-do.ts";
import type { WorkspaceDO } from "../domains/governance/workspace-do.ts";
import type { Principal } from "../edge/http/auth.ts";

export interface Env {
  DB: D1Database;
  BLOBS: R2Bucket;
  SESSIONS: DurableObjectNamespace<SessionDO>;
  WORKSPACES: DurableObjectNamespace<WorkspaceDO>;
  /** Workers AI; bound only in the deploy environment (see wrangler.toml). */
  AI?: Ai;
  BEAVER_ADMIN_TOKEN?: string;
  BEAVER_SECRETS_KEY?: string;
}

export interface AppVariables {
  principal: Principal;
  /** Set by the JSON body parser when a JSON body did not parse (see http/json-body.ts). */
  malformedJson?: boolean;
}

export type AppEnv = { Bindings: Env; Variables: AppVariables };

/** Read a Worker var/secret by a name chosen at runtime (single-tenant secret fallback). */
export function readEnvString(env: Env, name: string): string | undefined {
  const value = (env as unknown as Record<string, unknown>)[name];
  return typeof value === "string" ? value : undefined;
}
