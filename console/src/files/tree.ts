/**
 * The Files panel's tree (docs/workspace.md, "Console"): two listings of `GET /files` (the shown tree
 * and the diff base) compared by content hash into one row per path — added, modified, deleted or the
 * same — and those rows folded into directories for display. Pure (test/console/files.pure.test.ts).
 */

export interface ListedFile {
  path: string;
  size: number;
  sha256: string;
}

export type FileStatus = "added" | "modified" | "deleted" | "same";

export interface FileRow extends ListedFile {
  status: FileStatus;
}

export interface DirNode {
  name: string;
  /** The directory's path ("" for the root). */
  path: string;
  dirs: DirNode[];
  files: FileRow[];
  /** Rows under this directory that are not `same`. */
  changed: number;
}

/** One row per path in either listing, sorted by path; without a base every file is `same`. */
export function compareListings(shown: readonly ListedFile[], base: readonly ListedFile[] | null): FileRow[] {
  const before = new Map((base ?? []).map((f) => [f.path, f]));
  const rows: FileRow[] = shown.map((f) => {
    const old = before.get(f.path);
    before.delete(f.path);
    const status: FileStatus = base === null ? "same" : !old ? "added" : old.sha256 === f.sha256 ? "same" : "modified";
    return { ...f, status };
  });
  for (const old of before.values()) rows.push({ ...old, status: "deleted" });
  return rows.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
}

/** The rows as nested directories (directories first, each level sorted by name). */
export function buildTree(rows: readonly FileRow[]): DirNode {
  const root: DirNode = { name: "", path: "", dirs: [], files: [], changed: 0 };
  for (const row of rows) {
    const parts = row.path.split("/");
    let dir = root;
    if (row.status !== "same") root.changed++;
    for (const part of parts.slice(0, -1)) {
      const path = dir.path ? `${dir.path}/${part}` : part;
      let next = dir.dirs.find((d) => d.name === part);
      if (!next) {
        next = { name: part, path, dirs: [], files: [], changed: 0 };
        dir.dirs.push(next);
      }
      if (row.status !== "same") next.changed++;
      dir = next;
    }
    dir.files.push(row);
  }
  const sort = (d: DirNode) => {
    d.dirs.sort((a, b) => (a.name < b.name ? -1 : 1));
    d.dirs.forEach(sort);
  };
  sort(root);
  return root;
}
