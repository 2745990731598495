/**
 * The workspace as the API shows it (docs/workspace.md, "API"): the file list of the tree at the
 * active leaf or at any event, one file's bytes, and the whole tree as a streamed tar.gz. The
 * SessionDO answers these thinly; reads go one directory and one file at a time, and the archive is
 * streamed file by file, so a large workspace is never in memory at once.
 */
import { createTarPacker } from "modern-tar";
import { AppError } from "../../kernel/errors.ts";
import type { SessionWorkspace, WorkspaceLog } from "./session-workspace.ts";
import { filePath } from "./paths.ts";
import { fileChangesOnPath, type FileChangeEvent } from "./file-changes.ts";

/** Files one listing names at most (the rest is counted: `truncated`). */
export const FILES_LIST_MAX = 5_000;

export interface FilesListing {
  tree_hash: string;
  /** The event the tree belongs to (null: the active leaf of a session with no events). */
  event_id: string | null;
  file_count: number;
  total_bytes: number;
  files: { path: string; size: number; sha256: string }[];
  truncated: boolean;
}

export function listFiles(ws: SessionWorkspace, eventId: string | null): FilesListing {
  const root = ws.at(eventId);
  const files: FilesListing["files"] = [];
  let count = 0;
  let bytes = 0;
  for (const { path, entry } of ws.objects.walk(root)) {
    count++;
    bytes += entry.size;
    if (files.length < FILES_LIST_MAX) files.push({ path, size: entry.size, sha256: entry.hash });
  }
  return { tree_hash: root, event_id: eventId, file_count: count, total_bytes: bytes, files, truncated: count > files.length };
}

/** The file-changing events on the path to the active leaf, oldest first (the console's base picker). */
export function fileChanges(ws: SessionWorkspace, log: WorkspaceLog): { active_leaf: string | null; changes: FileChangeEvent[] } {
  return { active_leaf: log.leaf, changes: fileChangesOnPath(log.tree.pathToRoot(log.leaf), ws.recorded()) };
}

/** One file's bytes at an event (404 for a path the tree lacks or a directory). */
export async function fileBytes(ws: SessionWorkspace, eventId: string | null, rawPath: string): Promise<Uint8Array> {
  let path: string;
  try {
    path = filePath(rawPath);
  } catch {
    throw new AppError("not_found", "File not found");
  }
  const entry = ws.lookup(ws.at(eventId), path);
  if (!entry || entry.kind !== "file") throw new AppError("not_found", "File not found");
  return ws.objects.read(entry.hash);
}

/** The tree at an event as a gzip-compressed tar stream, written one file at a time. */
export function filesArchive(ws: SessionWorkspace, eventId: string | null): ReadableStream<Uint8Array> {
  const root = ws.at(eventId);
  const { readable, controller } = createTarPacker();
  void (async () => {
    try {
      for (const { path, entry } of ws.objects.walk(root)) {
        const bytes = await ws.objects.read(entry.hash);
        const writer = controller.add({ name: path, size: bytes.byteLength, type: "file", mode: 0o644 }).getWriter();
        await writer.write(bytes);
        await writer.close();
      }
      controller.finalize();
    } catch (err) {
      controller.error(err);
    }
  })();
  return readable.pipeThrough(new CompressionStream("gzip"));
}
