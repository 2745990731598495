/**
 * Reading the body of an answer from outside (storage/outbound.ts sends the request) within a byte
 * budget, so no upstream can make Beaver hold more than it chose to: the first `max` bytes
 * (`web_fetch`), a stream that fails past `max` (a git clone's packfile), or only the last `max`
 * bytes (a CI log's tail). One place for what `web_fetch`, git and the Gitea client each did alone.
 */

/** The chunks as one array. */
export function concatBytes(parts: readonly Uint8Array[]): Uint8Array {
  let size = 0;
  for (const p of parts) size += p.byteLength;
  const out = new Uint8Array(size);
  let at = 0;
  for (const p of parts) {
    out.set(p, at);
    at += p.byteLength;
  }
  return out;
}

/** The whole of an async byte stream (a request body isomorphic-git hands over). */
export async function collectBytes(body: AsyncIterable<Uint8Array> | undefined): Promise<Uint8Array | undefined> {
  if (!body) return undefined;
  const parts: Uint8Array[] = [];
  for await (const part of body) parts.push(part);
  return concatBytes(parts);
}

/** The body's first `max` bytes; `truncated` when there was more (the rest is cancelled, never read). */
export async function readHead(body: ReadableStream<Uint8Array> | null, max: number): Promise<{ bytes: Uint8Array; truncated: boolean }> {
  if (!body) return { bytes: new Uint8Array(0), truncated: false };
  const reader = body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return { bytes: concatBytes(chunks), truncated: false };
    if (size + value.byteLength > max) {
      chunks.push(value.subarray(0, max - size));
      await reader.cancel();
      return { bytes: concatBytes(chunks), truncated: true };
    }
    chunks.push(value);
    size += value.byteLength;
  }
}

/** The body chunk by chunk, throwing `tooLarge()` (and cancelling the rest) once more than `max` bytes came. */
export async function* boundedChunks(
  body: ReadableStream<Uint8Array> | null,
  max: number,
  tooLarge: () => Error,
): AsyncGenerator<Uint8Array> {
  if (!body) return;
  const reader = body.getReader();
  let size = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) return;
      size += value.byteLength;
      if (size > max) throw tooLarge();
      yield value;
    }
  } finally {
    reader.releaseLock();
    if (size > max) await body.cancel().catch(() => undefined);
  }
}

/** The last bytes of a body: the text from its first whole line, and how much was left out. */
export interface TextTail {
  text: string;
  totalBytes: number;
  truncated: boolean;
}

/**
 * Reads a body keeping only its last `max` bytes, so a log of any size costs at most `max` plus one
 * chunk of memory; when bytes were dropped the partial first line is dropped too (a cut secret would
 * otherwise slip past redaction).
 */
export async function readTail(body: ReadableStream<Uint8Array> | null, max: number): Promise<TextTail> {
  const chunks: Uint8Array[] = [];
  let kept = 0;
  let total = 0;
  if (body) {
    for await (const chunk of body) {
      chunks.push(chunk);
      kept += chunk.byteLength;
      total += chunk.byteLength;
      while (chunks.length > 1 && kept - chunks[0]!.byteLength >= max) kept -= chunks.shift()!.byteLength;
    }
  }
  const all = concatBytes(chunks);
  const truncated = total > max;
  let text = new TextDecoder().decode(truncated ? all.subarray(all.byteLength - max) : all);
  if (truncated) text = text.slice(text.indexOf("\n") + 1);
  return { text, totalBytes: total, truncated };
}
