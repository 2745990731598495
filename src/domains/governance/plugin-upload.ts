/**
 * `PUT /api/plugins/packages`: an uploaded package is ingested outside the lock, then recorded under it.
 * The plugins quota is checked between the two, outside the lock: uploads racing past the same count
 * can overshoot it by their number of new plugins (docs/limits.md).
 */
import type { Env } from "../../storage/env.ts";
import { beforeDeadline, runLocked, startLockBudget, storeEpoch } from "./client.ts";
import { ingestPackage } from "../plugins/ingest.ts";
import type { RecordPackageResult } from "../plugins/record.ts";
import { and, eq, inArray } from "drizzle-orm";
import { makeDb } from "../../storage/db/client.ts";
import { plugins } from "../../storage/db/schema.ts";
import { enforceQuota } from "../../storage/quotas.ts";

export interface UploadResult {
  recorded: RecordPackageResult;
  ignored: string[];
  r2Writes: number;
  blobsWritten: number;
  bytesHashed: number;
  hashMs: number;
}

export async function uploadPackage(env: Env, workspaceId: string, archive: Uint8Array, actor: string): Promise<UploadResult> {
  // The epoch is an RPC to the lock's own object: bounded like the lock (lock-budget.ts).
  const epoch = await storeEpoch(env, workspaceId);
  const pkg = await ingestPackage(env, workspaceId, archive);
  // Ingesting is this request's own work (hashing, R2 writes of a whole package), not a wait for the
  // workspace: the budget for the quota count and the lock starts after it.
  const budget = startLockBudget(env);
  const ids = [...new Set(pkg.plugins.map((p) => p.id))];
  await beforeDeadline(budget, "quota", async () => enforceQuota(env, workspaceId, "plugins", await newPluginCount(env, workspaceId, ids)));
  const recorded = await runLocked(
    env,
    workspaceId,
    { kind: "record_package", epoch, input: { origin: "upload", sourceId: null, pkg, actor } },
    "wait",
    budget,
  );
  return {
    recorded,
    ignored: pkg.ignored,
    r2Writes: pkg.r2Writes,
    blobsWritten: pkg.blobsWritten,
    bytesHashed: pkg.bytesHashed,
    hashMs: pkg.hashMs,
  };
}

/** How many of `ids` the workspace does not hold yet (re-uploading a known plugin adds none). */
async function newPluginCount(env: Env, workspaceId: string, ids: string[]): Promise<number> {
  if (ids.length === 0) return 0;
  const known = await makeDb(env.DB)
    .select({ id: plugins.id })
    .from(plugins)
    .where(and(eq(plugins.workspaceId, workspaceId), inArray(plugins.id, ids)))
    .all();
  return ids.length - known.length;
}
