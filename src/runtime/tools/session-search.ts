/**
 * `session_search({ query?, limit?, include_current?, mode? })`: the agent searches what was said in
 * its workspace's other sessions (the same ranked full-text search as `GET /api/sessions/search`), or
 * lists the most recent sessions with a short excerpt. Workspace-scoped; the current session is left
 * out unless asked for. A runtime tool because it reads only the runtime's own session tables; the
 * composition root registers it for every tool set (docs/sessions.md, "Search").
 */
import { z } from "zod";
import { defineTool, fail, ok } from "./spec.ts";
import { recentSessions, searchSessions, type RecentSession, type SearchHit } from "../session/search.ts";

export const SESSION_SEARCH_DEFAULT_LIMIT = 5;
export const SESSION_SEARCH_MAX_LIMIT = 20;

const Input = z.strictObject({
  query: z
    .string()
    .max(200)
    .optional()
    .describe("Plain words to look for (all must match; the last one also as a prefix). Needed in search mode."),
  limit: z
    .number()
    .int()
    .min(1)
    .max(SESSION_SEARCH_MAX_LIMIT)
    .optional()
    .describe(`How many results (default ${SESSION_SEARCH_DEFAULT_LIMIT})`),
  include_current: z.boolean().optional().describe("Also search this session (default false)"),
  mode: z
    .enum(["search", "recent"])
    .optional()
    .describe("search (default): ranked matches with snippets; recent: the latest sessions with titles and an excerpt"),
});

const when = (ts: number) => new Date(ts).toISOString().replace(/\.\d{3}Z$/, "Z");

function formatHits(query: string, hits: SearchHit[]): string {
  if (hits.length === 0) return `No earlier messages match "${query}".`;
  const lines = hits.map(
    (h, i) =>
      `${i + 1}. session ${h.session_id}${h.session_title !== "" ? ` "${h.session_title}"` : ""} · event ${h.event_id} (seq ${h.seq}) · ${when(h.ts)}\n   ${h.snippet.replace(/\s+/g, " ")}`,
  );
  return `${hits.length} match${hits.length === 1 ? "" : "es"} for "${query}", best first (matched words between **):\n${lines.join("\n")}`;
}

function formatRecent(sessions: RecentSession[]): string {
  if (sessions.length === 0) return "No other sessions in this workspace.";
  const lines = sessions.map(
    (s, i) =>
      `${i + 1}. session ${s.session_id}${s.title !== "" ? ` "${s.title}"` : ""} · ${s.status} · updated ${when(s.updated_at)}${s.excerpt !== "" ? `\n   ${s.excerpt}` : ""}`,
  );
  return `The ${sessions.length} most recently updated session${sessions.length === 1 ? "" : "s"}:\n${lines.join("\n")}`;
}

export const sessionSearchTool = defineTool<z.infer<typeof Input>>({
  name: "session_search",
  description:
    'Search what was said in this workspace\'s earlier sessions (user and assistant messages; not tool output), best match first, with the session, event id and a snippet. mode "recent" lists the latest sessions instead.',
  input: Input,
  idempotent: true,
  readOnly: true,
  // A page of snippets: more than this is noise the model should narrow with `limit` or a query.
  maxResultChars: 20_000,
  async execute(args, ctx) {
    // Read-your-writes for this session: its run's messages may still be on their way to D1.
    await ctx.replicated?.();
    const limit = args.limit ?? SESSION_SEARCH_DEFAULT_LIMIT;
    const exclude = args.include_current === true ? {} : { excludeSessionId: ctx.sessionId };
    if (args.mode === "recent") {
      return ok(formatRecent(await recentSessions(ctx.env.DB, { workspaceId: ctx.workspaceId, limit, ...exclude })));
    }
    const query = args.query?.trim() ?? "";
    if (query === "") return fail("invalid_input", 'query is needed in search mode (or use mode "recent")');
    const hits = await searchSessions(ctx.env.DB, { workspaceId: ctx.workspaceId, query, limit, ...exclude });
    return ok(formatHits(query, hits));
  },
});
