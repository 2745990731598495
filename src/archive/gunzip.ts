/**
 * gzip decompression with a hard cap on output bytes, using the runtime's native
 * `DecompressionStream` (zlib in workerd and Node), so a gzip bomb is stopped after `maxBytes`
 * instead of being inflated into memory.
 */
import { archiveUnreadable } from "./errors.ts";

export class OutputTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes once unpacked`);
  }
}

export async function gunzipBounded(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  const stream = new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip"));
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      total += value.byteLength;
      if (total > maxBytes) {
        await reader.cancel();
        throw new OutputTooLarge(maxBytes);
      }
      chunks.push(value);
    }
  } catch (e) {
    if (e instanceof OutputTooLarge) throw e;
    throw archiveUnreadable(`gzip data is corrupt (${e instanceof Error ? e.message : String(e)})`);
  }
  const out = new Uint8Array(total);
  let at = 0;
  for (const c of chunks) {
    out.set(c, at);
    at += c.byteLength;
  }
  return out;
}
