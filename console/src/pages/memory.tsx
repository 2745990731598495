/**
 * Memory (docs/memory.md): the workspace's (or an agent's) two stores — notes and profile — with each
 * entry editable and removable, a new entry added, the budget used, and the history of changes (who,
 * what, when). An edit rewrites the store through `PUT /api/memory/:store`, as the API offers.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import type { Schemas } from "../api/openapi";
import { Empty, ErrorNote, Loading, Time, useAction, useLoad } from "../ui";

type Store = "notes" | "profile";

export function MemoryPage() {
  const [agent, setAgent] = useState("");
  const [agentInput, setAgentInput] = useState("");
  const [tick, setTick] = useState(0);
  const query = agent ? { agent_id: agent } : {};
  const memory = useLoad(() => api("get", "/api/memory", { query }), [agent, tick]);
  const history = useLoad(() => api("get", "/api/memory/history", { query: { ...query, limit: 50 } }), [agent, tick]);
  const changed = () => setTick((t) => t + 1);
  return (
    <section class="panel page" aria-label="Memory">
      <h2>Memory</h2>
      <form
        class="row"
        onSubmit={(e) => {
          e.preventDefault();
          setAgent(agentInput.trim());
        }}
      >
        <label for="memory-agent">Agent (blank: the workspace's memory)</label>
        <input id="memory-agent" class="narrow-input" value={agentInput} onInput={(e) => setAgentInput(e.currentTarget.value)} />
        <button type="submit" class="secondary">
          Show
        </button>
      </form>
      <Loading state={memory}>
        {(m) => (
          <div class="cards">
            {(["notes", "profile"] as const).map((store) => (
              <StoreCard key={store} store={m.stores[store]} agent={agent} onChanged={changed} />
            ))}
          </div>
        )}
      </Loading>
      <h3>History</h3>
      <Loading state={history}>
        {(h) =>
          h.changes.length === 0 ? (
            <Empty>No change yet.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    <th>when</th>
                    <th>store</th>
                    <th>change</th>
                    <th>by</th>
                  </tr>
                </thead>
                <tbody>
                  {h.changes.map((c) => (
                    <tr key={c.seq}>
                      <td>
                        <Time ts={c.created_at} />
                      </td>
                      <td>{c.store}</td>
                      <td>
                        <span class="badge">{c.action}</span> {c.old_text ? <del>{c.old_text}</del> : null}{" "}
                        {c.new_text ? <ins>{c.new_text}</ins> : null}
                      </td>
                      <td class="small">
                        {c.actor.kind === "run" ? `run ${c.actor.id}` : `token ${c.actor.id}`}
                        {c.actor.session_id ? <div class="muted mono">{c.actor.session_id}</div> : null}
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
    </section>
  );
}

function StoreCard({ store, agent, onChanged }: { store: Schemas["MemoryStore"]; agent: string; onChanged: () => void }) {
  const [text, setText] = useState("");
  const [editing, setEditing] = useState<{ id: string; text: string } | null>(null);
  const action = useAction();
  const query = agent ? { agent_id: agent } : {};
  const name = store.store as Store;
  const add = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api("post", "/api/memory/{store}/entries", { params: { store: name }, query, body: { text: text.trim() } });
      setText("");
      onChanged();
    });
  };
  const saveEdit = (e: Event) => {
    e.preventDefault();
    if (!editing) return;
    void action.run(async () => {
      const entries = store.entries.map((x) => (x.id === editing.id ? editing.text.trim() : x.text));
      await api("put", "/api/memory/{store}", { params: { store: name }, query, body: { entries } });
      setEditing(null);
      onChanged();
    });
  };
  return (
    <div class="card" data-testid={`memory-${name}`}>
      <h3>{name === "notes" ? "Notes" : "Profile"}</h3>
      <p class="muted small">
        {store.used_chars} of {store.budget_chars} characters ({store.usage})
      </p>
      {store.entries.length === 0 ? <Empty>No entry yet.</Empty> : null}
      <ul class="list">
        {store.entries.map((entry) =>
          editing?.id === entry.id ? (
            <li key={entry.id}>
              <form onSubmit={saveEdit}>
                <label for={`edit-${entry.id}`}>Edit entry</label>
                <textarea
                  id={`edit-${entry.id}`}
                  rows={3}
                  value={editing.text}
                  onInput={(e) => setEditing({ id: entry.id, text: e.currentTarget.value })}
                />
                <div class="row">
                  <button type="submit" disabled={action.busy}>
                    Save
                  </button>
                  <button type="button" class="secondary" onClick={() => setEditing(null)}>
                    Cancel
                  </button>
                </div>
              </form>
            </li>
          ) : (
            <li key={entry.id}>
              <div class="text">{entry.text}</div>
              <div class="row small muted">
                <Time ts={entry.updated_at} />
                <button
                  type="button"
                  class="small link"
                  onClick={() => setEditing({ id: entry.id, text: entry.text })}
                  aria-label={`Edit entry: ${entry.text.slice(0, 40)}`}
                >
                  Edit
                </button>
                <button
                  type="button"
                  class="small link"
                  disabled={action.busy}
                  aria-label={`Remove entry: ${entry.text.slice(0, 40)}`}
                  onClick={() =>
                    action.run(async () => {
                      await api("delete", "/api/memory/{store}/entries/{id}", { params: { store: name, id: entry.id }, query });
                      onChanged();
                    })
                  }
                >
                  Remove
                </button>
              </div>
            </li>
          ),
        )}
      </ul>
      <form onSubmit={add}>
        <label for={`add-${name}`}>New {name === "notes" ? "note" : "profile entry"}</label>
        <textarea id={`add-${name}`} rows={2} value={text} onInput={(e) => setText(e.currentTarget.value)} />
        <button type="submit" disabled={action.busy || !text.trim()}>
          Add
        </button>
      </form>
      <ErrorNote error={action.error} />
    </div>
  );
}
