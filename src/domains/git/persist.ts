/**
 * How a `git` command stores the files it writes (docs/workspace.md, "Git"): at once, as unreferenced
 * blobs (the shell's overlay keeps only their hashes), after the workspace's per-file limit. Git's own
 * files under `.git/` (the packfile above all) are bounded by `git_clone_bytes` instead, so a repository
 * whose pack is larger than one checked-out file may still be cloned.
 */
import type { SessionWorkspace } from "../../runtime/index.ts";
import type { StagedBlob } from "../../storage/files/objects.ts";

const inGitDir = (path: string) => path === ".git" || path.startsWith(".git/") || path.includes("/.git/");

export function workspacePersist(ws: SessionWorkspace): (path: string, bytes: Uint8Array) => Promise<StagedBlob> {
  return async (path, bytes) => {
    const max = ws.limits.workspace_file_bytes;
    if (!inGitDir(path) && bytes.byteLength > max)
      throw Object.assign(new Error(`EFBIG: '${path}' is ${bytes.byteLength} bytes; one file may hold ${max} (workspace_file_bytes)`), {
        code: "EFBIG",
      });
    return ws.objects.persist(bytes);
  };
}
