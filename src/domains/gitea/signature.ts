/**
 * Gitea's webhook signature: the lowercase hex HMAC-SHA256 of the raw body under the webhook secret,
 * sent as `X-Gitea-Signature: <hex>` and (GitHub-style) `X-Hub-Signature-256: sha256=<hex>`.
 * Compared in constant time; either header may prove the delivery.
 */
import { hmacSha256Hex, timingSafeEqualStr } from "../../kernel/hash.ts";

export interface SignatureHeaders {
  giteaSignature: string | null;
  hubSignature256: string | null;
}

export function signatureHeaders(headers: Headers): SignatureHeaders {
  return { giteaSignature: headers.get("X-Gitea-Signature"), hubSignature256: headers.get("X-Hub-Signature-256") };
}

/** Hex digests the headers claim (normalised to lower case), at most one per header. */
export function claimedDigests(h: SignatureHeaders): string[] {
  const out: string[] = [];
  const gitea = h.giteaSignature?.trim();
  if (gitea) out.push(gitea.toLowerCase());
  const hub = h.hubSignature256?.trim();
  if (hub?.toLowerCase().startsWith("sha256=")) out.push(hub.slice("sha256=".length).toLowerCase());
  return out;
}

export async function verifySignature(secret: string, body: Uint8Array, h: SignatureHeaders): Promise<boolean> {
  const claims = claimedDigests(h);
  if (!claims.length) return false;
  const expected = await hmacSha256Hex(secret, body);
  let ok = false;
  // Check every claim so the time taken does not say which header matched.
  for (const claim of claims) ok = timingSafeEqualStr(claim, expected) || ok;
  return ok;
}
