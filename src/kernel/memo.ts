/**
 * Values derived from a shared read-only object, derived once per object. A workspace config is one
 * object per distinct stored text per isolate (storage/config/store.ts), and every run and webhook
 * delivery reads its sections through zod; parsing a section again for the same object is pure waste
 * (docs/performance.md, "Config sections"). Kept in a WeakMap, so a config that leaves the cache takes
 * its derived values with it.
 */
export function memoByObject<K extends object, V>(derive: (key: K) => V): (key: K) => V {
  const memo = new WeakMap<K, V>();
  return (key) => {
    if (memo.has(key)) return memo.get(key) as V;
    const value = derive(key);
    memo.set(key, value);
    return value;
  };
}

/**
 * Freezes a plain JSON-like value and everything in it, so code that shares it (a cached config and
 * what is derived from it) cannot change it for the others: a write throws in strict mode.
 */
export function deepFreeze<T>(value: T): T {
  if (value !== null && typeof value === "object" && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const child of Object.values(value)) deepFreeze(child);
  }
  return value;
}

/**
 * Puts `key` last in `map` (the newest) and drops the oldest entries beyond `max`: the bound every
 * per-isolate cache of the Worker keeps (configs, models, formatters, HMAC keys, tokens, indexes…), so
 * an isolate that sees many workspaces does not grow without end.
 */
export function setBounded<K, V>(map: Map<K, V>, key: K, value: V, max: number): void {
  map.delete(key);
  map.set(key, value);
  while (map.size > max) map.delete(map.keys().next().value!);
}
