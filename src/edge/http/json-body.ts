/**
 * Parses JSON request bodies under /api once, up front, and remembers whether the JSON was malformed,
 * so `errorResponse` can tell a malformed body (→ `malformed_json`) from other 400s by a typed flag
 * rather than by the wording of a validator's message. The route still decides: one that does not
 * take JSON answers 415 first. Hono caches the parsed body, so validators reuse it. Not for
 * /webhooks: signature checks need the raw bytes, which a cached parse would replace.
 */
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";

const JSON_TYPE = /^application\/(?:[\w.+-]+\+)?json\s*(?:;|$)/i;

export const parseJsonBodies = createMiddleware<AppEnv>(async (c, next) => {
  const method = c.req.method;
  if (method !== "GET" && method !== "HEAD" && JSON_TYPE.test(c.req.header("Content-Type") ?? "")) {
    try {
      await c.req.json();
    } catch (err) {
      if (!(err instanceof SyntaxError)) throw err;
      c.set("malformedJson", true);
    }
  }
  await next();
});

/** True when this request's body claimed to be JSON and did not parse. */
export function hadMalformedJson(c: Context): boolean {
  return c.get("malformedJson") === true;
}
