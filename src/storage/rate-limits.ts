/**
 * One check against the platform's Rate Limiting bindings (wrangler.toml `[[ratelimits]]`,
 * docs/limits.md), shared by the HTTP routes that start runs and the session WebSocket that can start
 * them too (docs/sessions.md, "Two-way live channel").
 *
 * A missing binding fails open with one warning per isolate: it means the deployment's wrangler.toml
 * lacks it, and refusing every message for a configuration slip would take the service down.
 */
import type { Env, RateLimit } from "./env.ts";
import { log } from "../kernel/log.ts";

export type RateLimitBinding = "RATE_LIMIT_TOKEN" | "RATE_LIMIT_WORKSPACE" | "RATE_LIMIT_WEBHOOK";

const warned = new Set<RateLimitBinding>();

/** False when `key` has used its limit for this period; true when allowed or when the binding is absent. */
export async function withinRateLimit(env: Env, binding: RateLimitBinding, key: string): Promise<boolean> {
  const limiter: RateLimit | undefined = env[binding];
  if (!limiter) {
    if (!warned.has(binding)) {
      warned.add(binding);
      log.warn(`rate limit binding ${binding} is not configured; requests are not limited`, { binding });
    }
    return true;
  }
  return (await limiter.limit({ key })).success;
}
