/**
 * Per-isolate cache of bearer-token lookups, so a request does not wait for a D1 read to learn who is
 * asking (docs/performance.md, "Token cache"). Only known, unrevoked tokens are kept, by the SHA-256
 * of the secret, for at most TOKEN_CACHE_TTL_MS; unknown tokens are never cached (a token created on
 * another isolate works at once).
 *
 * The revocation bound: `DELETE /api/tokens/:id` drops the token from the isolate that served it at
 * once; every other isolate stops accepting it within TOKEN_CACHE_TTL_MS of the revocation.
 */
import type { Principal } from "./context.ts";
import { setBounded } from "../../kernel/memo.ts";

/** How long an isolate may keep accepting a token after it was revoked elsewhere. */
export const TOKEN_CACHE_TTL_MS = 5_000;
/** Entries kept per isolate; the oldest go first. */
const MAX_ENTRIES = 1_000;

const entries = new Map<string, { principal: Principal; until: number }>();

/** The cached principal of a token hash, or undefined when not cached (or expired). */
export function cachedPrincipal(hash: string, now: number = Date.now()): Principal | undefined {
  const entry = entries.get(hash);
  if (!entry) return undefined;
  if (entry.until <= now) {
    entries.delete(hash);
    return undefined;
  }
  return entry.principal;
}

export function rememberPrincipal(hash: string, principal: Principal, now: number = Date.now()): void {
  setBounded(entries, hash, { principal, until: now + TOKEN_CACHE_TTL_MS }, MAX_ENTRIES);
}

/**
 * Token ids known to be unrevoked, for the approver check of OAuth grants (auth.ts `tokenIsLive`),
 * under the same bound as the lookups above.
 */
const live = new Map<string, number>();

export function cachedLive(tokenId: string, now: number = Date.now()): boolean {
  const until = live.get(tokenId);
  if (until === undefined) return false;
  if (until <= now) live.delete(tokenId);
  return until > now;
}

export function rememberLive(tokenId: string, now: number = Date.now()): void {
  setBounded(live, tokenId, now + TOKEN_CACHE_TTL_MS, MAX_ENTRIES);
}

/** Drops every cached lookup of the token with this id (it was revoked on this isolate). */
export function forgetToken(tokenId: string): void {
  for (const [hash, entry] of entries) if (entry.principal.tokenId === tokenId) entries.delete(hash);
  live.delete(tokenId);
}
