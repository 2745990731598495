/**
 * A view of the Env whose D1 and R2 bindings call `before()` ahead of every call. Durable Objects
 * use it to act at the I/O points of long work: in Workers, `Date.now()` advances only with I/O and
 * timers may not fire while an isolate stays busy, so an I/O call is the one moment code is sure to
 * run with a fresh clock (docs/skills-and-plugins.md, "The workspace write lock").
 */
import type { Env } from "./env.ts";

function hooked<T extends object>(binding: T, before: () => void): T {
  return new Proxy(binding, {
    get(target, prop) {
      const value: unknown = Reflect.get(target, prop);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        before();
        return (value as (...a: unknown[]) => unknown).apply(target, args);
      };
    },
  });
}

export function withIoHook(env: Env, before: () => void): Env {
  return { ...env, DB: hooked(env.DB, before), BLOBS: hooked(env.BLOBS, before) };
}
