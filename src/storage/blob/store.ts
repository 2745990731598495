/**
 * The content-addressed skill store on R2, indexed in D1. `storeTree` writes blobs first (each
 * distinct content once per workspace, verified by R2 against its SHA-256), then the blob index,
 * then the tree manifest, then the tree index. Existing content is only "touched" (its
 * `last_seen_at` bumped, a D1 write) so the orphan collector's grace window protects it; an
 * unchanged tree costs two D1 statements and no R2 write.
 */
import type { Env } from "../env.ts";
import { blobKey, treeKey } from "./keys.ts";
import { manifestEntriesOf, treeHashOf, TREE_FORMAT, type TreeFile, type TreeManifest } from "../../kernel/content-tree/hashing.ts";
import { AppError } from "../../kernel/errors.ts";

export interface StoredTree {
  treeHash: string;
  manifest: TreeManifest;
  /** R2 objects written (blobs + manifest): 0 when everything was already there. */
  r2Writes: number;
  blobsWritten: number;
  /** Hashing time, for the benchmark's throughput figure. */
  hashMs: number;
}

const PUT_CONCURRENCY = 6;

/** Run `fn` over items with at most `limit` in flight (Workers allow 6 simultaneous connections). */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    for (;;) {
      const i = next++;
      if (i >= items.length) return;
      out[i] = await fn(items[i]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

export async function storeTree(env: Env, workspaceId: string, files: readonly TreeFile[]): Promise<StoredTree> {
  const t0 = performance.now();
  const entries = await manifestEntriesOf(files);
  const treeHash = await treeHashOf(entries);
  const hashMs = performance.now() - t0;
  const manifest: TreeManifest = { format: TREE_FORMAT, files: entries };
  const now = Date.now();

  const treeKnown =
    (
      await env.DB.prepare("UPDATE skill_trees SET last_seen_at = ? WHERE workspace_id = ? AND tree_hash = ? RETURNING tree_hash")
        .bind(now, workspaceId, treeHash)
        .all()
    ).results.length > 0;
  // Touched with their tree, so the collector never splits them. A known tree is not trusted on its
  // own: a blob the collector took (and `verifyTreeStored` un-indexed) is written again below.
  const present = new Set(
    await touchBlobs(
      env,
      workspaceId,
      entries.map((e) => e.sha256),
      now,
    ),
  );
  const shaByPath = new Map(entries.map((e) => [e.path, e.sha256]));
  const bySha = new Map<string, TreeFile>();
  for (const f of files) {
    const sha = shaByPath.get(f.path) ?? "";
    if (!present.has(sha) && !bySha.has(sha)) bySha.set(sha, f);
  }
  const missing = [...bySha.entries()];
  await mapLimit(missing, PUT_CONCURRENCY, async ([sha, f]) => {
    await env.BLOBS.put(blobKey(workspaceId, sha), f.bytes, { sha256: sha });
  });
  if (missing.length > 0) {
    const rows = JSON.stringify(missing.map(([sha, f]) => ({ s: sha, n: f.bytes.byteLength })));
    await env.DB.prepare(
      `INSERT INTO skill_blobs (workspace_id, sha256, size, created_at, last_seen_at)
       SELECT ?1, json_extract(value, '$.s'), json_extract(value, '$.n'), ?2, ?2 FROM json_each(?3) WHERE true
       ON CONFLICT (workspace_id, sha256) DO UPDATE SET last_seen_at = excluded.last_seen_at`,
    )
      .bind(workspaceId, now, rows)
      .run();
  }
  if (!treeKnown) {
    await env.BLOBS.put(treeKey(workspaceId, treeHash), JSON.stringify(manifest), { httpMetadata: { contentType: "application/json" } });
    const totalBytes = entries.reduce((n, e) => n + e.size, 0);
    await env.DB.prepare(
      `INSERT INTO skill_trees (workspace_id, tree_hash, file_count, total_bytes, created_at, last_seen_at) VALUES (?1, ?2, ?3, ?4, ?5, ?5)
       ON CONFLICT (workspace_id, tree_hash) DO UPDATE SET last_seen_at = excluded.last_seen_at`,
    )
      .bind(workspaceId, treeHash, entries.length, totalBytes, now)
      .run();
  }
  return { treeHash, manifest, r2Writes: missing.length + (treeKnown ? 0 : 1), blobsWritten: missing.length, hashMs };
}

/** Bump `last_seen_at` of the listed blobs; returns the hashes that exist in the index. */
async function touchBlobs(env: Env, workspaceId: string, shas: readonly string[], now: number): Promise<string[]> {
  if (shas.length === 0) return [];
  const res = await env.DB.prepare(
    "UPDATE skill_blobs SET last_seen_at = ?1 WHERE workspace_id = ?2 AND sha256 IN (SELECT value FROM json_each(?3)) RETURNING sha256",
  )
    .bind(now, workspaceId, JSON.stringify([...new Set(shas)]))
    .all<{ sha256: string }>();
  return res.results.map((r) => r.sha256);
}

export async function readManifest(env: Env, workspaceId: string, treeHash: string): Promise<TreeManifest | null> {
  const obj = await env.BLOBS.get(treeKey(workspaceId, treeHash));
  if (!obj) return null;
  return (await obj.json()) as TreeManifest;
}

/** The manifest of a tree that must exist (a version, snapshot or draft points at it). */
export async function requireManifest(env: Env, workspaceId: string, treeHash: string): Promise<TreeManifest> {
  const m = await readManifest(env, workspaceId, treeHash);
  if (!m) throw new AppError("internal", `Stored tree ${treeHash.slice(0, 12)} is missing`);
  return m;
}

export async function readBlob(env: Env, workspaceId: string, sha256: string): Promise<R2ObjectBody | null> {
  return env.BLOBS.get(blobKey(workspaceId, sha256));
}

/**
 * Check that a tree and all its blobs are really in R2 (used under the lock when the orphan
 * collector ran while the tree was being stored). Blobs found missing lose their index rows too:
 * the index must never claim content R2 lacks, or sending the content again would skip the very
 * writes that repair it.
 */
export async function verifyTreeStored(env: Env, workspaceId: string, treeHash: string): Promise<boolean> {
  const manifest = await readManifest(env, workspaceId, treeHash);
  if (!manifest) {
    await env.DB.prepare("DELETE FROM skill_trees WHERE workspace_id = ? AND tree_hash = ?").bind(workspaceId, treeHash).run();
    return false;
  }
  const heads = await mapLimit(manifest.files, PUT_CONCURRENCY, async (e) =>
    (await env.BLOBS.head(blobKey(workspaceId, e.sha256))) === null ? e.sha256 : null,
  );
  const missing = heads.filter((h): h is string => h !== null);
  if (missing.length === 0) return true;
  await env.DB.prepare("DELETE FROM skill_blobs WHERE workspace_id = ?1 AND sha256 IN (SELECT value FROM json_each(?2))")
    .bind(workspaceId, JSON.stringify(missing))
    .run();
  return false;
}
