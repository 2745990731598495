/**
 * A git packfile read as it arrives (docs/workspace.md, "Git", its memory paragraph; git's
 * gitformat-pack): the header, then each entry's type, size and zlib data, inflated one at a time
 * with pako's streaming `Inflate` — the one inflater that tells where a zlib stream ends inside a
 * larger buffer (the platform's DecompressionStream does not), and the one isomorphic-git already
 * bundles. An entry is either a whole object or a delta against an earlier entry (by pack offset) or
 * an object id; resolving deltas needs storage and is the caller's (clone.ts).
 *
 * Every declared and actual size is checked against `maxObjectBytes` before anything is allocated, so
 * a hostile pack cannot make one entry larger than a workspace file may be.
 */
import { Inflate } from "pako";
import { ByteReader, TruncatedError } from "./byte-reader.ts";

export type ObjectType = "commit" | "tree" | "blob" | "tag";
const TYPES: Record<number, ObjectType> = { 1: "commit", 2: "tree", 3: "blob", 4: "tag" };

export type PackEntry =
  | { offset: number; kind: "object"; type: ObjectType; data: Uint8Array }
  | { offset: number; kind: "ofs-delta"; baseOffset: number; data: Uint8Array }
  | { offset: number; kind: "ref-delta"; baseOid: string; data: Uint8Array };

export class PackFormatError extends Error {
  constructor(message: string) {
    super(`the remote sent a malformed pack: ${message}`);
    this.name = "PackFormatError";
  }
}

export class ObjectTooLargeError extends Error {
  constructor(
    readonly size: number,
    readonly limit: number,
  ) {
    super(`the repository holds an object of ${size} bytes; one file may hold ${limit} (workspace_file_bytes)`);
    this.name = "ObjectTooLargeError";
  }
}

const hex = (bytes: Uint8Array) => Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");

/**
 * Inflates the zlib stream at the reader's position into exactly `size` bytes, leaving what follows it
 * unread. pako's output buffer is made one byte larger than the entry, so the whole entry lands in the
 * one buffer it allocates (no chunk list, no copy) and a stream that would inflate to more shows as a
 * second chunk.
 */
async function inflateEntry(reader: ByteReader, size: number): Promise<Uint8Array> {
  const chunks: Uint8Array[] = [];
  let status: number | null = null;
  const inflater = new Inflate({ chunkSize: size + 1 });
  inflater.onData = (chunk: Uint8Array) => {
    chunks.push(chunk);
  };
  inflater.onEnd = (s: number) => {
    status = s;
  };
  while (status === null) {
    const chunk = await reader.chunk();
    if (chunk === null) throw new TruncatedError("the pack");
    inflater.push(chunk, false);
    if (chunks.length > 1) throw new PackFormatError(`an entry inflates to more than its declared ${size} bytes`);
    // pako keeps the stream state on `strm` (not in its types): what the ended stream left of the chunk.
    if (status !== null) reader.unread((inflater as Inflate & { strm: { avail_in: number } }).strm.avail_in);
  }
  if (status !== 0) throw new PackFormatError(`zlib: ${inflater.msg || `status ${String(status)}`}`);
  const out = chunks[0] ?? new Uint8Array(0);
  if (out.byteLength !== size) throw new PackFormatError(`an entry inflates to ${out.byteLength} bytes, not its declared ${size}`);
  return out;
}

/** The pack's entries in order. The trailer's checksum is not recomputed: see clone.ts for why. */
export async function* readPack(source: AsyncIterable<Uint8Array>, maxObjectBytes: number): AsyncGenerator<PackEntry> {
  const reader = new ByteReader(source);
  const head = await reader.read(12, "the pack header");
  if (head[0] !== 0x50 || head[1] !== 0x41 || head[2] !== 0x43 || head[3] !== 0x4b) throw new PackFormatError("no PACK signature");
  const view = new DataView(head.buffer, head.byteOffset, 12);
  const version = view.getUint32(4);
  if (version !== 2 && version !== 3) throw new PackFormatError(`version ${version}`);
  const count = view.getUint32(8);
  for (let n = 0; n < count; n++) {
    const offset = reader.offset;
    let c = await reader.byte("an entry header");
    const type = (c >> 4) & 7;
    let size = c & 15;
    let scale = 16;
    while (c & 0x80) {
      c = await reader.byte("an entry header");
      size += (c & 0x7f) * scale;
      scale *= 128;
      if (scale > 2 ** 53) throw new PackFormatError("an entry's size does not fit");
    }
    if (size > maxObjectBytes) throw new ObjectTooLargeError(size, maxObjectBytes);
    if (type === 6) {
      c = await reader.byte("a delta's base offset");
      let back = c & 0x7f;
      while (c & 0x80) {
        c = await reader.byte("a delta's base offset");
        back = (back + 1) * 128 + (c & 0x7f);
      }
      if (back <= 0 || back > offset) throw new PackFormatError("a delta's base offset points outside the pack");
      yield { offset, kind: "ofs-delta", baseOffset: offset - back, data: await inflateEntry(reader, size) };
    } else if (type === 7) {
      const baseOid = hex(await reader.read(20, "a delta's base id"));
      yield { offset, kind: "ref-delta", baseOid, data: await inflateEntry(reader, size) };
    } else {
      const t = TYPES[type];
      if (!t) throw new PackFormatError(`entry type ${type}`);
      yield { offset, kind: "object", type: t, data: await inflateEntry(reader, size) };
    }
  }
  await reader.read(20, "the pack's trailer");
  if (!(await reader.atEnd())) throw new PackFormatError("bytes after the pack's trailer");
}
