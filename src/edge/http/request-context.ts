/**
 * The first middleware: gives every request an id (the caller's `X-Request-Id` when it is a sane
 * token, else a new one), runs the request inside a log context carrying it, echoes it as
 * `X-Request-Id`, and writes an access line when the answer is ready (docs/layering.md,
 * "Observability"). Errors are logged once, by the error handler, inside the same context.
 *
 * The access line is written for answers worth finding later — an error status (400 and up) or a slow
 * answer — unless `BEAVER_ACCESS_LOG=all` asks for every request. The platform's invocation log
 * (`[observability]`) already records every request with its method, URL, status and duration; a
 * second line for each fast success doubled the log volume and cost about 2.4 ms of CPU per request
 * under `wrangler dev` (docs/performance.md, "Access lines").
 */
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./context.ts";
import { newId } from "../../kernel/ids.ts";
import { log, withLogContext } from "../../kernel/log.ts";

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** An answer that took this long gets an access line whatever its status. */
export const SLOW_REQUEST_MS = 1000;

/** Whether a request gets an access line: `BEAVER_ACCESS_LOG=all`, an error status, or a slow answer. */
export function wantsAccessLine(mode: string | undefined, status: number, ms: number): boolean {
  return mode?.trim().toLowerCase() === "all" || status >= 400 || ms >= SLOW_REQUEST_MS;
}

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
    const ms = Date.now() - started;
    if (wantsAccessLine(c.env.BEAVER_ACCESS_LOG, c.res.status, ms))
      log.info("request", { method: c.req.method, path: c.req.path, status: c.res.status, ms });
  });
});
