/**
 * The first middleware: gives every request an id (the caller's `X-Request-Id` when it is a sane
 * token, else a new one), runs the request inside a log context carrying it, echoes it as
 * `X-Request-Id`, and writes one access line when the answer is ready (docs/layering.md,
 * "Observability"). Errors are logged once, by the error handler, inside the same context.
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context.ts";
import { newId } from "../../kernel/ids.ts";
import { log, withLogContext } from "../../kernel/log.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export const requestContext = createMiddleware<AppEnv>(async (c, next) => {
  const offered = c.req.header("X-Request-Id");
  const requestId = offered && REQUEST_ID.test(offered) ? offered : newId("req");
  const started = Date.now();
  await withLogContext({ request_id: requestId }, async () => {
    await next();
    try {
      c.res.headers.set("X-Request-Id", requestId);
    } catch {
      // Some answers (a WebSocket upgrade handed back by a Durable Object) have immutable headers.
    }
    log.info("request", { method: c.req.method, path: c.req.path, status: c.res.status, ms: Date.now() - started });
  });
});
