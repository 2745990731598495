/**
 * The session list (most recent first) with full-text search; archived sessions are hidden unless asked
 * for ("Archived" shows them; search includes them on request). On a phone it is a drawer.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { Empty, Link, Loading, Time, useLoad } from "../ui";

export function SessionList({ current, tick, onNew }: { current: string | undefined; tick: number; onNew: () => void }) {
  const [q, setQ] = useState("");
  const [query, setQuery] = useState("");
  const [archived, setArchived] = useState(false);
  const sessions = useLoad(
    () => api("get", "/api/sessions", { query: { limit: 50, archived: archived ? "true" : "false" } }),
    [tick, archived],
  );
  const results = useLoad(
    async () =>
      query ? api("get", "/api/sessions/search", { query: { q: query, limit: 20, include_archived: archived ? "true" : "false" } }) : null,
    [query, archived],
  );
  return (
    <>
      <button type="button" onClick={onNew}>
        New chat
      </button>
      <form
        role="search"
        onSubmit={(e) => {
          e.preventDefault();
          setQuery(q.trim());
        }}
      >
        <label for="session-search">Search sessions</label>
        <div class="row">
          <input id="session-search" type="search" value={q} onInput={(e) => setQ(e.currentTarget.value)} />
          <button type="submit">Search</button>
        </div>
      </form>
      <label class="check">
        <input type="checkbox" checked={archived} onChange={(e) => setArchived(e.currentTarget.checked)} /> Archived sessions
      </label>
      {query ? (
        <Loading state={results}>
          {(r) =>
            r && r.results.length > 0 ? (
              <ul class="list">
                {r.results.map((hit) => (
                  <li key={hit.event_id}>
                    <Link href={`/chat/${encodeURIComponent(hit.session_id)}`}>{hit.session_title || hit.session_id}</Link>
                    <div class="muted small">{hit.snippet}</div>
                  </li>
                ))}
              </ul>
            ) : (
              <Empty>No session matches “{query}”.</Empty>
            )
          }
        </Loading>
      ) : (
        <Loading state={sessions}>
          {(s) =>
            s.sessions.length > 0 ? (
              <ul class="list">
                {s.sessions.map((x) => (
                  <li key={x.id} class={x.id === current ? "current" : undefined}>
                    <Link href={`/chat/${encodeURIComponent(x.id)}`}>{x.title || x.id}</Link>
                    <div class="muted small">
                      <Time ts={x.updated_at} /> · {x.status}
                    </div>
                  </li>
                ))}
              </ul>
            ) : (
              <Empty>{archived ? "No archived session." : "No session yet: start a new chat."}</Empty>
            )
          }
        </Loading>
      )}
    </>
  );
}
