/**
 * isomorphic-git's file system over a session workspace (docs/workspace.md, "Git"): the same
 * `WorkspaceShellFs` the shell uses, so a git command's writes (objects, index, refs and the files it
 * checks out) join the command's overlay and are committed with it, as one change, or not at all.
 *
 * The workspace keeps no timestamps or inode numbers, so `stat` derives them from the file's content
 * hash: git's index compares these to decide whether a file changed, and a content-derived value
 * changes exactly when the content does (no re-hashing of a whole checkout on every `git status`).
 *
 * Symbolic links: the workspace stores none. A link in a checkout that points inside the repository is
 * written as a plain file holding its target (what git does with `core.symlinks=false`); one that is
 * absolute or climbs out of the repository is refused, which fails the clone.
 */
import type { WorkspaceShellFs } from "../../runtime/index.ts";

function fsError(code: string, message: string): Error {
  return Object.assign(new Error(`${code}: ${message}`), { code });
}

/** A stat derived from the content hash (see the header): stable while the content is. */
function statOf(kind: "file" | "dir", size: number, hash: string | null) {
  const n = (from: number) => (hash === null ? 0 : parseInt(hash.slice(from, from + 8), 16) & 0x7fffffff);
  const seconds = n(0);
  return {
    isFile: () => kind === "file",
    isDirectory: () => kind === "dir",
    isSymbolicLink: () => false,
    mode: kind === "dir" ? 0o40755 : 0o100644,
    size,
    ino: n(8),
    uid: 0,
    gid: 0,
    dev: 0,
    mtimeMs: seconds * 1000,
    ctimeMs: seconds * 1000,
    mtime: new Date(seconds * 1000),
    ctime: new Date(seconds * 1000),
  };
}

/** Whether `target`, a link at `linkPath` (both workspace paths, '/'-rooted), stays inside `repoRoot`. */
export function linkStaysInside(linkPath: string, target: string, repoRoot: string): boolean {
  if (target.startsWith("/") || target.includes("\\") || target.includes("\0")) return false;
  const parts = linkPath.split("/").filter(Boolean);
  parts.pop();
  for (const seg of target.split("/")) {
    if (seg === "" || seg === ".") continue;
    if (seg === "..") {
      if (parts.length === 0) return false;
      parts.pop();
    } else parts.push(seg);
  }
  const root = repoRoot.split("/").filter(Boolean);
  return root.every((seg, i) => parts[i] === seg) && parts.length > root.length;
}

/** The `fs` isomorphic-git is given (its promise client shape) for a repository at `repoRoot`. */
export function gitFs(files: WorkspaceShellFs, repoRoot: string) {
  const promises = {
    async readFile(path: string, options?: { encoding?: string } | string) {
      const encoding = typeof options === "string" ? options : options?.encoding;
      return encoding ? files.readFile(path) : files.readFileBuffer(path);
    },
    async writeFile(path: string, data: string | Uint8Array) {
      await files.writeFile(path, data);
    },
    async unlink(path: string) {
      const s = await files.stat(path);
      if (s.isDirectory) throw fsError("EISDIR", `illegal operation on a directory, unlink '${path}'`);
      await files.rm(path);
    },
    readdir: (path: string) => files.readdir(path),
    async mkdir(path: string) {
      await files.mkdir(path);
    },
    async rmdir(path: string) {
      await files.rm(path, { recursive: true });
    },
    async stat(path: string) {
      const s = await files.stat(path);
      return statOf(s.isDirectory ? "dir" : "file", s.size, s.isDirectory ? null : await files.contentHash(path));
    },
    lstat: (path: string) => promises.stat(path),
    readlink: (path: string) => files.readlink(path),
    async symlink(target: string, path: string) {
      if (!linkStaysInside(path, target, repoRoot))
        throw fsError("EPERM", `symbolic link '${path.replace(/^\/+/, "")}' points outside the repository (to '${target}')`);
      await files.writeFile(path, target);
    },
    async chmod() {},
  };
  return { promises };
}
