/** SHA-256 and HMAC helpers over WebCrypto, plus a constant-time string comparison. */
import { setBounded } from "./memo.ts";
const encoder = new TextEncoder();

export function toHex(bytes: ArrayBuffer | Uint8Array): string {
  const view = bytes instanceof Uint8Array ? bytes : new Uint8Array(bytes);
  let out = "";
  for (const b of view) out += b.toString(16).padStart(2, "0");
  return out;
}

export async function sha256Hex(data: string | Uint8Array | ArrayBuffer): Promise<string> {
  const input = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.digest("SHA-256", input));
}

export async function hmacSha256Hex(key: string | Uint8Array, data: string | Uint8Array): Promise<string> {
  const cryptoKey = typeof key === "string" ? await hmacKeyOf(key) : await importHmacKey(key);
  const input = typeof data === "string" ? encoder.encode(data) : data;
  return toHex(await crypto.subtle.sign("HMAC", cryptoKey, input));
}

function importHmacKey(raw: Uint8Array): Promise<CryptoKey> {
  return crypto.subtle.importKey("raw", raw, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
}

/**
 * Imported HMAC keys by their secret, per isolate: every webhook delivery checks its signature with
 * its workspace's secret, and in the webhook profile the import was most of the HMAC's CPU
 * (docs/performance.md, "Webhook reads as prepared statements, HMAC keys kept"). Non-extractable keys; the secrets themselves are already held by the secret cache. Only
 * settled imports are kept, at most 64 (oldest out first).
 */
const hmacKeys = new Map<string, CryptoKey>();
const MAX_HMAC_KEYS = 64;

async function hmacKeyOf(secret: string): Promise<CryptoKey> {
  const known = hmacKeys.get(secret);
  if (known) return known;
  const imported = await importHmacKey(encoder.encode(secret));
  setBounded(hmacKeys, secret, imported, MAX_HMAC_KEYS);
  return imported;
}

/** Compare two strings without leaking where they differ (length still leaks, as it must). */
export function timingSafeEqualStr(a: string, b: string): boolean {
  const ab = encoder.encode(a);
  const bb = encoder.encode(b);
  if (ab.byteLength !== bb.byteLength) return false;
  let diff = 0;
  for (let i = 0; i < ab.byteLength; i++) diff |= (ab[i] ?? 0) ^ (bb[i] ?? 0);
  return diff === 0;
}
