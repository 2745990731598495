/**
 * Counting what an operation writes to R2: a view of the Env whose BLOBS binding counts `put`
 * calls. Used around every locked operation so responses report measured R2 writes (an unchanged
 * re-sync must show 0), not a number the code assumes.
 */
import type { Env } from "../env.ts";
import { observeCalls } from "../io-hook.ts";

const WRITES: ReadonlySet<string | symbol> = new Set(["put", "createMultipartUpload"]);

export function withR2WriteCounter(env: Env): { env: Env; writes: () => number } {
  let writes = 0;
  const counted = observeCalls(env.BLOBS, (method) => {
    if (WRITES.has(method)) writes++;
  });
  return { env: { ...env, BLOBS: counted }, writes: () => writes };
}
