/**
 * `readArchive`: bytes of a tar.gz, tar or zip → checked regular files, or an AppError that names
 * the offending entry. Format is detected from magic bytes, never from a file name or header.
 */
import { archiveRejected, archiveUnreadable } from "./errors.ts";
import { checkEntries, type CheckedArchive } from "./check.ts";
import { gunzipBounded } from "./gunzip.ts";
import { OutputTooLarge } from "./bounded.ts";
import { readTar } from "./tar.ts";
import { readZip } from "./zip.ts";
import { DEFAULT_ARCHIVE_LIMITS, type ArchiveFormat, type ArchiveLimits, type RawEntry } from "./types.ts";
import { problem } from "../../kernel/content-tree/problems.ts";

export type { ArchiveFile, ArchiveLimits, ArchiveFormat } from "./types.ts";
export { DEFAULT_ARCHIVE_LIMITS } from "./types.ts";
export type { CheckedArchive } from "./check.ts";

export function detectFormat(bytes: Uint8Array): ArchiveFormat | null {
  if (bytes[0] === 0x1f && bytes[1] === 0x8b) return "tar.gz";
  if (bytes[0] === 0x50 && bytes[1] === 0x4b && (bytes[2] === 0x03 || bytes[2] === 0x05) && (bytes[3] === 0x04 || bytes[3] === 0x06))
    return "zip";
  if (bytes.length >= 262 && new TextDecoder().decode(bytes.subarray(257, 262)) === "ustar") return "tar";
  return null;
}

export async function readArchive(
  bytes: Uint8Array,
  limits: ArchiveLimits = DEFAULT_ARCHIVE_LIMITS,
): Promise<CheckedArchive & { format: ArchiveFormat }> {
  if (bytes.byteLength === 0) throw archiveUnreadable("empty body");
  if (bytes.byteLength > limits.maxArchiveBytes)
    throw archiveRejected([problem(".", `archive is ${bytes.byteLength} bytes (limit ${limits.maxArchiveBytes})`)]);
  const format = detectFormat(bytes);
  if (!format) throw archiveUnreadable("not a tar.gz, tar or zip archive (unrecognised magic bytes)");
  let raw: RawEntry[];
  try {
    if (format === "zip") raw = await readZip(bytes, limits.maxUnpackedBytes);
    else {
      // A tar holds headers and padding beside file data: allow one header block per permitted file.
      const tarBytes = format === "tar.gz" ? await gunzipBounded(bytes, limits.maxUnpackedBytes + 1024 * (limits.maxFiles + 2)) : bytes;
      raw = await readTar(tarBytes);
    }
  } catch (e) {
    if (e instanceof OutputTooLarge)
      throw archiveRejected([problem(".", `too many bytes once unpacked (limit ${limits.maxUnpackedBytes})`)]);
    throw e;
  }
  const checked = checkEntries(raw, limits);
  if (!checked.ok) throw archiveRejected(checked.problems, checked.badNames);
  return { ...checked.archive, format };
}
