/**
 * The fetch half of git's smart HTTP protocol, version 1 (docs/workspace.md, "Git", its memory
 * paragraph; git's gitprotocol-pack and gitprotocol-http): the `git-upload-pack` request a shallow clone
 * sends, and its answer parsed as it arrives — the shallow lines, the NAK, then the packfile carried in
 * side-band channel 1, handed on chunk by chunk instead of collected (isomorphic-git's own fetch
 * collects the whole pack in memory, which is what a 128 MB isolate cannot afford for a large
 * repository). Ref discovery stays with isomorphic-git (`getRemoteInfo2`).
 */
import { concatBytes } from "../../storage/outbound-body.ts";
import { ByteReader } from "./byte-reader.ts";

const encoder = new TextEncoder();
const decoder = new TextDecoder();

export class RemoteError extends Error {
  constructor(message: string) {
    super(`remote error: ${message}`);
    this.name = "RemoteError";
  }
}

function pktLine(text: string): Uint8Array {
  const body = encoder.encode(text);
  return encoder.encode((body.byteLength + 4).toString(16).padStart(4, "0") + text);
}

/** What this client asks for, of what the server offers (a side band is required to stream the pack). */
export const WANTED_CAPABILITIES = ["side-band-64k", "side-band", "ofs-delta", "shallow", "no-progress"];

/** The request body: one want with its capabilities, the depth, a flush, `done` (a clone has nothing). */
export function uploadPackRequest(p: { want: string; capabilities: string[]; depth: number | null; agent: string }): Uint8Array {
  const offered = new Set(p.capabilities);
  const band = offered.has("side-band-64k") ? "side-band-64k" : offered.has("side-band") ? "side-band" : null;
  const caps = [
    ...(band ? [band] : []),
    ...WANTED_CAPABILITIES.filter((c) => !c.startsWith("side-band") && offered.has(c)),
    `agent=${p.agent}`,
  ];
  const lines = [pktLine(`want ${p.want} ${caps.join(" ")}\n`)];
  if (p.depth !== null) lines.push(pktLine(`deepen ${p.depth}\n`));
  lines.push(encoder.encode("0000"), pktLine("done\n"));
  return concatBytes(lines);
}

/** One pkt-line's payload, or null for a flush (and the other special lengths). */
async function readPkt(reader: ByteReader): Promise<Uint8Array | null> {
  const len = parseInt(decoder.decode(await reader.read(4, "a pkt-line")), 16);
  if (!Number.isInteger(len) || len < 0) throw new Error("the remote's answer is not in git's pkt-line format");
  if (len < 4) return null;
  return reader.read(len - 4, "a pkt-line");
}

export interface UploadPackAnswer {
  /** Commits the server cut the history at (`.git/shallow`). */
  shallows: string[];
  /** The packfile's bytes, as they arrive. */
  pack: AsyncIterable<Uint8Array>;
}

/** Parses the answer up to the pack; the pack is then read from `pack` (once). */
export async function readUploadPackAnswer(body: AsyncIterable<Uint8Array>, sideBand: boolean): Promise<UploadPackAnswer> {
  const reader = new ByteReader(body);
  const shallows: string[] = [];
  for (;;) {
    const line = await readPkt(reader);
    if (line === null) continue; // the flush that ends the shallow section
    const text = decoder.decode(line).trimEnd();
    if (text.startsWith("shallow ")) shallows.push(text.slice(8));
    else if (text.startsWith("unshallow ")) continue;
    else if (text.startsWith("ERR ")) throw new RemoteError(text.slice(4));
    else if (text === "NAK" || text.startsWith("ACK ")) break;
    else throw new Error(`unexpected line in the remote's answer: ${JSON.stringify(text.slice(0, 80))}`);
  }
  return { shallows, pack: sideBand ? packFromSideBand(reader) : rest(reader) };
}

async function* packFromSideBand(reader: ByteReader): AsyncGenerator<Uint8Array> {
  for (;;) {
    const pkt = await readPkt(reader);
    if (pkt === null) return;
    const band = pkt[0];
    if (band === 1) yield pkt.subarray(1);
    else if (band === 3) throw new RemoteError(decoder.decode(pkt.subarray(1)).trim());
    // band 2 is progress text, which `no-progress` mostly silences; nothing to keep.
  }
}

async function* rest(reader: ByteReader): AsyncGenerator<Uint8Array> {
  for (let chunk = await reader.chunk(); chunk; chunk = await reader.chunk()) yield chunk;
}
