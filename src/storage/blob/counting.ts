/**
 * Counting what an operation writes to R2: a view of the Env whose BLOBS binding counts `put`
 * calls. Used around every locked operation so responses report measured R2 writes (an unchanged
 * re-sync must show 0), not a number the code assumes.
 */
import type { Env } from "../env.ts";

export function withR2WriteCounter(env: Env): { env: Env; writes: () => number } {
  let writes = 0;
  const bucket = env.BLOBS;
  const counted = new Proxy(bucket, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      if (prop === "put" || prop === "createMultipartUpload") {
        return (...args: unknown[]) => {
          writes++;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      }
      return (value as (...a: unknown[]) => unknown).bind(target);
    },
  });
  return { env: { ...env, BLOBS: counted }, writes: () => writes };
}
