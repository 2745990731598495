/**
 * The benchmark Worker (bench/wrangler.toml): the production Worker plus the seams only benchmarks
 * need, so the production entry (src/index.ts) carries none of them. Everything src/index.ts exports
 * is re-exported, except that `SessionDO` is a subclass adding a baseline RPC, and `fetch` first
 * answers two bench-only routes and hands every other request to the production handler:
 *
 *   POST /_bench/sessions/:id/baseline  one Durable Object call with one storage write → { touches }
 *   GET  /_bench/sessions/:id/stats     the SessionDO's counters (storage statements, D1 batches)
 *
 * Both take the same bearer tokens as the API (resolved by the production token lookup) and need the
 * `admin` scope, so the baseline pays the same token check as the API calls it is compared with.
 */
import production from "../../src/index.ts";
import { SessionDO as ProductionSessionDO } from "../../src/index.ts";
import { bearerOf, hasScope, principalForToken } from "../../src/edge/http/auth.ts";
import type { Env } from "../../src/storage/env.ts";

export * from "../../src/index.ts";

export class SessionDO extends ProductionSessionDO {
  #tableReady = false;

  /** The benchmark baseline: one storage write (a per-workspace counter in its own table); returns the count. */
  benchBaseline(workspaceId: string): number {
    const { sql } = this.ctx.storage;
    if (!this.#tableReady) {
      sql.exec(`CREATE TABLE IF NOT EXISTS bench_touch (workspace_id TEXT PRIMARY KEY, n INTEGER NOT NULL)`);
      this.#tableReady = true;
    }
    return sql
      .exec<{ n: number }>(
        `INSERT INTO bench_touch (workspace_id, n) VALUES (?, 1) ON CONFLICT(workspace_id) DO UPDATE SET n = n + 1 RETURNING n`,
        workspaceId,
      )
      .one().n;
  }
}

const ROUTE = /^\/_bench\/sessions\/([^/]+)\/(baseline|stats)$/;

export default {
  ...production,
  async fetch(request, env, ctx) {
    const match = ROUTE.exec(new URL(request.url).pathname);
    if (!match) return production.fetch(request, env, ctx);
    const [, sessionId, action] = match as unknown as [string, string, "baseline" | "stats"];
    if (request.method !== (action === "baseline" ? "POST" : "GET"))
      return error(405, "method_not_allowed", `${request.method} not allowed here`);

    const secret = bearerOf(request.headers.get("Authorization"));
    const principal = secret ? await principalForToken(env, secret) : null;
    if (!principal) return error(401, "unauthorized", "Missing, invalid or revoked bearer token");
    if (!hasScope(principal, "admin")) return error(403, "forbidden", "The bench routes need the 'admin' scope");

    const sessions = env.SESSIONS as unknown as DurableObjectNamespace<SessionDO>;
    const stub = sessions.get(sessions.idFromName(sessionId));
    if (action === "baseline") return Response.json({ touches: await stub.benchBaseline(principal.workspaceId) });
    return Response.json(await stub.stats());
  },
} satisfies ExportedHandler<Env>;

function error(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
