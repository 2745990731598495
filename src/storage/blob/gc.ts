/**
 * The orphan collector: removes trees and blobs that no version, draft or upstream snapshot
 * references and that nobody has touched for `graceMs` — what a publish that failed between
 * writing content and switching `current` leaves behind. It runs under the workspace lock (the
 * WorkspaceDO bumps its GC epoch around it, so a tree stored concurrently is re-verified before
 * it is published). Index rows are deleted first with a condition re-checked by D1, then the R2
 * objects; R2 objects without any index row (a crash between R2 put and index insert) are found by
 * listing and removed once older than the grace window.
 */
import type { Env } from "../env.ts";
import { blobsPrefix, hashOfKey, treeKey, treesPrefix, blobKey } from "./keys.ts";
import { mapLimit, readManifest } from "./store.ts";

export interface GcReport {
  treesDeleted: number;
  blobsDeleted: number;
  unindexedDeleted: number;
}

const REFERENCED_TREES = `
  SELECT tree_hash FROM skill_versions WHERE workspace_id = ?1
  UNION SELECT tree_hash FROM upstream_snapshots WHERE workspace_id = ?1
  UNION SELECT tree_hash FROM skill_drafts WHERE workspace_id = ?1`;

export async function collectOrphans(env: Env, workspaceId: string, now: number, graceMs: number): Promise<GcReport> {
  const cutoff = now - graceMs;
  const trees = await env.DB.prepare(
    `DELETE FROM skill_trees WHERE workspace_id = ?1 AND last_seen_at < ?2 AND tree_hash NOT IN (${REFERENCED_TREES}) RETURNING tree_hash`,
  )
    .bind(workspaceId, cutoff)
    .all<{ tree_hash: string }>();
  await mapLimit(trees.results, 6, (t) => env.BLOBS.delete(treeKey(workspaceId, t.tree_hash)));

  // Blobs still needed: those of every remaining tree (referenced or still within its grace window).
  const remaining = await env.DB.prepare("SELECT tree_hash FROM skill_trees WHERE workspace_id = ?1")
    .bind(workspaceId)
    .all<{ tree_hash: string }>();
  const keep = new Set<string>();
  const manifests = await mapLimit(remaining.results, 6, (t) => readManifest(env, workspaceId, t.tree_hash));
  for (const m of manifests) for (const f of m?.files ?? []) keep.add(f.sha256);
  const stale = await env.DB.prepare("SELECT sha256 FROM skill_blobs WHERE workspace_id = ?1 AND last_seen_at < ?2")
    .bind(workspaceId, cutoff)
    .all<{ sha256: string }>();
  const doomed = stale.results.map((r) => r.sha256).filter((s) => !keep.has(s));
  let blobsDeleted = 0;
  if (doomed.length > 0) {
    const gone = await env.DB.prepare(
      "DELETE FROM skill_blobs WHERE workspace_id = ?1 AND last_seen_at < ?2 AND sha256 IN (SELECT value FROM json_each(?3)) RETURNING sha256",
    )
      .bind(workspaceId, cutoff, JSON.stringify(doomed))
      .all<{ sha256: string }>();
    await mapLimit(gone.results, 6, (b) => env.BLOBS.delete(blobKey(workspaceId, b.sha256)));
    blobsDeleted = gone.results.length;
  }

  const unindexedDeleted =
    (await sweepUnindexed(env, workspaceId, "blobs", cutoff)) + (await sweepUnindexed(env, workspaceId, "trees", cutoff));
  return { treesDeleted: trees.results.length, blobsDeleted, unindexedDeleted };
}

async function sweepUnindexed(env: Env, workspaceId: string, kind: "blobs" | "trees", cutoff: number): Promise<number> {
  const prefix = kind === "blobs" ? blobsPrefix(workspaceId) : treesPrefix(workspaceId);
  let cursor: string | undefined;
  let deleted = 0;
  do {
    const page = await env.BLOBS.list({ prefix, cursor, limit: 1000 });
    const old = page.objects.filter((o) => o.uploaded.getTime() < cutoff);
    const hashes = old.map((o) => hashOfKey(o.key)).filter((h): h is string => h !== null);
    if (hashes.length > 0) {
      const sql =
        kind === "blobs"
          ? "SELECT sha256 AS h FROM skill_blobs WHERE workspace_id = ?1 AND sha256 IN (SELECT value FROM json_each(?2))"
          : "SELECT tree_hash AS h FROM skill_trees WHERE workspace_id = ?1 AND tree_hash IN (SELECT value FROM json_each(?2))";
      const indexed = new Set(
        (await env.DB.prepare(sql).bind(workspaceId, JSON.stringify(hashes)).all<{ h: string }>()).results.map((r) => r.h),
      );
      const orphanKeys = old.filter((o) => {
        const h = hashOfKey(o.key);
        return h !== null && !indexed.has(h);
      });
      if (orphanKeys.length > 0) {
        await env.BLOBS.delete(orphanKeys.map((o) => o.key));
        deleted += orphanKeys.length;
      }
    }
    cursor = page.truncated ? page.cursor : undefined;
  } while (cursor);
  return deleted;
}
