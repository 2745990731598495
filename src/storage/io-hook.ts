/**
 * Views of a binding or of the Env that see every call made through them. Durable Objects use them
 * to act at the I/O points of long work: in Workers, `Date.now()` advances only with I/O and timers may
 * not fire while an isolate stays busy, so an I/O call is the one moment code is sure to run with a
 * fresh clock (docs/skills-and-plugins.md, "The workspace write lock"); blob/counting.ts counts R2
 * writes the same way.
 */
import type { Env } from "./env.ts";

/** `binding`, with `onCall(method)` run ahead of every method call. */
export function observeCalls<T extends object>(binding: T, onCall: (method: string | symbol) => void): T {
  return new Proxy(binding, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        onCall(prop);
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export function withIoHook(env: Env, before: () => void): Env {
  return { ...env, DB: observeCalls(env.DB, before), BLOBS: observeCalls(env.BLOBS, before) };
}
