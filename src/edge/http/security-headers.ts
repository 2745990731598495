/**
 * Security headers of the Worker's own answers (docs/console.md
 * "Headers" lists them with the console's, which Workers static assets add from console/public/_headers):
 * every answer gets `nosniff`, `Referrer-Policy: no-referrer` and a CSP that lets nothing load or frame
 * it (the API serves JSON, streams and text, never a page); an answer to an authenticated request is
 * `Cache-Control: no-store` unless the route chose its own, so no shared or browser cache keeps it.
 * A WebSocket upgrade's answer (101) is left alone: its headers cannot change.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context.ts";

export const API_SECURITY_HEADERS: Record<string, string> = {
  "X-Content-Type-Options": "nosniff",
  "Referrer-Policy": "no-referrer",
  "Content-Security-Policy": "default-src 'none'; frame-ancestors 'none'",
  "X-Frame-Options": "DENY",
};

export const securityHeaders = createMiddleware<AppEnv>(async (c, next) => {
  await next();
  if (c.res.status === 101 || c.res.webSocket) return;
  try {
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) c.res.headers.set(name, value);
    if (c.req.header("Authorization") !== undefined && !c.res.headers.has("Cache-Control")) c.res.headers.set("Cache-Control", "no-store");
  } catch {
    // An answer passed through from a binding (a Durable Object's stream) may have immutable headers: copy it.
    const res = new Response(c.res.body, c.res);
    for (const [name, value] of Object.entries(API_SECURITY_HEADERS)) res.headers.set(name, value);
    if (c.req.header("Authorization") !== undefined && !res.headers.has("Cache-Control")) res.headers.set("Cache-Control", "no-store");
    c.res = res;
  }
});
