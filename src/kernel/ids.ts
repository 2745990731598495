/**
 * Random identifiers with a readable prefix (`ses_…`, `run_…`); never sequential, never guessable.
 * The same draw mints API tokens, so every character must be equally likely: a byte is mapped to one
 * of 36 characters only when it is below 252 (7 × 36) and drawn again otherwise (rejection sampling);
 * `byte % 36` alone would make `0`–`3` one eighth more likely than the rest.
 */
const ALPHABET = "0123456789abcdefghijklmnopqrstuvwxyz";
/** The largest multiple of the alphabet's size that fits in a byte: bytes from here on are drawn again. */
const ACCEPT_BELOW = 256 - (256 % ALPHABET.length);

/** Fills a buffer with random bytes (the platform's CSPRNG unless a test hands its own source in). */
type ByteSource = (bytes: Uint8Array) => void;

const cryptoBytes: ByteSource = (bytes) => {
  crypto.getRandomValues(bytes);
};

/** `length` characters of the alphabet, each drawn uniformly from `source`. */
export function tokenFrom(length: number, source: ByteSource): string {
  let out = "";
  // A few spare bytes per draw: about 1.6% of bytes are rejected, so one draw is nearly always enough.
  const bytes = new Uint8Array(length + 8);
  while (out.length < length) {
    source(bytes);
    for (const b of bytes) {
      if (b >= ACCEPT_BELOW) continue;
      out += ALPHABET[b % ALPHABET.length];
      if (out.length === length) break;
    }
  }
  return out;
}

export function randomToken(length = 20): string {
  return tokenFrom(length, cryptoBytes);
}

export function newId(prefix: string): string {
  return `${prefix}_${randomToken(20)}`;
}
