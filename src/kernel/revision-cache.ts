/**
 * Values read from storage, kept per isolate under the content revision they were read at
 * (docs/performance.md, "Run-open reads"): a lookup with the same revision reuses the value, any
 * other revision reads again and replaces it. Callers read the revision before the value, so a value
 * is never older than the revision it is kept under. Only settled values are kept (a read in flight
 * belongs to the request that started it); failures are not kept. Bounded: the oldest key goes first.
 */
import { setBounded } from "./memo.ts";
export class RevisionCache<T> {
  readonly #entries = new Map<string, { revision: string; value: T }>();
  readonly #max: number;

  constructor(max = 64) {
    this.#max = max;
  }

  /** The value under `revision`, or `load()`'s; a null revision (unknown) always loads and keeps nothing. */
  async get(key: string, revision: string | null, load: () => Promise<T>): Promise<T> {
    const hit = this.#entries.get(key);
    if (revision !== null && hit?.revision === revision) return hit.value;
    const value = await load();
    if (revision === null) return value;
    setBounded(this.#entries, key, { revision, value }, this.#max);
    return value;
  }

  /** Keeps `value`, read at `revision` (in the same snapshot, or after it), as `get` would have; a null revision keeps nothing. */
  put(key: string, revision: string | null, value: T): void {
    if (revision !== null) setBounded(this.#entries, key, { revision, value }, this.#max);
  }

  /** The value kept under `revision`, without loading: null when none is (a caller that must not wait for a read). */
  peek(key: string, revision: string | null): T | null {
    const hit = this.#entries.get(key);
    return revision !== null && hit?.revision === revision ? hit.value : null;
  }
}
