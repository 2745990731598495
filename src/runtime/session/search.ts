/**
 * Session search over D1 (docs/sessions.md, "Search"): the FTS5 index `session_search_fts` that the
 * replicator feeds (through a trigger on `session_events`, migration 0004), ranked with bm25 and cut to
 * snippets, plus the "recent sessions" listing. It lives in the runtime because it reads only tables the
 * runtime owns and writes, and both the HTTP API (edge) and the agent's `session_search` tool use it.
 * Every query is scoped to one workspace: another workspace's events never match.
 */

/** Words of a query kept (the rest are ignored); a query is at most 200 characters anyway. */
export const MAX_QUERY_TERMS = 16;
/** Ranked results are paged this deep at most: past it, a search answers no further page. */
export const MAX_SEARCH_DEPTH = 1000;
/** Characters of a snippet or excerpt kept (a snippet is ~24 tokens, but one token may be long). */
const MAX_SNIPPET_CHARS = 400;
/** The last word matches as a prefix only from this length on (shorter prefixes expand to too many terms). */
const MIN_PREFIX_CHARS = 3;

/** Marks around matched words in snippets. */
export const HIGHLIGHT_OPEN = "**";
export const HIGHLIGHT_CLOSE = "**";

/**
 * The user's query as an FTS5 expression of plain words: each word (a run of letters, digits, marks or
 * private-use characters — what the `unicode61` tokenizer keeps) becomes a quoted string, so FTS5 syntax
 * (quotes, `*`, `^`, `:`, parentheses, AND/OR/NOT/NEAR) is only ever text. All words must match; the last
 * one also matches as a prefix ("capyb" finds "capybara"). Null when the query has no word at all.
 */
export function ftsQuery(query: string): string | null {
  const words = (query.match(/[\p{L}\p{N}\p{M}\p{Co}]+/gu) ?? []).slice(0, MAX_QUERY_TERMS);
  if (words.length === 0) return null;
  return words
    .map((w, i) => {
      const quoted = `"${w.replaceAll('"', '""')}"`;
      return i === words.length - 1 && [...w].length >= MIN_PREFIX_CHARS ? `${quoted}*` : quoted;
    })
    .join(" ");
}

export interface SearchHit {
  session_id: string;
  session_title: string;
  event_id: string;
  seq: number;
  type: string;
  ts: number;
  /** The matched passage with matched words between `**`; `…` where text was cut. */
  snippet: string;
  /** Relevance (bm25, higher is better); only comparable within one search. */
  score: number;
}

export interface SearchOptions {
  workspaceId: string;
  query: string;
  limit: number;
  /** Hits of the ranking skipped (the page cursor); at most MAX_SEARCH_DEPTH. */
  offset?: number;
  /** Leave this session's events out (the agent's own session). */
  excludeSessionId?: string;
  /** Archived sessions are left out unless asked for (docs/sessions.md, "Rename, archive, delete"). */
  includeArchived?: boolean;
}

interface HitRow {
  event_id: string;
  session_id: string;
  seq: number;
  type: string;
  ts: number;
  title: string | null;
  snippet: string | null;
  score: number;
}

/** Ranked matches of `query` among the workspace's visible events, best first; [] for a query without words. */
export async function searchSessions(db: D1Database, opts: SearchOptions): Promise<SearchHit[]> {
  const match = ftsQuery(opts.query);
  const offset = opts.offset ?? 0;
  const limit = Math.min(opts.limit, MAX_SEARCH_DEPTH - offset);
  if (match === null || limit <= 0) return [];
  const statement = db
    .prepare(
      // Rank first (rowid and bm25 only), then build snippets for the page alone: a snippet per match
      // would cost as much as the ranking for a common word.
      `WITH top AS (
         SELECT session_search_fts.rowid AS rid, bm25(session_search_fts) AS score, e.id AS event_id
           FROM session_search_fts
           JOIN session_events e ON e.id = session_search_fts.event_id
          WHERE session_search_fts MATCH ?1 AND e.workspace_id = ?2 AND e.hidden = 0
            AND (?4 IS NULL OR e.session_id != ?4)
            AND (?6 = 1 OR NOT EXISTS (SELECT 1 FROM sessions a WHERE a.id = e.session_id AND a.archived_at IS NOT NULL))
          ORDER BY score, e.id
          LIMIT ?3 OFFSET ?5)
       SELECT e.id AS event_id, e.session_id, e.seq, e.type, e.ts, s.title, top.score,
              snippet(session_search_fts, 0, '${HIGHLIGHT_OPEN}', '${HIGHLIGHT_CLOSE}', '…', 24) AS snippet
         FROM top
         JOIN session_search_fts ON session_search_fts.rowid = top.rid
         JOIN session_events e ON e.id = top.event_id
         LEFT JOIN sessions s ON s.id = e.session_id
        WHERE session_search_fts MATCH ?1
        ORDER BY top.score, e.id`,
    )
    .bind(match, opts.workspaceId, limit, opts.excludeSessionId ?? null, offset, opts.includeArchived ? 1 : 0);
  const { results } = await statement.all<HitRow>();
  return results.map((r) => ({
    session_id: r.session_id,
    session_title: r.title ?? "",
    event_id: r.event_id,
    seq: r.seq,
    type: r.type,
    ts: r.ts,
    snippet: cut(r.snippet ?? ""),
    score: -r.score,
  }));
}

export interface RecentSession {
  session_id: string;
  title: string;
  status: string;
  updated_at: number;
  last_seq: number;
  /** The latest searchable text of the session, flattened and cut short ("" when it has none). */
  excerpt: string;
}

interface RecentRow {
  id: string;
  title: string;
  status: string;
  updated_at: number;
  last_seq: number;
  latest: string | null;
}

/** The workspace's most recently updated sessions with a short excerpt of their latest visible text. */
export async function recentSessions(
  db: D1Database,
  opts: { workspaceId: string; limit: number; excludeSessionId?: string; excerptChars?: number },
): Promise<RecentSession[]> {
  const { results } = await db
    .prepare(
      `SELECT s.id, s.title, s.status, s.updated_at, s.last_seq,
              (SELECT e.search_text FROM session_events e
                WHERE e.session_id = s.id AND e.search_text IS NOT NULL AND e.hidden = 0
                ORDER BY e.seq DESC LIMIT 1) AS latest
         FROM sessions s
        WHERE s.workspace_id = ?1 AND (?3 IS NULL OR s.id != ?3)
        ORDER BY s.updated_at DESC, s.id DESC
        LIMIT ?2`,
    )
    .bind(opts.workspaceId, opts.limit, opts.excludeSessionId ?? null)
    .all<RecentRow>();
  return results.map((r) => ({
    session_id: r.id,
    title: r.title,
    status: r.status,
    updated_at: r.updated_at,
    last_seq: r.last_seq,
    excerpt: cut((r.latest ?? "").replace(/\s+/g, " ").trim(), opts.excerptChars ?? 160),
  }));
}

function cut(text: string, max = MAX_SNIPPET_CHARS): string {
  const chars = [...text];
  return chars.length <= max ? text : `${chars.slice(0, max - 1).join("")}…`;
}
