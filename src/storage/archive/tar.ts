/** Reads a (decompressed) tar with `modern-tar`: USTAR, PAX and GNU long names, checksums verified. */
import { unpackTar } from "modern-tar";
import type { EntryKind, RawEntry } from "./types.ts";
import { archiveUnreadable } from "./errors.ts";

const KINDS: Record<string, EntryKind> = {
  file: "file",
  directory: "directory",
  symlink: "symlink",
  link: "hardlink",
  "character-device": "character-device",
  "block-device": "block-device",
  fifo: "fifo",
};

export async function readTar(bytes: Uint8Array): Promise<RawEntry[]> {
  let entries;
  try {
    entries = await unpackTar(bytes, { strict: true });
  } catch (e) {
    throw archiveUnreadable(`tar is corrupt (${e instanceof Error ? e.message : String(e)})`);
  }
  return entries
    .filter((e) => e.header.type !== "pax-header" && e.header.type !== "pax-global-header")
    .map((e) => ({
      name: e.header.name,
      kind: KINDS[e.header.type ?? "file"] ?? "file",
      executable: ((e.header.mode ?? 0) & 0o111) !== 0,
      data: e.data ?? (e.header.type === "file" || e.header.type === undefined ? new Uint8Array(0) : null),
      ...(e.header.linkname ? { linkTarget: e.header.linkname } : {}),
    }));
}
