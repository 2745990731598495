/**
 * Request rate limits on the routes that make Beaver spend (docs/limits.md): starting runs
 * (`POST /api/sessions/:id/messages`, `POST /api/chat`) per token and per workspace, and webhook
 * deliveries per workspace. Counting is the platform's Rate Limiting binding (wrangler.toml
 * `[[ratelimits]]`); over the limit answers 429 `rate_limited` with `Retry-After` set to the period.
 *
 * A missing binding fails open (src/storage/rate-limits.ts), while the body, field and list limits
 * still bound what one request can do.
 */
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { AppError } from "../../kernel/errors.ts";
import { limitsOf } from "../../storage/limits.ts";
import { withinRateLimit as allowed } from "../../storage/rate-limits.ts";

function rateLimited(c: Context<AppEnv>, scope: "token" | "workspace" | "webhook"): AppError {
  const period = limitsOf(c.env).rate_limit_period_seconds;
  return new AppError("rate_limited", `Too many requests for this ${scope === "webhook" ? "workspace's webhook" : scope}; retry later`, {
    details: { scope },
    retryAfter: period,
  });
}

/**
 * Runs started: per token and per workspace (so two tokens of one workspace share its limit). Both
 * counters are asked at once: each `limit()` is a call to the platform's counter, and asking them one
 * after the other put two waits on every run's path (docs/performance.md, fourth round). The token's
 * refusal is reported first when both refuse. A request refused by one counter still counts in the
 * other, which only makes the limits a little stricter while a client is already over one of them.
 */
export const limitRuns = createMiddleware<AppEnv>(async (c, next) => {
  const p = c.get("principal");
  const [token, workspace] = await Promise.all([
    allowed(c.env, "RATE_LIMIT_TOKEN", `token:${p.tokenId}`),
    allowed(c.env, "RATE_LIMIT_WORKSPACE", `workspace:${p.workspaceId}`),
  ]);
  if (!token) throw rateLimited(c, "token");
  if (!workspace) throw rateLimited(c, "workspace");
  await next();
});

/**
 * Webhook deliveries per workspace, counted before the signature is checked: the limit bounds the work
 * (body read, secret lookup, HMAC, D1 writes) anyone can cause at one workspace's URL. A flood of
 * unsigned requests can therefore delay genuine deliveries, which Gitea retries.
 */
export const limitWebhooks = createMiddleware<AppEnv>(async (c, next) => {
  const workspaceId = c.req.param("workspace_id") ?? "";
  if (!(await allowed(c.env, "RATE_LIMIT_WEBHOOK", `webhook:${workspaceId}`))) throw rateLimited(c, "webhook");
  await next();
});
