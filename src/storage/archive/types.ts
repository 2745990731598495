/** What the archive readers produce and what the checks accept: one shape for tar and zip. */

export type EntryKind = "file" | "directory" | "symlink" | "hardlink" | "character-device" | "block-device" | "fifo";

/** An entry as the archive declares it, before any policy check. */
export interface RawEntry {
  name: string;
  kind: EntryKind;
  executable: boolean;
  data: Uint8Array | null;
  /** Link target for symlinks and hard links (for messages only). */
  linkTarget?: string;
}

/** A regular file that passed every check: normalised relative path, bytes, executable bit. */
export interface ArchiveFile {
  path: string;
  bytes: Uint8Array;
  executable: boolean;
}

export interface ArchiveLimits {
  /** Compressed archive bytes accepted. */
  maxArchiveBytes: number;
  /** Regular files after extraction. */
  maxFiles: number;
  /** Sum of extracted bytes (also caps decompression, so a gzip bomb stops early). */
  maxUnpackedBytes: number;
}

export const DEFAULT_ARCHIVE_LIMITS: ArchiveLimits = {
  maxArchiveBytes: 32 * 1024 * 1024,
  maxFiles: 2000,
  maxUnpackedBytes: 64 * 1024 * 1024,
};

export type ArchiveFormat = "tar.gz" | "tar" | "zip";
