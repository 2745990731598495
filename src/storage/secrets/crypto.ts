/**
 * AES-GCM encryption of secret values at rest. The 256-bit key is derived from the Worker secret
 * BEAVER_SECRETS_KEY with HKDF-SHA-256, and the additional data binds each ciphertext to its
 * workspace and name, so a row copied elsewhere does not decrypt.
 */
import { AppError } from "../../kernel/errors.ts";

const enc = new TextEncoder();
const dec = new TextDecoder();

function b64(bytes: Uint8Array): string {
  let s = "";
  for (const b of bytes) s += String.fromCharCode(b);
  return btoa(s);
}

function unb64(text: string): Uint8Array {
  const s = atob(text);
  const out = new Uint8Array(s.length);
  for (let i = 0; i < s.length; i++) out[i] = s.charCodeAt(i);
  return out;
}

/**
 * Derived keys per isolate, by master key material (docs/performance.md, "Secret keys"): HKDF is
 * deterministic, so deriving once per isolate gives the same key as deriving per read. A changed
 * BEAVER_SECRETS_KEY is a different entry; non-extractable keys never leave WebCrypto.
 */
const derived = new Map<string, Promise<CryptoKey>>();

function deriveKey(master: string | undefined): Promise<CryptoKey> {
  if (!master) {
    return Promise.reject(new AppError("server_misconfigured", "BEAVER_SECRETS_KEY is not set; secrets cannot be stored or read"));
  }
  let key = derived.get(master);
  if (!key) {
    key = deriveFresh(master);
    // A failed derivation is not kept: the next read tries again.
    key.catch(() => derived.delete(master));
    if (derived.size >= 4) derived.clear(); // a rotated key leaves at most a few stale entries behind
    derived.set(master, key);
  }
  return key;
}

async function deriveFresh(master: string): Promise<CryptoKey> {
  const base = await crypto.subtle.importKey("raw", enc.encode(master), "HKDF", false, ["deriveKey"]);
  return crypto.subtle.deriveKey(
    { name: "HKDF", hash: "SHA-256", salt: enc.encode("beaver-secrets-v1"), info: enc.encode("aes-gcm-256") },
    base,
    { name: "AES-GCM", length: 256 },
    false,
    ["encrypt", "decrypt"],
  );
}

export interface Sealed {
  ciphertext: string;
  iv: string;
}

export async function seal(master: string | undefined, aad: string, plaintext: string): Promise<Sealed> {
  const key = await deriveKey(master);
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const ct = await crypto.subtle.encrypt({ name: "AES-GCM", iv, additionalData: enc.encode(aad) }, key, enc.encode(plaintext));
  return { ciphertext: b64(new Uint8Array(ct)), iv: b64(iv) };
}

export async function unseal(master: string | undefined, aad: string, sealed: Sealed): Promise<string> {
  const key = await deriveKey(master);
  const pt = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: unb64(sealed.iv), additionalData: enc.encode(aad) },
    key,
    unb64(sealed.ciphertext),
  );
  return dec.decode(pt);
}
