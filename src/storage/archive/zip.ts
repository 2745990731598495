/**
 * Reads a zip with zip.js (native-compression build, no web workers): Unix mode bits reveal
 * symlinks, devices and executables; CRC-32 and overlapping-entry checks are on (names are checked by
 * our own policy in check.ts, the same for tar and zip), and every entry is
 * inflated into a writer that stops at the remaining byte budget, whatever the headers claim.
 */
import type * as ZipJs from "./zip-reader-lib.ts";
import type { Entry, FileEntry } from "@zip.js/zip.js/lib/zip-core-native.js";
import type { EntryKind, RawEntry } from "./types.ts";
import { archiveUnreadable } from "./errors.ts";
import { OutputTooLarge, boundedSink } from "./bounded.ts";

/** zip.js loads on the first zip read, not at Worker startup (docs/performance.md, "The bundle"). */
let zipJs: Promise<typeof ZipJs> | null = null;
const loadZipJs = () =>
  (zipJs ??= import("./zip-reader-lib.ts").then((m) => {
    m.configure({ useWebWorkers: false });
    return m;
  }));

const S_IFMT = 0o170000;
const KIND_BY_MODE: Record<number, EntryKind> = {
  0o100000: "file",
  0o040000: "directory",
  0o120000: "symlink",
  0o020000: "character-device",
  0o060000: "block-device",
  0o010000: "fifo",
  0o140000: "fifo", // a socket: not a regular file either
};

function kindOf(e: Entry): EntryKind {
  if (e.symlink) return "symlink";
  const mode = e.unixMode ?? e.externalFileAttributes >>> 16;
  const fmt = mode & S_IFMT;
  if (fmt !== 0 && KIND_BY_MODE[fmt]) return KIND_BY_MODE[fmt];
  return e.directory ? "directory" : "file";
}

export async function readZip(bytes: Uint8Array, maxUnpackedBytes: number): Promise<RawEntry[]> {
  const { ZipReader, Uint8ArrayReader } = await loadZipJs();
  const reader = new ZipReader(new Uint8ArrayReader(bytes), {
    useWebWorkers: false,
    checkCrc32: true,
    checkOverlappingEntry: true,
    filenameValidation: "tolerant",
  });
  let entries: Entry[];
  try {
    entries = await reader.getEntries();
  } catch (e) {
    throw archiveUnreadable(`zip is corrupt (${e instanceof Error ? e.message : String(e)})`);
  }
  const declared = entries.reduce((n, e) => n + (e.directory ? 0 : e.uncompressedSize), 0);
  if (declared > maxUnpackedBytes) throw new OutputTooLarge(maxUnpackedBytes);
  const out: RawEntry[] = [];
  let budget = maxUnpackedBytes;
  for (const e of entries) {
    const kind = kindOf(e);
    if (kind !== "file") {
      out.push({ name: e.filename, kind, executable: false, data: null });
      continue;
    }
    if (e.encrypted) throw archiveUnreadable(`'${e.filename}' is encrypted`);
    const sink = boundedSink(budget);
    try {
      await (e as FileEntry).getData(sink.writable);
    } catch (err) {
      // zip.js may wrap the sink's error, so ask the sink rather than the error what happened.
      if (sink.overflowed()) throw new OutputTooLarge(maxUnpackedBytes);
      throw archiveUnreadable(`'${e.filename}' could not be inflated (${err instanceof Error ? err.message : String(err)})`);
    }
    const data = sink.bytes();
    budget -= data.byteLength;
    out.push({ name: e.filename, kind, executable: e.executable, data });
  }
  await reader.close();
  return out;
}
