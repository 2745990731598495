/**
 * The workspace as just-bash's file system (docs/workspace.md, "The shell"). just-bash's
 * `IFileSystem` is asynchronous, so reads go straight to the stored tree, one directory or file at a
 * time; writes, removals and new directories collect in an overlay held for the one command, and
 * `changes()` hands back the final state of every touched path for one workspace commit afterwards.
 * A command that fails half-way therefore still commits all of its effects or (when the tool
 * refuses, e.g. over a limit) none of them: never half of a change.
 *
 * Not supported (refused with an error the shell prints): symbolic and hard links. Empty directories
 * live only for the command (the store, like git, keeps files, not directories).
 *
 * A command that writes a whole repository (`git clone`) turns on `spillTo`: each written file is then
 * stored as an unreferenced blob at once and the overlay keeps only its hash, so memory holds one file
 * at a time; the commit afterwards still makes all of them visible together (docs/workspace.md, "Git").
 */
import type { CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from "just-bash/browser";

/** just-bash's directory entry (exported from its main entry only, not the browser one). */
interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}
import type { FileObjects, StagedBlob, TreeEntry } from "../../storage/files/objects.ts";
import { normalizeRelativePath } from "../../kernel/content-tree/paths.ts";
import { sha256HexBytes } from "../../kernel/content-tree/hashing.ts";

/** A written file: its bytes in memory, or (spilled) already stored and named by its hash. */
type Written = Uint8Array | StagedBlob;
const sizeOf = (w: Written): number => (w instanceof Uint8Array ? w.byteLength : w.size);
/** Stores a written file now (e.g. `FileObjects.persist` after a limit check) instead of keeping its bytes. */
export type Spill = (path: string, bytes: Uint8Array) => Promise<StagedBlob>;

/** One path's final state after a command: bytes in memory, a blob already stored, or removed (both null). */
export interface ShellChange {
  path: string;
  bytes: Uint8Array | null;
  staged?: StagedBlob;
}

type Encoding = "utf8" | "utf-8" | "ascii" | "binary" | "base64" | "hex" | "latin1";

interface Node {
  kind: "file" | "dir";
  size: number;
  /** Stored content's hash (a file from the tree, or a spilled write), or null for an overlay file in memory. */
  hash: string | null;
}

const EPOCH = new Date(0);

function fsError(code: string, what: string, op: string, path: string): Error {
  return Object.assign(new Error(`${code}: ${what}, ${op} '${path}'`), { code });
}

export class WorkspaceShellFs implements IFileSystem {
  readonly #objects: FileObjects;
  readonly #root: string;
  readonly #maxOverlayBytes: number;
  readonly #writes = new Map<string, Written>();
  #spill: Spill | null = null;
  readonly #hashes = new WeakMap<Uint8Array, string>();
  /** Paths removed from the stored tree (a directory's removal covers everything under it). */
  readonly #removed = new Set<string>();
  readonly #dirs = new Set<string>();
  readonly #dirCache = new Map<string, TreeEntry[]>();
  #overlayBytes = 0;
  readonly #mtime: Date;

  constructor(objects: FileObjects, root: string, options: { maxOverlayBytes: number; now?: Date }) {
    this.#objects = objects;
    this.#root = root;
    this.#maxOverlayBytes = options.maxOverlayBytes;
    this.#mtime = options.now ?? new Date();
  }

  /** Every path the command changed, with its final content (null: removed), for one commit. */
  changes(): ShellChange[] {
    const out: ShellChange[] = [];
    for (const path of this.#removed) out.push({ path, bytes: null });
    for (const [path, w] of this.#writes) out.push(w instanceof Uint8Array ? { path, bytes: w } : { path, bytes: null, staged: w });
    return out;
  }

  /** From now on, store each written file at once (`spill`) and keep only its hash (a clone's thousands of files). */
  spillTo(spill: Spill): void {
    this.#spill = spill;
  }

  /** The SHA-256 of a file's content (stored or written), without keeping its bytes: git's stat stand-in. */
  async contentHash(path: string): Promise<string> {
    const { rel, node } = this.#require(path, "stat");
    if (node.kind === "dir") throw fsError("EISDIR", "illegal operation on a directory", "read", path);
    const w = this.#writes.get(rel);
    if (w === undefined) return node.hash!;
    if (!(w instanceof Uint8Array)) return w.hash;
    let hash = this.#hashes.get(w);
    if (hash === undefined) {
      hash = await sha256HexBytes(w);
      this.#hashes.set(w, hash);
    }
    return hash;
  }

  // ---- lookups ----

  #rel(path: string, op: string): string {
    // Empty and '.' segments name the same place ('//.' is the root, as isomorphic-git spells it).
    const p = path
      .split("/")
      .filter((seg) => seg !== "" && seg !== ".")
      .join("/");
    if (p === "") return "";
    // `.git` is allowed here: the `git` command keeps its repository in the workspace (nothing runs hooks).
    const n = normalizeRelativePath(p, { allowGitDir: true });
    if (!n.ok) throw fsError("EINVAL", n.message, op, path);
    return n.path;
  }

  #entries(hash: string): TreeEntry[] {
    let entries = this.#dirCache.get(hash);
    if (!entries) {
      entries = this.#objects.entries(hash);
      if (this.#dirCache.size > 2000) this.#dirCache.clear();
      this.#dirCache.set(hash, entries);
    }
    return entries;
  }

  #isRemoved(rel: string): boolean {
    if (this.#removed.size === 0) return false;
    for (let p = rel; ;) {
      if (this.#removed.has(p)) return true;
      const i = p.lastIndexOf("/");
      if (i === -1) return false;
      p = p.slice(0, i);
    }
  }

  /** The stored entry at `rel` unless the overlay removed it. */
  #stored(rel: string): TreeEntry | null {
    if (rel === "") return { name: "", kind: "dir", hash: this.#root, size: 0, files: 0 };
    if (this.#isRemoved(rel)) return null;
    let dir = this.#root;
    const segs = rel.split("/");
    for (let i = 0; i < segs.length; i++) {
      const e = this.#entries(dir).find((x) => x.name === segs[i]);
      if (!e) return null;
      if (i === segs.length - 1) return e;
      if (e.kind !== "dir") return null;
      dir = e.hash;
    }
    return null;
  }

  #hasOverlayChildren(rel: string): boolean {
    const prefix = rel === "" ? "" : `${rel}/`;
    for (const p of this.#writes.keys()) if (p.startsWith(prefix)) return true;
    for (const p of this.#dirs) if (p.startsWith(prefix)) return true;
    return false;
  }

  #node(rel: string): Node | null {
    const written = this.#writes.get(rel);
    if (written) return { kind: "file", size: sizeOf(written), hash: written instanceof Uint8Array ? null : written.hash };
    if (this.#dirs.has(rel)) return { kind: "dir", size: 0, hash: null };
    const stored = this.#stored(rel);
    if (stored)
      return { kind: stored.kind, size: stored.kind === "file" ? stored.size : 0, hash: stored.kind === "file" ? stored.hash : null };
    if (this.#hasOverlayChildren(rel)) return { kind: "dir", size: 0, hash: null };
    return null;
  }

  #require(path: string, op: string): { rel: string; node: Node } {
    const rel = this.#rel(path, op);
    const node = this.#node(rel);
    if (!node) throw fsError("ENOENT", "no such file or directory", op, path);
    return { rel, node };
  }

  async #bytes(path: string): Promise<Uint8Array> {
    const { rel, node } = this.#require(path, "open");
    if (node.kind === "dir") throw fsError("EISDIR", "illegal operation on a directory", "read", path);
    const written = this.#writes.get(rel);
    return written instanceof Uint8Array ? written : this.#objects.read(node.hash!);
  }

  #names(rel: string, path: string): DirentEntry[] {
    const node = this.#node(rel);
    if (!node) throw fsError("ENOENT", "no such file or directory", "scandir", path);
    if (node.kind !== "dir") throw fsError("ENOTDIR", "not a directory", "scandir", path);
    const out = new Map<string, boolean>();
    const stored = this.#stored(rel);
    if (stored?.kind === "dir") {
      for (const e of this.#entries(stored.hash)) {
        const child = rel === "" ? e.name : `${rel}/${e.name}`;
        if (!this.#removed.has(child)) out.set(e.name, e.kind === "dir");
      }
    }
    const prefix = rel === "" ? "" : `${rel}/`;
    const add = (p: string, isDirLeaf: boolean) => {
      if (!p.startsWith(prefix)) return;
      const rest = p.slice(prefix.length);
      const i = rest.indexOf("/");
      if (i === -1) out.set(rest, isDirLeaf);
      else out.set(rest.slice(0, i), true);
    };
    for (const p of this.#writes.keys()) add(p, false);
    for (const p of this.#dirs) add(p, true);
    return [...out.entries()]
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
      .map(([name, isDirectory]) => ({ name, isFile: !isDirectory, isDirectory, isSymbolicLink: false }));
  }

  // ---- overlay changes ----

  async #write(rel: string, path: string, bytes: Uint8Array): Promise<void> {
    if (!this.#spill) return this.#put(rel, path, bytes);
    this.#put(rel, path, new Uint8Array()); // the same checks, before anything is stored
    this.#put(rel, path, await this.#spill(rel, bytes));
  }

  #put(rel: string, path: string, written: Written): void {
    if (rel === "") throw fsError("EISDIR", "illegal operation on a directory", "open", path);
    const node = this.#node(rel);
    if (node?.kind === "dir") throw fsError("EISDIR", "illegal operation on a directory", "open", path);
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    const up = this.#node(parent);
    if (!up) throw fsError("ENOENT", "no such file or directory", "open", path);
    if (up.kind !== "dir") throw fsError("ENOTDIR", "not a directory", "open", path);
    const previous = this.#writes.get(rel);
    const before = previous instanceof Uint8Array ? previous.byteLength : 0;
    const after = written instanceof Uint8Array ? written.byteLength : 0;
    if (this.#overlayBytes - before + after > this.#maxOverlayBytes)
      throw fsError("ENOSPC", `the command wrote more than ${this.#maxOverlayBytes} bytes`, "write", path);
    this.#overlayBytes += after - before;
    this.#writes.set(rel, written);
  }

  #drop(rel: string): void {
    const prefix = `${rel}/`;
    for (const [p, b] of this.#writes)
      if (p === rel || p.startsWith(prefix)) {
        if (b instanceof Uint8Array) this.#overlayBytes -= b.byteLength;
        this.#writes.delete(p);
      }
    for (const p of this.#dirs) if (p === rel || p.startsWith(prefix)) this.#dirs.delete(p);
    if (this.#stored(rel)) this.#removed.add(rel);
  }

  // ---- IFileSystem ----

  async readFile(path: string, options?: { encoding?: Encoding | null } | Encoding): Promise<string> {
    const bytes = await this.#bytes(path);
    const enc = typeof options === "string" ? options : (options?.encoding ?? "utf8");
    return decode(bytes, enc);
  }

  readFileBuffer(path: string): Promise<Uint8Array> {
    return this.#bytes(path);
  }

  async writeFile(path: string, content: FileContent, options?: { encoding?: Encoding } | Encoding): Promise<void> {
    const enc = typeof options === "string" ? options : options?.encoding;
    await this.#write(this.#rel(path, "open"), path, encode(content, enc));
  }

  async appendFile(path: string, content: FileContent, options?: { encoding?: Encoding } | Encoding): Promise<void> {
    const rel = this.#rel(path, "open");
    const enc = typeof options === "string" ? options : options?.encoding;
    const before = this.#node(rel) ? await this.#bytes(path) : new Uint8Array();
    const add = encode(content, enc);
    const joined = new Uint8Array(before.byteLength + add.byteLength);
    joined.set(before);
    joined.set(add, before.byteLength);
    await this.#write(rel, path, joined);
  }

  async exists(path: string): Promise<boolean> {
    try {
      return this.#node(this.#rel(path, "access")) !== null;
    } catch {
      return false;
    }
  }

  async stat(path: string): Promise<FsStat> {
    const { node } = this.#require(path, "stat");
    return {
      isFile: node.kind === "file",
      isDirectory: node.kind === "dir",
      isSymbolicLink: false,
      mode: node.kind === "dir" ? 0o755 : 0o644,
      size: node.size,
      mtime: node.hash === null ? this.#mtime : EPOCH,
    };
  }

  lstat(path: string): Promise<FsStat> {
    return this.stat(path);
  }

  async mkdir(path: string, options?: MkdirOptions): Promise<void> {
    const rel = this.#rel(path, "mkdir");
    const node = this.#node(rel);
    if (node) {
      if (node.kind === "dir" && options?.recursive) return;
      throw fsError("EEXIST", "file already exists", "mkdir", path);
    }
    const parent = rel.includes("/") ? rel.slice(0, rel.lastIndexOf("/")) : "";
    const up = this.#node(parent);
    if (!up) {
      if (!options?.recursive) throw fsError("ENOENT", "no such file or directory", "mkdir", path);
      await this.mkdir(`/${parent}`, options);
    } else if (up.kind !== "dir") throw fsError("ENOTDIR", "not a directory", "mkdir", path);
    this.#dirs.add(rel);
  }

  async readdir(path: string): Promise<string[]> {
    return this.#names(this.#rel(path, "scandir"), path).map((d) => d.name);
  }

  async readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return this.#names(this.#rel(path, "scandir"), path);
  }

  async rm(path: string, options?: RmOptions): Promise<void> {
    const rel = this.#rel(path, "rm");
    const node = this.#node(rel);
    if (!node) {
      if (options?.force) return;
      throw fsError("ENOENT", "no such file or directory", "rm", path);
    }
    if (rel === "") throw fsError("EPERM", "the workspace root cannot be removed", "rm", path);
    if (node.kind === "dir" && !options?.recursive && this.#names(rel, path).length > 0)
      throw fsError("ENOTEMPTY", "directory not empty", "rm", path);
    this.#drop(rel);
  }

  async cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    const { node } = this.#require(src, "cp");
    if (node.kind === "file") return this.writeFile(dest, await this.#bytes(src));
    if (!options?.recursive) throw fsError("EISDIR", "illegal operation on a directory", "cp", src);
    await this.mkdir(dest, { recursive: true });
    for (const child of await this.readdir(src)) await this.cp(`${trimSlash(src)}/${child}`, `${trimSlash(dest)}/${child}`, options);
  }

  async mv(src: string, dest: string): Promise<void> {
    await this.cp(src, dest, { recursive: true });
    await this.rm(src, { recursive: true });
  }

  resolvePath(base: string, path: string): string {
    const parts: string[] = [];
    for (const seg of (path.startsWith("/") ? path : `${base}/${path}`).split("/")) {
      if (seg === "" || seg === ".") continue;
      if (seg === "..") parts.pop();
      else parts.push(seg);
    }
    return `/${parts.join("/")}`;
  }

  getAllPaths(): string[] {
    return [];
  }

  async chmod(path: string): Promise<void> {
    this.#require(path, "chmod");
  }

  async symlink(_target: string, linkPath: string): Promise<void> {
    throw fsError("EPERM", "symbolic links are not supported in the workspace", "symlink", linkPath);
  }

  async link(_existing: string, newPath: string): Promise<void> {
    throw fsError("EPERM", "hard links are not supported in the workspace", "link", newPath);
  }

  async readlink(path: string): Promise<string> {
    this.#require(path, "readlink");
    throw fsError("EINVAL", "invalid argument", "readlink", path);
  }

  async realpath(path: string): Promise<string> {
    const { rel } = this.#require(path, "realpath");
    return `/${rel}`;
  }

  async utimes(path: string): Promise<void> {
    this.#require(path, "utime");
  }
}

function trimSlash(p: string): string {
  return p.length > 1 ? p.replace(/\/+$/, "") : p;
}

function encode(content: FileContent, encoding: Encoding | undefined): Uint8Array {
  if (content instanceof Uint8Array) return content;
  switch (encoding) {
    case "binary":
    case "latin1":
      return Uint8Array.from(content, (c) => c.charCodeAt(0) & 0xff);
    case "base64":
      return Uint8Array.from(atob(content), (c) => c.charCodeAt(0));
    case "hex":
      return Uint8Array.from(content.match(/../g) ?? [], (h) => parseInt(h, 16));
    default:
      return new TextEncoder().encode(content);
  }
}

function decode(bytes: Uint8Array, encoding: Encoding | null): string {
  switch (encoding) {
    case "binary":
    case "latin1": {
      let s = "";
      for (let i = 0; i < bytes.length; i += 8192) s += String.fromCharCode(...bytes.subarray(i, i + 8192));
      return s;
    }
    case "base64":
      return btoa(decode(bytes, "latin1"));
    case "hex":
      return Array.from(bytes, (b) => b.toString(16).padStart(2, "0")).join("");
    default:
      return new TextDecoder().decode(bytes);
  }
}
