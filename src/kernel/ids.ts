/** Random identifiers with a readable prefix (`ses_…`, `run_…`); never sequential, never guessable. */
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";

export function randomToken(length = 20): string {
  const bytes = new Uint8Array(length);
  crypto.getRandomValues(bytes);
  let out = "";
  for (const b of bytes) out += ALPHABET[b % 36];
  return out;
}

export function newId(prefix: string): string {
  return `${prefix}_${randomToken(20)}`;
}
