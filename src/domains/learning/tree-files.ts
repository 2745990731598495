/**
 * Reading a stored tree back as files (a version, an upstream snapshot or a draft), for merging and
 * for diffs. Bounded by what was stored: trees passed the size limits when they were prepared.
 */
import type { Env } from "../../storage/env.ts";
import { mapLimit, readBlob, requireManifest } from "../../storage/blob/store.ts";
import { AppError } from "../../kernel/errors.ts";
import type { TreeFile } from "../../kernel/content-tree/hashing.ts";

export interface LoadedFile extends TreeFile {
  sha256: string;
}

const READ_CONCURRENCY = 8;

export async function loadTree(env: Env, workspaceId: string, treeHash: string): Promise<LoadedFile[]> {
  const manifest = await requireManifest(env, workspaceId, treeHash);
  return mapLimit(manifest.files, READ_CONCURRENCY, async (e) => {
    const obj = await readBlob(env, workspaceId, e.sha256);
    if (!obj) throw new AppError("internal", `Stored content of ${e.path} in tree ${treeHash.slice(0, 12)} is missing`);
    return { path: e.path, sha256: e.sha256, executable: e.executable, bytes: new Uint8Array(await obj.arrayBuffer()) };
  });
}

/** UTF-8 text of a file, or null when it is not valid UTF-8 (binary). */
export function textOf(bytes: Uint8Array): string | null {
  try {
    return new TextDecoder("utf-8", { fatal: true, ignoreBOM: false }).decode(bytes).replace(/\r\n?/g, "\n");
  } catch {
    return null;
  }
}
