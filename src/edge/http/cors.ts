/**
 * CORS for browser apps on other origins (docs/cors.md): off unless the Worker var
 * `BEAVER_CORS_ORIGINS` lists origins (comma-separated, exact `scheme://host[:port]`). Listed origins
 * get `Access-Control-Allow-Origin` (with `Vary: Origin`), preflights are answered before any token
 * is asked for, the headers a client needs are exposed, and credentials are never allowed: Beaver
 * authenticates with the `Authorization` header, not cookies, so no request needs them. Built on
 * Hono's cors middleware.
 */
import { cors } from "hono/cors";
import { createMiddleware } from "hono/factory";
import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "./context.ts";
import { AppError } from "../../kernel/errors.ts";

/** Response headers a browser app may read: request id, rate limit and busy waits, the session and run of an answer. */
export const CORS_EXPOSED_HEADERS = ["X-Request-Id", "Retry-After", "X-Run-Id", "X-Run-Status", "X-Beaver-Session-Id", "X-Beaver-Run-Id"];

const ORIGIN = /^https?:\/\/[^/\s?#@]+$/i;

/** The allowed origins in `BEAVER_CORS_ORIGINS`; empty (CORS off) when unset or blank. A malformed entry is the operator's error. */
export function parseCorsOrigins(value: string | undefined): string[] {
  if (value === undefined) return [];
  const origins = value
    .split(",")
    .map((o) => o.trim())
    .filter((o) => o !== "")
    .map((o) => o.replace(/\/$/, ""));
  for (const origin of origins) {
    if (!ORIGIN.test(origin)) {
      throw new AppError("server_misconfigured", `BEAVER_CORS_ORIGINS: '${origin}' is not an origin (scheme://host[:port])`);
    }
  }
  return origins.map((o) => o.toLowerCase());
}

/** One Hono cors middleware per distinct setting (the var is fixed per deployment, so this holds one or two). */
const byValue = new Map<string, MiddlewareHandler>();

function middlewareFor(origins: string[]): MiddlewareHandler {
  const key = origins.join(",");
  let handler = byValue.get(key);
  if (!handler) {
    handler = cors({
      origin: (origin) => (origins.includes(origin.toLowerCase()) ? origin : null),
      allowMethods: ["GET", "HEAD", "PUT", "POST", "PATCH", "DELETE"],
      // No allowHeaders: the preflight's Access-Control-Request-Headers are allowed (the openai SDK sends its own x-stainless-* headers).
      exposeHeaders: CORS_EXPOSED_HEADERS,
      maxAge: 600,
      credentials: false,
    });
    byValue.set(key, handler);
  }
  return handler;
}

export const corsFor = createMiddleware<AppEnv>(async (c, next) => {
  const origins = parseCorsOrigins(c.env.BEAVER_CORS_ORIGINS);
  // WebSockets are not subject to CORS, and an upgrade's answer has headers no one may change.
  if (origins.length === 0 || c.req.header("Upgrade")?.toLowerCase() === "websocket") return next();
  return middlewareFor(origins)(c, next);
});
