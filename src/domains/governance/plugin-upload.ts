/** `PUT /api/plugins/packages`: an uploaded package is ingested outside the lock, then recorded under it. */
import type { Env } from "../../storage/env.ts";
import { runLocked, storeEpoch } from "./client.ts";
import { ingestPackage } from "../plugins/ingest.ts";
import type { RecordPackageResult } from "../plugins/record.ts";

export interface UploadResult {
  recorded: RecordPackageResult;
  ignored: string[];
  r2Writes: number;
  blobsWritten: number;
  bytesHashed: number;
  hashMs: number;
}

export async function uploadPackage(env: Env, workspaceId: string, archive: Uint8Array, actor: string): Promise<UploadResult> {
  const epoch = await storeEpoch(env, workspaceId);
  const pkg = await ingestPackage(env, workspaceId, archive);
  const recorded = await runLocked(env, workspaceId, {
    kind: "record_package",
    epoch,
    input: { origin: "upload", sourceId: null, pkg, actor },
  });
  return {
    recorded,
    ignored: pkg.ignored,
    r2Writes: pkg.r2Writes,
    blobsWritten: pkg.blobsWritten,
    bytesHashed: pkg.bytesHashed,
    hashMs: pkg.hashMs,
  };
}
