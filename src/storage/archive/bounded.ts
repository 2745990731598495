/**
 * Reading bytes into memory with a hard cap: an archive body, a gzip stream or one zip entry is cut
 * off once it passes its limit instead of being buffered whole, whatever its headers claim.
 */
import { concatBytes } from "../outbound-body.ts";

/** More bytes arrived than the caller allowed. */
export class OutputTooLarge extends Error {
  constructor(readonly limit: number) {
    super(`more than ${limit} bytes once unpacked`);
  }
}

/** All bytes of `stream`, or `OutputTooLarge` (the stream cancelled) once more than `maxBytes` arrive. */
export async function readBounded(stream: ReadableStream<Uint8Array>, maxBytes: number): Promise<Uint8Array> {
  const reader = stream.getReader();
  const chunks: Uint8Array[] = [];
  let total = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return concatBytes(chunks);
    total += value.byteLength;
    if (total > maxBytes) {
      await reader.cancel();
      throw new OutputTooLarge(maxBytes);
    }
    chunks.push(value);
  }
}

/** A writable that keeps what it is given up to `limit` bytes and errors (remembering why) past it. */
export function boundedSink(limit: number): { writable: WritableStream<Uint8Array>; bytes: () => Uint8Array; overflowed: () => boolean } {
  const chunks: Uint8Array[] = [];
  let total = 0;
  let over = false;
  const writable = new WritableStream<Uint8Array>({
    write(chunk) {
      total += chunk.byteLength;
      if (total > limit) {
        over = true;
        throw new OutputTooLarge(limit);
      }
      chunks.push(chunk);
    },
  });
  return { writable, bytes: () => concatBytes(chunks), overflowed: () => over };
}
