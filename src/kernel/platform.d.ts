/**
 * What Worker code relies on from workerd beyond @cloudflare/workers-types, declared narrowly so that
 * src/ is type-checked without Node's types (tsconfig.json) and cannot reach for anything else of
 * Node's by accident:
 * - `AsyncLocalStorage` from `node:async_hooks`, provided under the `nodejs_compat` flag
 *   (wrangler.toml); only what kernel/log.ts calls;
 * - `clearTimeout` / `clearInterval` with `undefined` (a timer not set yet), a no-op in workerd as in
 *   the HTML timers spec; workers-types only lists `number | null`.
 */
declare module "node:async_hooks" {
  export class AsyncLocalStorage<T> {
    getStore(): T | undefined;
    run<R>(store: T, callback: () => R): R;
  }
}

declare function clearTimeout(timeoutId: number | null | undefined): void;
declare function clearInterval(timeoutId: number | null | undefined): void;
