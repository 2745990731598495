/**
 * The workspace half of a fork (docs/sessions.md, "Fork"; docs/workspace.md): the recorded trees of
 * the tool calls on the forked branch, every directory and blob they reach, read from the source
 * session's storage and written into the fork's in the same transaction as its events. Blobs kept in
 * R2 are named by workspace and hash (storage/blob/keys.ts), so the fork shares them without a copy;
 * inline blobs travel with the fork, bounded by FORK_INLINE_BYTES.
 */
import type { SessionTree } from "../session/tree.ts";
import type { FileStorage } from "../../storage/files/objects.ts";
import { EMPTY_TREE_HASH } from "../../storage/files/objects.ts";
import { AppError } from "../../kernel/errors.ts";

/** Inline file bytes a fork may carry between the two sessions' objects (one RPC's payload stays well under its limit). */
export const FORK_INLINE_BYTES = 16 * 1024 * 1024;

export interface ForkFiles {
  calls: { run_id: string; tool_call_id: string; tree_hash: string }[];
  trees: { hash: string; body: string }[];
  blobs: { hash: string; size: number; data: ArrayBuffer | null }[];
}

type Row = [string, "f" | "d", string, number, number];

/** What the fork needs of the source's workspace for the branch ending at `eventId`. */
export function exportForkFiles(storage: FileStorage, tree: SessionTree, eventId: string | null): ForkFiles {
  const sql = storage.sql;
  const calls: ForkFiles["calls"] = [];
  for (const event of tree.ancestors(eventId)) {
    if (event.type !== "message" || event.message.role !== "tool_result" || event.run_id === null) continue;
    const row = sql
      .exec<{ tree_hash: string }>(
        `SELECT tree_hash FROM ws_calls WHERE run_id = ? AND tool_call_id = ?`,
        event.run_id,
        event.message.tool_call_id,
      )
      .toArray()[0];
    if (row) calls.push({ run_id: event.run_id, tool_call_id: event.message.tool_call_id, tree_hash: row.tree_hash });
  }
  const trees = new Map<string, string>();
  const blobHashes = new Set<string>();
  const pending = calls.map((c) => c.tree_hash);
  while (pending.length > 0) {
    const hash = pending.pop()!;
    if (hash === EMPTY_TREE_HASH || trees.has(hash)) continue;
    const row = sql.exec<{ body: string }>(`SELECT body FROM ws_trees WHERE hash = ?`, hash).toArray()[0];
    if (!row) throw new AppError("internal", `Workspace tree ${hash.slice(0, 12)} is missing`);
    trees.set(hash, row.body);
    for (const [, kind, child] of JSON.parse(row.body) as Row[]) {
      if (kind === "d") pending.push(child);
      else blobHashes.add(child);
    }
  }
  const blobs: ForkFiles["blobs"] = [];
  let inline = 0;
  for (const hash of blobHashes) {
    const row = sql.exec<{ size: number; data: ArrayBuffer | null }>(`SELECT size, data FROM ws_blobs WHERE hash = ?`, hash).toArray()[0];
    if (!row) throw new AppError("internal", `Workspace blob ${hash.slice(0, 12)} is missing`);
    inline += row.data?.byteLength ?? 0;
    if (inline > FORK_INLINE_BYTES)
      throw new AppError("payload_too_large", `The workspace history to fork holds more than ${FORK_INLINE_BYTES} bytes of small files`, {
        details: { limit: FORK_INLINE_BYTES },
      });
    blobs.push({ hash, size: row.size, data: row.data });
  }
  return { calls, trees: [...trees].map(([hash, body]) => ({ hash, body })), blobs };
}

/** Writes an exported workspace history into the fork's storage (call inside the transaction that appends its events). */
export function importForkFiles(storage: FileStorage, files: ForkFiles, at: number): void {
  const sql = storage.sql;
  for (const b of files.blobs) sql.exec(`INSERT OR IGNORE INTO ws_blobs (hash, size, data) VALUES (?, ?, ?)`, b.hash, b.size, b.data);
  for (const t of files.trees) sql.exec(`INSERT OR IGNORE INTO ws_trees (hash, body) VALUES (?, ?)`, t.hash, t.body);
  for (const c of files.calls)
    sql.exec(
      `INSERT OR REPLACE INTO ws_calls (run_id, tool_call_id, tree_hash, at) VALUES (?, ?, ?, ?)`,
      c.run_id,
      c.tool_call_id,
      c.tree_hash,
      at,
    );
}
