/**
 * Short-lived, single-use stream tickets: browsers cannot set an Authorization header on a
 * WebSocket, so a client trades its bearer token for a ticket and puts it in the stream URL.
 * The ticket is signed (HMAC with a key derived from BEAVER_SECRETS_KEY) and names its workspace,
 * session and expiry; the session's Durable Object remembers used nonces until they expire, so a
 * ticket opens at most one stream.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { hmacSha256Hex, timingSafeEqualStr } from "../../kernel/hash.ts";
import { randomToken } from "../../kernel/ids.ts";

export const TICKET_TTL_MS = 60_000;

export interface TicketClaims {
  /** workspace id */
  w: string;
  /** session id */
  s: string;
  /** expiry, epoch ms */
  e: number;
  /** nonce: what makes it single-use */
  n: string;
  /** the token could read hidden events (admin) */
  a: boolean;
  /** the token could send (member or admin): the WebSocket takes client frames (absent on older tickets: no) */
  m?: boolean;
  /** the token's id, so what the stream sends counts against that token's rate limit (absent on older tickets) */
  t?: string;
}

function keyOf(env: Env): string {
  const key = env.BEAVER_SECRETS_KEY;
  if (!key) throw new AppError("server_misconfigured", "BEAVER_SECRETS_KEY is not set; stream tickets cannot be signed");
  return `stream-ticket:${key}`;
}

const b64url = (text: string) => btoa(text).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
const fromB64url = (text: string) => atob(text.replace(/-/g, "+").replace(/_/g, "/"));

export async function issueTicket(
  env: Env,
  claims: Omit<TicketClaims, "e" | "n">,
  now = Date.now(),
): Promise<{ ticket: string; expires_at: number }> {
  const full: TicketClaims = { ...claims, e: now + TICKET_TTL_MS, n: randomToken(24) };
  const body = b64url(JSON.stringify(full));
  const sig = await hmacSha256Hex(keyOf(env), body);
  return { ticket: `${body}.${sig}`, expires_at: full.e };
}

/** Checks signature, expiry and session; the caller must still spend the nonce in the session's DO. */
export async function verifyTicket(env: Env, ticket: string, sessionId: string, now = Date.now()): Promise<TicketClaims> {
  const invalid = () => new AppError("unauthorized", "Invalid or expired stream ticket");
  const [body, sig, extra] = ticket.split(".");
  if (!body || !sig || extra !== undefined) throw invalid();
  if (!timingSafeEqualStr(await hmacSha256Hex(keyOf(env), body), sig)) throw invalid();
  let claims: TicketClaims;
  try {
    claims = JSON.parse(fromB64url(body)) as TicketClaims;
  } catch {
    throw invalid();
  }
  if (claims.s !== sessionId || typeof claims.e !== "number" || claims.e < now) throw invalid();
  return claims;
}
