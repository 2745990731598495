/**
 * A conversation's header: its title (the auxiliary model's once it arrives), usage, and the session's
 * actions — rename, archive / unarchive, delete (admin; asks for confirmation first) through
 * `PATCH` / `DELETE /api/sessions/:id` — and, folded away, its branches (switch) and runs.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Schemas } from "../api/openapi";
import { ErrorNote, Loading, Status, Time, UsageText, useAction, useLoad } from "../ui";

export function SessionHeader({
  session,
  fallbackTitle,
  onChanged,
  onDeleted,
  onOpenDrawer,
}: {
  session: Schemas["Session"] | null | undefined;
  fallbackTitle: string;
  onChanged: () => void;
  onDeleted: () => void;
  onOpenDrawer: () => void;
}) {
  const [mode, setMode] = useState<"view" | "rename" | "delete">("view");
  const [title, setTitle] = useState("");
  const action = useAction();
  const patch = (body: { title?: string; archived?: boolean }) =>
    action.run(async () => {
      await api("patch", "/api/sessions/{id}", { params: { id: session!.id }, body });
      setMode("view");
      onChanged();
    });
  return (
    <header class="conv-head">
      <div class="row spread">
        <button type="button" class="drawer-toggle small" onClick={onOpenDrawer}>
          <span aria-hidden="true">☰</span> Sessions
        </button>
        {mode === "rename" && session ? (
          <form
            class="row grow"
            onSubmit={(e) => {
              e.preventDefault();
              void patch({ title: title.trim() });
            }}
          >
            <label for="session-title" class="visually-hidden">
              Session title
            </label>
            <input id="session-title" value={title} maxLength={200} onInput={(e) => setTitle(e.currentTarget.value)} required />
            <button type="submit" disabled={action.busy}>
              Save
            </button>
            <button type="button" class="secondary" onClick={() => setMode("view")}>
              Cancel
            </button>
          </form>
        ) : (
          <h2 class="grow" data-testid="session-title">
            {session?.title || fallbackTitle}
            {session?.archived_at ? <span class="badge">archived</span> : null}
          </h2>
        )}
        {session && mode === "view" ? (
          <div class="row">
            <button
              type="button"
              class="secondary small"
              onClick={() => {
                setTitle(session.title);
                setMode("rename");
              }}
            >
              Rename
            </button>
            <button type="button" class="secondary small" disabled={action.busy} onClick={() => patch({ archived: !session.archived_at })}>
              {session.archived_at ? "Unarchive" : "Archive"}
            </button>
            <button type="button" class="danger small" onClick={() => setMode("delete")}>
              Delete
            </button>
          </div>
        ) : null}
      </div>
      {mode === "delete" && session ? (
        <div class="confirm row" role="alertdialog" aria-label="Delete this session">
          <span>Delete this session for good? Its log, runs and search entries go; this cannot be undone.</span>
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              action.run(async () => {
                await api("delete", "/api/sessions/{id}", { params: { id: session.id } });
                onDeleted();
              })
            }
          >
            Delete for good
          </button>
          <button type="button" class="secondary" onClick={() => setMode("view")}>
            Keep it
          </button>
        </div>
      ) : null}
      {session ? (
        <div class="muted small">
          {session.status} · <UsageText usage={session.usage} />
        </div>
      ) : null}
      <ErrorNote error={action.error} />
    </header>
  );
}

/** Branches (switch to another leaf) and runs (status, model, usage), folded away under the header. */
export function SessionDetails({ sessionId, tick, busy, onDone }: { sessionId: string; tick: number; busy: boolean; onDone: () => void }) {
  const [open, setOpen] = useState(false);
  return (
    <details class="session-details runs-details" onToggle={(e) => setOpen(e.currentTarget.open)}>
      <summary>Branches and runs</summary>
      {open ? <SessionSide sessionId={sessionId} tick={tick} busy={busy} onDone={onDone} /> : null}
    </details>
  );
}

function SessionSide({ sessionId, tick, busy, onDone }: { sessionId: string; tick: number; busy: boolean; onDone: () => void }) {
  const tree = useLoad(() => api("get", "/api/sessions/{id}/tree", { params: { id: sessionId } }), [sessionId, tick, busy]);
  const runs = useLoad(
    () => api("get", "/api/sessions/{id}/runs", { params: { id: sessionId }, query: { limit: 20 } }),
    [sessionId, tick, busy],
  );
  const action = useAction();
  return (
    <div class="side">
      <h3>Branches</h3>
      <Loading state={tree}>
        {(t) => (
          <ul class="list">
            {t.leaves.map((leaf) => (
              <li key={leaf.event_id}>
                <span class="small">{leaf.excerpt || leaf.type}</span>{" "}
                {leaf.active ? (
                  <span class="badge">active</span>
                ) : (
                  <button
                    type="button"
                    class="small"
                    disabled={busy || action.busy}
                    onClick={() =>
                      action.run(async () => {
                        await api("post", "/api/sessions/{id}/branch", {
                          params: { id: sessionId },
                          body: { leaf_event_id: leaf.event_id, client_id: "console" },
                        });
                        onDone();
                      })
                    }
                  >
                    Switch to this branch
                  </button>
                )}
              </li>
            ))}
          </ul>
        )}
      </Loading>
      <ErrorNote error={action.error} />
      <h3>Runs</h3>
      <Loading state={runs}>
        {(r) => (
          <div class="table-wrap" tabIndex={0}>
            <table>
              <thead>
                <tr>
                  <th>run</th>
                  <th>status</th>
                  <th>model</th>
                  <th>usage</th>
                  <th>started</th>
                </tr>
              </thead>
              <tbody>
                {r.runs.map((run) => (
                  <tr key={run.id}>
                    <td class="mono small">{run.id}</td>
                    <td>
                      <Status value={run.status} />
                      {run.result.error ? <div class="small">{run.result.error.message}</div> : null}
                    </td>
                    <td>{run.result.model ?? "—"}</td>
                    <td>
                      <UsageText usage={run.result.usage} />
                    </td>
                    <td>
                      <Time ts={run.started_at ?? run.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
        )}
      </Loading>
    </div>
  );
}
