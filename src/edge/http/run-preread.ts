/**
 * The config read of a run-starting request, made beside its rate limits (docs/performance.md, "The
 * run's config read beside its rate limits"). A run opens with one D1 query for the workspace's config
 * and revision; made in the session, it waited for the rate-limit calls before it, and each is a round
 * trip of its own. This middleware, placed before `limitRuns`, starts that query as the request comes
 * in; the route hands the row to the session, which parses it where the run opens. A run that has to
 * wait behind another one reads again when it opens (run-queue.ts), and a failed read here only means
 * the session reads for itself, as before.
 *
 * A request the limits refuse has made that one read for nothing: its sender holds a member token, and
 * the read is the one the run would have made.
 */
import { createMiddleware } from "hono/factory";
import type { Context } from "hono";
import type { AppEnv } from "./context.ts";
import { readConfigAndRevision, type ConfigAndRevisionRow } from "../../storage/config/store.ts";

export const prereadRunConfig = createMiddleware<AppEnv>(async (c, next) => {
  const read = readConfigAndRevision(c.env, c.get("principal").workspaceId).catch(() => undefined);
  c.set("runPreread", read);
  await next();
});

/** The row `prereadRunConfig` read for this request (undefined when the route has none or the read failed). */
export function runPreread(c: Context<AppEnv>): Promise<ConfigAndRevisionRow | undefined> {
  return c.get("runPreread") ?? Promise.resolve(undefined);
}
