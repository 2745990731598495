/**
 * The benchmark Worker (bench/wrangler.toml): the production Worker plus the seams only benchmarks
 * need, so the production entry (src/index.ts) carries none of them. Everything src/index.ts exports
 * is re-exported, except that `SessionDO` is a subclass adding a baseline RPC, and `fetch` first
 * answers two bench-only routes and hands every other request to the production handler:
 *
 *   POST /_bench/sessions/:id/baseline  one Durable Object call with one storage write → { touches }
 *   GET  /_bench/sessions/:id/stats     the SessionDO's counters (storage statements, D1 batches)
 *   POST /_bench/search/seed            {from, to, messages}: sessions from..to of the caller's workspace
 *                                       with `messages` visible messages each, written straight to D1
 *                                       (the search index fills through its trigger, as replication does)
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
const SEED_ROUTE = "/_bench/search/seed";

/** Words the seeded messages are made of (each message takes four, spread evenly). */
const VOCABULARY = (
  "deploy worker cache queue retry timeout token budget branch merge review commit schema index query cursor " +
  "snippet ranking latency window prompt model tool result error warning config secret limit quota session " +
  "replica backup restore archive upload download stream socket ticket alarm cron schedule webhook mail " +
  "inbox thread label search filter sort page offset batch insert update delete select trigger table column"
).split(" ");

/**
 * Seeds sessions [from, to] of `workspaceId` with `messages` messages each, in one statement per table:
 * each message has four vocabulary words, and message 5 of every 1000th session says "quetzal" (a rare word).
 */
async function seedSearch(env: Env, workspaceId: string, from: number, to: number, messages: number): Promise<void> {
  const now = Date.now();
  await env.DB.batch([
    env.DB.prepare(
      `WITH RECURSIVE s(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM s WHERE i < ?2)
       INSERT INTO sessions (id, workspace_id, title, status, metadata, created_at, updated_at, last_seq, input_tokens, output_tokens, total_tokens)
       SELECT ?3 || '_' || i, ?4, 'Seeded session ' || i, 'open', '{}', CAST(?5 AS INTEGER) + i, CAST(?5 AS INTEGER) + i, CAST(?6 AS INTEGER), 0, 0, 0 FROM s`,
    ).bind(from, to, `bses_${workspaceId}`, workspaceId, now, messages),
    env.DB.prepare(
      `WITH RECURSIVE s(i) AS (SELECT CAST(?1 AS INTEGER) UNION ALL SELECT i + 1 FROM s WHERE i < ?2),
                     m(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM m WHERE j < ?6),
                     v(w) AS (SELECT json(?7))
       INSERT INTO session_events (id, session_id, workspace_id, seq, type, run_id, parent_id, hidden, payload, search_text, ts)
       SELECT ?3 || '_' || i || '_' || j, ?8 || '_' || i, ?4, j, 'message', NULL, NULL, 0, '{}',
              'message ' || j || ' of session ' || i || ': ' ||
              json_extract(w, '$[' || ((i * 7 + j * 13) % CAST(?9 AS INTEGER)) || ']') || ' ' ||
              json_extract(w, '$[' || ((i * 11 + j * 3) % CAST(?9 AS INTEGER)) || ']') || ' and ' ||
              json_extract(w, '$[' || ((i * 5 + j * 17 + 1) % CAST(?9 AS INTEGER)) || ']') || ' then ' ||
              json_extract(w, '$[' || ((i * 13 + j * 7 + 2) % CAST(?9 AS INTEGER)) || ']') ||
              CASE WHEN i % 1000 = 7 AND j = 5 THEN ' near the quetzal' ELSE '' END,
              CAST(?5 AS INTEGER) + i * 100 + j
         FROM s, m, v`,
    ).bind(
      from,
      to,
      `bevt_${workspaceId}`,
      workspaceId,
      now,
      messages,
      JSON.stringify(VOCABULARY),
      `bses_${workspaceId}`,
      VOCABULARY.length,
    ),
  ]);
}

export default {
  ...production,
  async fetch(request, env, ctx) {
    const path = new URL(request.url).pathname;
    const match = ROUTE.exec(path);
    if (!match && path !== SEED_ROUTE) return production.fetch(request, env, ctx);
    const secret = bearerOf(request.headers.get("Authorization"));
    const principal = secret ? await principalForToken(env, secret) : null;
    if (!principal) return error(401, "unauthorized", "Missing, invalid or revoked bearer token");
    if (!hasScope(principal, "admin")) return error(403, "forbidden", "The bench routes need the 'admin' scope");
    if (!match) {
      if (request.method !== "POST") return error(405, "method_not_allowed", `${request.method} not allowed here`);
      const body = (await request.json()) as { from: number; to: number; messages: number };
      await seedSearch(env, principal.workspaceId, body.from, body.to, body.messages);
      return Response.json({ seeded: body.to - body.from + 1 });
    }
    const [, sessionId, action] = match as unknown as [string, string, "baseline" | "stats"];
    if (request.method !== (action === "baseline" ? "POST" : "GET"))
      return error(405, "method_not_allowed", `${request.method} not allowed here`);

    const sessions = env.SESSIONS as unknown as DurableObjectNamespace<SessionDO>;
    const stub = sessions.get(sessions.idFromName(sessionId));
    if (action === "baseline") return Response.json({ touches: await stub.benchBaseline(principal.workspaceId) });
    return Response.json(await stub.stats());
  },
} satisfies ExportedHandler<Env>;

function error(status: number, code: string, message: string): Response {
  return Response.json({ error: { code, message } }, { status });
}
