/**
 * A session's workspace (docs/workspace.md): the files its tools read and change, stored in the
 * SessionDO (src/storage/files/objects.ts) and following the session's event tree (tree-at.ts). The
 * SessionDO builds one per session and hands it to every tool call (`ToolContext.workspace`); a
 * change commits a new root tree and records it against the tool call in the same transaction.
 */
import type { Env } from "../../storage/env.ts";
import { FileObjects, type FileChange, type FileStorage, type StagedBlob, type TreeEntry } from "../../storage/files/objects.ts";
import { limitsOf, type Limits } from "../../storage/limits.ts";
import { AppError } from "../../kernel/errors.ts";
import type { SessionTree } from "../session/tree.ts";
import { callKey, treeAtEvent } from "./tree-at.ts";

/** What the workspace needs of the session's log: its event tree and active leaf. */
export interface WorkspaceLog {
  readonly tree: SessionTree;
  readonly leaf: string | null;
}

/** The tool call a change belongs to (its result event names both). */
export interface ChangeOrigin {
  runId: string;
  toolCallId: string;
}

export interface Committed {
  root: string;
  /** Whether the tree differs from the one it was based on. */
  changed: boolean;
  bytes: number;
  files: number;
}

export class SessionWorkspace {
  readonly objects: FileObjects;
  readonly #storage: FileStorage;
  readonly #log: WorkspaceLog;
  readonly #env: Env;

  constructor(options: { storage: FileStorage; env: Env; workspaceId: string; log: WorkspaceLog }) {
    this.objects = new FileObjects(options.storage, options.env, options.workspaceId);
    this.#storage = options.storage;
    this.#log = options.log;
    this.#env = options.env;
  }

  get limits(): Limits {
    return limitsOf(this.#env);
  }

  /** The root tree at the active leaf: what the next tool call sees. */
  head(): string {
    return this.at(this.#log.leaf);
  }

  /** The root tree at an event of this session (its ancestry's last recorded tree). */
  at(eventId: string | null): string {
    return treeAtEvent(this.#log.tree, eventId, this.recorded());
  }

  /** Every recorded tree of this session, by `callKey(run, tool call)`. */
  recorded(): Map<string, string> {
    const rows = this.#storage.sql
      .exec<{ run_id: string; tool_call_id: string; tree_hash: string }>(`SELECT run_id, tool_call_id, tree_hash FROM ws_calls`)
      .toArray();
    return new Map(rows.map((r) => [callKey(r.run_id, r.tool_call_id), r.tree_hash]));
  }

  /** The entry at `path` in `root`, or null. */
  lookup(root: string, path: string): TreeEntry | null {
    return this.objects.lookup(root, path);
  }

  /** The file at `path` in `root`: its entry, or a `not_found`/`conflict` error the model can read. */
  file(root: string, path: string): TreeEntry {
    const entry = this.objects.lookup(root, path);
    if (!entry) throw new AppError("not_found", `No file '${path}' in the workspace (list_files shows what exists)`);
    if (entry.kind !== "file") throw new AppError("conflict", `'${path}' is a directory, not a file`);
    return entry;
  }

  /** A file's content staged for a commit; refuses one over `workspace_file_bytes`. */
  async stage(path: string, bytes: Uint8Array): Promise<StagedBlob> {
    const max = this.limits.workspace_file_bytes;
    if (bytes.byteLength > max)
      throw new AppError(
        "payload_too_large",
        `'${path}' would be ${bytes.byteLength} bytes; one file may hold ${max} (workspace_file_bytes)`,
      );
    return this.objects.stage(bytes);
  }

  /**
   * Applies `changes` to `base` and records the new root against the tool call, in one transaction.
   * Refuses when the workspace moved since `base` was read (the change was computed from old files).
   */
  async commit(base: string, changes: readonly FileChange[], origin: ChangeOrigin): Promise<Committed> {
    const limits = this.limits;
    const prepared = await this.objects.prepare(base, changes, { maxBytes: limits.workspace_bytes, maxFiles: limits.workspace_files });
    // Hashing awaited; within a session tool calls run one at a time, so this only guards a bug.
    if (this.head() !== base) throw new AppError("conflict", "The workspace changed while this change was being prepared; try again");
    this.objects.write(prepared, (sql) =>
      sql.exec(
        `INSERT OR REPLACE INTO ws_calls (run_id, tool_call_id, tree_hash, at) VALUES (?, ?, ?, ?)`,
        origin.runId,
        origin.toolCallId,
        prepared.root,
        Date.now(),
      ),
    );
    return { root: prepared.root, changed: prepared.root !== base, bytes: prepared.bytes, files: prepared.files };
  }

  /** A small fact about the workspace (the git remote, the clone's base commit), or null. */
  meta(key: string): string | null {
    return this.#storage.sql.exec<{ v: string }>(`SELECT v FROM ws_meta WHERE k = ?`, key).toArray()[0]?.v ?? null;
  }

  setMeta(key: string, value: string): void {
    this.#storage.sql.exec(`INSERT OR REPLACE INTO ws_meta (k, v) VALUES (?, ?)`, key, value);
  }
}
