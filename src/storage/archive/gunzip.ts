/**
 * gzip decompression with a hard cap on output bytes, using the runtime's native
 * `DecompressionStream` (zlib in workerd and Node), so a gzip bomb is stopped after `maxBytes`
 * instead of being inflated into memory.
 */
import { archiveUnreadable } from "./errors.ts";
import { OutputTooLarge, readBounded } from "./bounded.ts";

export async function gunzipBounded(bytes: Uint8Array, maxBytes: number): Promise<Uint8Array> {
  try {
    return await readBounded(new Blob([bytes]).stream().pipeThrough(new DecompressionStream("gzip")), maxBytes);
  } catch (e) {
    if (e instanceof OutputTooLarge) throw e;
    throw archiveUnreadable(`gzip data is corrupt (${e instanceof Error ? e.message : String(e)})`);
  }
}
