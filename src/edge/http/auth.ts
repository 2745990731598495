/**
 * Bearer-token authentication and scope checks.
 * The Worker secret BEAVER_ADMIN_TOKEN is the bootstrap principal (admin of `default`, may manage
 * workspaces); every other token is looked up by its SHA-256 hash and carries explicit scopes.
 */
import { createMiddleware } from "hono/factory";
import { and, eq, isNull } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { SCOPES, type AppEnv, type Principal, type Scope } from "./context.ts";

export { SCOPES, type Principal, type Scope };
import { AppError } from "../../kernel/errors.ts";
import { addLogContext } from "../../kernel/log.ts";
import { sha256Hex, timingSafeEqualStr } from "../../kernel/hash.ts";
import { makeDb } from "../../storage/db/client.ts";
import { apiTokens } from "../../storage/db/schema.ts";
import { ensureDefaultWorkspace } from "../../storage/workspaces.ts";
import { cachedLive, cachedPrincipal, rememberLive, rememberPrincipal } from "./token-cache.ts";
import { markedPrincipal } from "../oauth/principal.ts";

const RANK: Record<Scope, number> = { read: 1, member: 2, admin: 3 };

export function hasScope(principal: Principal, needed: Scope): boolean {
  return principal.scopes.some((s) => RANK[s] >= RANK[needed]);
}

export function bearerOf(header: string | undefined | null): string | null {
  if (!header) return null;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header);
  return match?.[1] ?? null;
}

/**
 * Resolve a bearer secret to a principal, or null when it is unknown or revoked. Known tokens are
 * cached per isolate for a few seconds (token-cache.ts: the revocation bound).
 */
export async function principalForToken(env: Env, secret: string): Promise<Principal | null> {
  const admin = env.BEAVER_ADMIN_TOKEN;
  if (admin && timingSafeEqualStr(secret, admin)) {
    await ensureDefaultWorkspace(env);
    return { workspaceId: "default", tokenId: "bootstrap", scopes: ["admin"], bootstrap: true };
  }
  const hash = await sha256Hex(secret);
  const cached = cachedPrincipal(hash);
  if (cached) return cached;
  const row = await makeDb(env.DB)
    .select()
    .from(apiTokens)
    .where(and(eq(apiTokens.tokenHash, hash), isNull(apiTokens.revokedAt)))
    .get();
  if (!row) return null;
  const principal: Principal = { workspaceId: row.workspaceId, tokenId: row.id, scopes: parseScopes(row.scopes), bootstrap: false };
  rememberPrincipal(hash, principal);
  return principal;
}

/**
 * Whether the API token with this id still stands: what an OAuth grant it approved rests on
 * (edge/oauth/provider.ts; docs/mcp.md, "Add Beaver to your assistant"). The bootstrap principal
 * stands while BEAVER_ADMIN_TOKEN is set; any other id is an API token's (approving takes an `/api`
 * request, which only API tokens make), and an id found nowhere does not stand. Live answers are
 * cached like token lookups (token-cache.ts: the revocation bound).
 */
export async function tokenIsLive(env: Env, tokenId: string): Promise<boolean> {
  if (tokenId === "bootstrap") return !!env.BEAVER_ADMIN_TOKEN;
  if (cachedLive(tokenId)) return true;
  const row = await makeDb(env.DB)
    .select({ id: apiTokens.id })
    .from(apiTokens)
    .where(and(eq(apiTokens.id, tokenId), isNull(apiTokens.revokedAt)))
    .get();
  if (row) rememberLive(tokenId);
  return !!row;
}

function parseScopes(json: string): Scope[] {
  try {
    const value: unknown = JSON.parse(json);
    return Array.isArray(value) ? value.filter((s): s is Scope => (SCOPES as readonly string[]).includes(s)) : [];
  } catch {
    return [];
  }
}

/**
 * Require a valid bearer token; sets `principal`. 401 when missing or invalid. A request the OAuth
 * provider already authenticated (`/mcp`, and the MCP tools' in-process calls) carries its principal
 * on its ExecutionContext (edge/oauth/principal.ts).
 */
export const authenticate = createMiddleware<AppEnv>(async (c, next) => {
  const marked = markedPrincipal(executionContextOf(c));
  if (marked) {
    c.set("principal", marked);
    addLogContext({ workspace_id: marked.workspaceId });
    return next();
  }
  const secret = bearerOf(c.req.header("Authorization"));
  if (!secret) throw new AppError("unauthorized", "Missing bearer token (Authorization: Bearer <token>)");
  const principal = await principalForToken(c.env, secret);
  if (!principal) throw new AppError("unauthorized", "Invalid or revoked token");
  c.set("principal", principal);
  addLogContext({ workspace_id: principal.workspaceId });
  await next();
});

/** The request's ExecutionContext, or undefined where there is none (Hono throws on access then). */
function executionContextOf(c: { executionCtx: object }): object | undefined {
  try {
    return c.executionCtx;
  } catch {
    return undefined;
  }
}

/** Require at least `scope` (admin ⊇ member ⊇ read). 403 otherwise. */
export function requireScope(scope: Scope) {
  return createMiddleware<AppEnv>(async (c, next) => {
    if (!hasScope(c.get("principal"), scope)) {
      throw new AppError("forbidden", `This action needs the '${scope}' scope`);
    }
    await next();
  });
}

/** Throwing variant for handlers that decide the needed scope from the request. */
export function assertScope(principal: Principal, scope: Scope): void {
  if (!hasScope(principal, scope)) throw new AppError("forbidden", `This action needs the '${scope}' scope`);
}
