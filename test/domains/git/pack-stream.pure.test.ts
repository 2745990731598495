// The clone's streaming parts (docs/workspace.md, "Git: the clone streams") on packs made by git
// itself (test/fixtures/git/make-packs.sh): deltas by offset and by object id, and git upload-pack's
// real answer to a depth-1 clone request. Fed one byte range at a time, as the network would, the
// reader must give back exactly the objects git lists, by id (computed here from the content, so a
// byte wrong anywhere fails); damaged packs and deltas are errors that say what is wrong.
import { describe, expect, it } from "vitest";
import packs from "../../fixtures/git/packs.json";
import { readPack, type ObjectType, type PackEntry } from "../../../src/domains/git/pack-reader.ts";
import { applyDelta } from "../../../src/domains/git/delta.ts";
import { readUploadPackAnswer, uploadPackRequest } from "../../../src/domains/git/upload-pack.ts";

const bytes = (b64: string) => Uint8Array.from(atob(b64), (c) => c.charCodeAt(0));

/** The bytes in chunks of `size`, as a network stream delivers them. */
async function* chunked(data: Uint8Array, size: number): AsyncGenerator<Uint8Array> {
  for (let at = 0; at < data.byteLength; at += size) yield data.slice(at, at + size);
}

async function oidOf(type: ObjectType, data: Uint8Array): Promise<string> {
  const head = new TextEncoder().encode(`${type} ${data.byteLength}\0`);
  const all = new Uint8Array(head.byteLength + data.byteLength);
  all.set(head);
  all.set(data, head.byteLength);
  return Array.from(new Uint8Array(await crypto.subtle.digest("SHA-1", all)), (b) => b.toString(16).padStart(2, "0")).join("");
}

/** Reads a pack and resolves its deltas in memory (clone.ts does it against storage). */
async function objectsOf(source: AsyncIterable<Uint8Array>, max = 1 << 20) {
  const byOffset = new Map<number, { type: ObjectType; data: Uint8Array; oid: string }>();
  const byOid = new Map<string, { type: ObjectType; data: Uint8Array }>();
  const kinds: PackEntry["kind"][] = [];
  for await (const e of readPack(source, max)) {
    kinds.push(e.kind);
    const base = e.kind === "ofs-delta" ? byOffset.get(e.baseOffset) : e.kind === "ref-delta" ? byOid.get(e.baseOid) : null;
    const type = e.kind === "object" ? e.type : base!.type;
    const data = e.kind === "object" ? e.data : applyDelta(e.data, base!.data, max);
    const oid = await oidOf(type, data);
    byOffset.set(e.offset, { type, data, oid });
    byOid.set(oid, { type, data });
  }
  return { kinds, objects: Object.fromEntries([...byOid].map(([oid, o]) => [oid, o.type])) };
}

describe("reading git's packs as they arrive", () => {
  it("gives back every object git packed, deltas by offset and by id resolved, whatever the chunk size", async () => {
    for (const size of [1, 7, 4096]) {
      const ofs = await objectsOf(chunked(bytes(packs.ofs), size));
      expect(ofs.objects).toEqual(packs.objects);
      expect(ofs.kinds).toContain("ofs-delta");
      const ref = await objectsOf(chunked(bytes(packs.ref), size));
      expect(ref.objects).toEqual(packs.objects);
      expect(ref.kinds).toContain("ref-delta");
    }
  });

  it("parses upload-pack's real answer: the shallow line, then the pack out of side band 1", async () => {
    const answer = await readUploadPackAnswer(chunked(bytes(packs.answer), 100), true);
    expect(answer.shallows).toEqual([packs.head]);
    const { objects } = await objectsOf(answer.pack);
    expect(Object.keys(objects).sort()).toEqual([...packs.shallowObjects].sort());
  });

  it("asks for one commit with only the capabilities the server offers, and the depth", () => {
    const body = new TextDecoder().decode(
      uploadPackRequest({ want: packs.head, capabilities: ["side-band", "shallow", "multi_ack"], depth: 1, agent: "beaver" }),
    );
    expect(body).toBe(`0051want ${packs.head} side-band shallow agent=beaver\n000ddeepen 1\n00000009done\n`);
  });

  it("refuses damaged packs and deltas with errors that say what is wrong", async () => {
    const pack = bytes(packs.ofs);
    const read = (data: Uint8Array, max?: number) => objectsOf(chunked(data, 64), max);
    await expect(read(pack.slice(0, pack.byteLength - 30))).rejects.toThrow(/ended in the middle of/);
    await expect(read(Uint8Array.from([...pack, 1, 2, 3]))).rejects.toThrow(/bytes after the pack's trailer/);
    await expect(read(Uint8Array.from(pack, (b, i) => (i === 0 ? 0x51 : b)))).rejects.toThrow(/no PACK signature/);
    // The first entry's zlib data starts after its one- or two-byte header: damage its first bytes.
    const corrupt = pack.slice();
    corrupt.fill(0xff, 14, 20);
    await expect(read(corrupt)).rejects.toThrow(/malformed pack/);
    await expect(read(pack, 100)).rejects.toThrow(/an object of \d+ bytes; one file may hold 100 \(workspace_file_bytes\)/);

    const base = new TextEncoder().encode("hello world");
    // base size 11, result size 5, copy offset 6 length 5 → "world"
    expect(new TextDecoder().decode(applyDelta(Uint8Array.from([11, 5, 0x91, 6, 5]), base, 100))).toBe("world");
    expect(() => applyDelta(Uint8Array.from([11, 5, 0x91, 8, 5]), base, 100)).toThrow(/copies outside its base/);
    expect(() => applyDelta(Uint8Array.from([10, 5, 0x91, 6, 5]), base, 100)).toThrow(/expects a base of 10 bytes/);
    expect(() => applyDelta(Uint8Array.from([11, 6, 0x91, 6, 5]), base, 100)).toThrow(/makes 5 bytes, not its declared 6/);
    expect(() => applyDelta(Uint8Array.from([11, 5, 0]), base, 100)).toThrow(/reserved instruction 0/);
  });
});
