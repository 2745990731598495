/**
 * The content-addressed object store behind a session workspace (docs/workspace.md, "Storage layout").
 * Files are blobs named by the SHA-256 of their bytes: up to INLINE_MAX_BYTES inline in the SessionDO's
 * SQLite, larger ones in R2 (fileBlobKey). Directories are trees named by the hash of their canonical
 * listing, git-style, so one hash names a whole snapshot and a change rewrites only the directories on
 * its path: a snapshot per file-changing tool call costs a few rows, never a copy of the tree.
 *
 * Nothing here holds a whole tree in memory: reads go one directory (or one file) at a time, and a
 * commit is prepared (hashed) first and then written in one synchronous transaction, so an eviction
 * in the middle of a multi-file change leaves either the old tree or the new one, never a mix.
 */
import type { Env } from "../env.ts";
import { fileBlobKey } from "../blob/keys.ts";
import { sha256HexBytes } from "../../kernel/content-tree/hashing.ts";
import { sha256Hex } from "../../kernel/hash.ts";
import { comparePaths } from "../../kernel/content-tree/paths.ts";
import { AppError } from "../../kernel/errors.ts";

export type EntryKind = "file" | "dir";

export interface TreeEntry {
  name: string;
  kind: EntryKind;
  hash: string;
  /** Bytes: of the file, or of every file under the directory. */
  size: number;
  /** Files: 1 for a file, every file under a directory. */
  files: number;
}

/** Files up to this size live in SQLite; larger ones in R2 (a DO SQLite value may hold 2 MB). */
export const INLINE_MAX_BYTES = 64 * 1024;

/** The prefix hashed with a tree's listing, so a tree hash never equals a blob hash. */
const TREE_PREFIX = "beaver-workspace-tree/v1\n";

/** sha256("beaver-workspace-tree/v1\n[]"): the empty workspace (test/storage/files.pure.test.ts checks it). */
export const EMPTY_TREE_HASH = "f61f57cb302f2b436cb9e8d2123aa3bfbf9eebfe586c4dcaac6538f08e4df5e2";

export interface StagedBlob {
  hash: string;
  size: number;
  /** The bytes when they are stored inline; null when they are already in R2. */
  inline: Uint8Array | null;
}

/** One file's final state in a change: new content, or gone (a path naming a directory removes it all). */
export interface FileChange {
  path: string;
  blob: StagedBlob | null;
}

export interface PreparedCommit {
  root: string;
  bytes: number;
  files: number;
  trees: Map<string, string>;
  blobs: StagedBlob[];
}

export interface TreeLimits {
  maxBytes: number;
  maxFiles: number;
}

export type FileStorage = Pick<DurableObjectStorage, "sql" | "transactionSync">;

type Row = [string, "f" | "d", string, number, number];

export function canonicalTreeBody(entries: readonly TreeEntry[]): string {
  return JSON.stringify(entries.map((e): Row => [e.name, e.kind === "dir" ? "d" : "f", e.hash, e.size, e.files]));
}

export function treeHashOfBody(body: string): Promise<string> {
  return sha256Hex(TREE_PREFIX + body);
}

export class FileObjects {
  readonly #sql: SqlStorage;
  readonly #storage: FileStorage;

  constructor(
    storage: FileStorage,
    readonly env: Env,
    readonly workspaceId: string,
  ) {
    this.#storage = storage;
    this.#sql = storage.sql;
  }

  /** A directory's entries in path order; throws `internal` for a tree that is not stored. */
  entries(treeHash: string): TreeEntry[] {
    if (treeHash === EMPTY_TREE_HASH) return [];
    const row = this.#sql.exec<{ body: string }>(`SELECT body FROM ws_trees WHERE hash = ?`, treeHash).toArray()[0];
    if (!row) throw new AppError("internal", `Workspace tree ${treeHash.slice(0, 12)} is missing`);
    return (JSON.parse(row.body) as Row[]).map(([name, k, hash, size, files]) => ({
      name,
      kind: k === "d" ? "dir" : "file",
      hash,
      size,
      files,
    }));
  }

  hasTree(treeHash: string): boolean {
    return treeHash === EMPTY_TREE_HASH || this.#sql.exec(`SELECT 1 FROM ws_trees WHERE hash = ?`, treeHash).toArray().length > 0;
  }

  /** The entry at `path` ('' is the root itself, as a directory) under `root`, or null. */
  lookup(root: string, path: string): TreeEntry | null {
    if (path === "") return { name: "", kind: "dir", hash: root, size: 0, files: 0 };
    let dir = root;
    const segments = path.split("/");
    for (let i = 0; i < segments.length; i++) {
      const entry = this.entries(dir).find((e) => e.name === segments[i]);
      if (!entry) return null;
      if (i === segments.length - 1) return entry;
      if (entry.kind !== "dir") return null;
      dir = entry.hash;
    }
    return null;
  }

  /** Every file under the directory `dirHash`, depth first in path order, one directory read at a time. */
  *walk(dirHash: string, prefix = ""): Generator<{ path: string; entry: TreeEntry }, void, undefined> {
    for (const entry of this.entries(dirHash)) {
      const path = prefix === "" ? entry.name : `${prefix}/${entry.name}`;
      if (entry.kind === "dir") yield* this.walk(entry.hash, path);
      else yield { path, entry };
    }
  }

  /** A file's bytes (inline or from R2). */
  async read(blobHash: string): Promise<Uint8Array> {
    const row = this.#sql.exec<{ data: ArrayBuffer | null }>(`SELECT data FROM ws_blobs WHERE hash = ?`, blobHash).toArray()[0];
    if (!row) throw new AppError("internal", `Workspace blob ${blobHash.slice(0, 12)} is missing`);
    if (row.data !== null) return new Uint8Array(row.data);
    const obj = await this.env.BLOBS.get(fileBlobKey(this.workspaceId, blobHash));
    if (!obj) throw new AppError("internal", `Workspace blob ${blobHash.slice(0, 12)} is missing from R2`);
    return new Uint8Array(await obj.arrayBuffer());
  }

  /**
   * Hashes a file's bytes and, when they are too large for SQLite, puts them in R2 now (verified by
   * R2 against the hash). Nothing names the blob until a commit writes its row, so a stage that is
   * never committed leaves at most an unreferenced R2 object, never a visible file.
   */
  async stage(bytes: Uint8Array): Promise<StagedBlob> {
    const hash = await sha256HexBytes(bytes);
    if (bytes.byteLength <= INLINE_MAX_BYTES) return { hash, size: bytes.byteLength, inline: bytes };
    const known = this.#sql.exec(`SELECT 1 FROM ws_blobs WHERE hash = ?`, hash).toArray().length > 0;
    if (!known) await this.env.BLOBS.put(fileBlobKey(this.workspaceId, hash), bytes, { sha256: hash });
    return { hash, size: bytes.byteLength, inline: null };
  }

  /**
   * `stage` that also writes the blob's row now, so its bytes need not stay in memory until the commit
   * (a clone writes thousands of files). The row is unreachable until a commit's tree names it, so
   * nothing becomes visible early; an abandoned change leaves at most unreferenced rows and objects.
   */
  async persist(bytes: Uint8Array): Promise<StagedBlob> {
    const staged = await this.stage(bytes);
    this.#sql.exec(`INSERT OR IGNORE INTO ws_blobs (hash, size, data) VALUES (?, ?, ?)`, staged.hash, staged.size, staged.inline);
    return { hash: staged.hash, size: staged.size, inline: null };
  }

  /**
   * The new root after `changes` (deletions first, then writes; each path's final state once),
   * hashed but not written. Refuses a change that would make a path both a file and a directory, and
   * a result over `limits` (`payload_too_large`, naming the limit).
   */
  async prepare(base: string, changes: readonly FileChange[], limits: TreeLimits): Promise<PreparedCommit> {
    const trees = new Map<string, string>();
    const items = changes.map((c) => ({ segs: c.path.split("/"), blob: c.blob }));
    const entries = await this.#apply(base, items, "", trees);
    const body = canonicalTreeBody(entries);
    const root = await treeHashOfBody(body);
    if (root !== EMPTY_TREE_HASH) trees.set(root, body);
    const bytes = entries.reduce((n, e) => n + e.size, 0);
    const files = entries.reduce((n, e) => n + e.files, 0);
    if (files > limits.maxFiles)
      throw new AppError("payload_too_large", `The workspace would hold ${files} files; the limit is ${limits.maxFiles} (workspace_files)`);
    if (bytes > limits.maxBytes)
      throw new AppError("payload_too_large", `The workspace would hold ${bytes} bytes; the limit is ${limits.maxBytes} (workspace_bytes)`);
    const blobs = changes.flatMap((c) => (c.blob ? [c.blob] : []));
    return { root, bytes, files, trees, blobs };
  }

  /**
   * Writes a prepared commit's rows, and whatever `alongside` writes, in one transaction: all of it
   * or (on an eviction or an error) none of it.
   */
  write(prepared: PreparedCommit, alongside?: (sql: SqlStorage) => void): void {
    this.#storage.transactionSync(() => {
      for (const blob of prepared.blobs) {
        this.#sql.exec(`INSERT OR IGNORE INTO ws_blobs (hash, size, data) VALUES (?, ?, ?)`, blob.hash, blob.size, blob.inline);
      }
      for (const [hash, body] of prepared.trees) this.#sql.exec(`INSERT OR IGNORE INTO ws_trees (hash, body) VALUES (?, ?)`, hash, body);
      alongside?.(this.#sql);
    });
  }

  async #apply(
    dirHash: string | null,
    changes: readonly { segs: string[]; blob: StagedBlob | null }[],
    prefix: string,
    trees: Map<string, string>,
  ): Promise<TreeEntry[]> {
    const byName = new Map((dirHash === null ? [] : this.entries(dirHash)).map((e) => [e.name, e]));
    const groups = new Map<string, { segs: string[]; blob: StagedBlob | null }[]>();
    for (const c of changes) {
      const name = c.segs[0]!;
      const group = groups.get(name);
      if (group) group.push(c);
      else groups.set(name, [c]);
    }
    for (const [name, group] of groups) {
      const path = `${prefix}${name}`;
      let current = byName.get(name);
      if (group.some((c) => c.segs.length === 1 && c.blob === null)) current = undefined;
      const file = group.findLast((c) => c.segs.length === 1 && c.blob !== null)?.blob ?? null;
      const deeper = group.filter((c) => c.segs.length > 1).map((c) => ({ segs: c.segs.slice(1), blob: c.blob }));
      const deeperWrites = deeper.some((c) => c.blob !== null);
      if (file) {
        if (deeperWrites) throw new AppError("conflict", `'${path}' cannot be both a file and a directory`);
        if (current?.kind === "dir") throw new AppError("conflict", `'${path}' is a directory`);
        current = { name, kind: "file", hash: file.hash, size: file.size, files: 1 };
      } else if (deeper.length > 0) {
        if (current?.kind === "file") {
          if (deeperWrites) throw new AppError("conflict", `'${path}' is a file, not a directory`);
        } else {
          const sub = await this.#apply(current?.hash ?? null, deeper, `${path}/`, trees);
          current = sub.length === 0 ? undefined : await dirEntry(name, sub, trees);
        }
      }
      if (current) byName.set(name, current);
      else byName.delete(name);
    }
    return [...byName.values()].sort((a, b) => comparePaths(a.name, b.name));
  }
}

async function dirEntry(name: string, entries: TreeEntry[], trees: Map<string, string>): Promise<TreeEntry> {
  const body = canonicalTreeBody(entries);
  const hash = await treeHashOfBody(body);
  trees.set(hash, body);
  return {
    name,
    kind: "dir",
    hash,
    size: entries.reduce((n, e) => n + e.size, 0),
    files: entries.reduce((n, e) => n + e.files, 0),
  };
}
