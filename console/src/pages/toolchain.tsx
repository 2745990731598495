/**
 * Toolchain (docs/toolchain.md): webhook deliveries, the task board by status (filterable by agent),
 * one task with its steps (`must_haves`), history, comments and outputs, the agents with their roles,
 * and mail between agents.
 */
import { useState } from "preact/hooks";
import { MailList } from "./mail";
import { api } from "../api/client";
import { Empty, ErrorNote, Json, Link, Loading, Status, Time, useAction, useLoad } from "../ui";

interface Task {
  id: string;
  agent_id: string | null;
  title: string;
  description: string;
  action_type: string;
  event_type: string;
  must_haves: unknown;
  repo: string | null;
  number: number | null;
  status: string;
  attempts: number;
  session_id: string | null;
  run_id: string | null;
  last_error: string | null;
  created_at: number;
  updated_at: number;
}

const STATUSES = ["pending", "working", "done", "failed", "cancelled"];

export function ToolchainPage({ taskId }: { taskId: string | undefined }) {
  const [tab, setTab] = useState<"board" | "deliveries" | "agents" | "mail">("board");
  if (taskId) return <TaskDetail id={taskId} />;
  return (
    <section class="panel" aria-label="Toolchain">
      <h2>Toolchain</h2>
      <div class="tabs" role="tablist">
        {(["board", "deliveries", "agents", "mail"] as const).map((t) => (
          <button
            key={t}
            type="button"
            role="tab"
            aria-selected={tab === t}
            class={tab === t ? "active" : undefined}
            onClick={() => setTab(t)}
          >
            {t === "board" ? "Task board" : t[0]!.toUpperCase() + t.slice(1)}
          </button>
        ))}
      </div>
      {tab === "board" ? <Board /> : tab === "deliveries" ? <Deliveries /> : tab === "agents" ? <Agents /> : <MailList />}
    </section>
  );
}

function Board() {
  const [agent, setAgent] = useState("");
  const [tick, setTick] = useState(0);
  const tasks = useLoad(
    async () =>
      (await api("get", "/api/toolchain/tasks", { query: { limit: 100, ...(agent ? { agent_id: agent } : {}) } }))
        .tasks as unknown as Task[],
    [agent, tick],
  );
  const statuses = [...new Set([...STATUSES, ...(tasks.data ?? []).map((t) => t.status)])];
  return (
    <>
      <div class="row">
        <label for="agent-filter">Agent</label>
        <input id="agent-filter" value={agent} onChange={(e) => setAgent(e.currentTarget.value)} placeholder="all agents" />
        <button type="button" onClick={() => setTick((t) => t + 1)}>
          Refresh
        </button>
      </div>
      <Loading state={tasks}>
        {(list) => (
          <>
            {list.length === 0 ? <Empty>No task yet: a Gitea webhook (docs/gitea.md) creates them.</Empty> : null}
            <div class="board">
              {statuses.map((status) => {
                const column = list.filter((t) => t.status === status);
                return (
                  <div key={status} class="column" aria-label={`${status} tasks`}>
                    <h3>
                      {status} <span class="muted">({column.length})</span>
                    </h3>
                    {column.map((t) => (
                      <div key={t.id} class="card" data-testid="task-card">
                        <Link href={`/toolchain/${encodeURIComponent(t.id)}`}>{t.title}</Link>
                        <div class="small muted">
                          {t.action_type} · {t.agent_id ?? "unassigned"} · {t.repo ?? ""}
                          {t.number ? `#${t.number}` : ""}
                        </div>
                      </div>
                    ))}
                  </div>
                );
              })}
            </div>
          </>
        )}
      </Loading>
    </>
  );
}

function TaskDetail({ id }: { id: string }) {
  const [tick, setTick] = useState(0);
  const data = useLoad(() => api("get", "/api/toolchain/tasks/{id}", { params: { id } }), [id, tick]);
  const action = useAction();
  const [comment, setComment] = useState("");
  return (
    <section class="panel" aria-label="Task">
      <Link href="/toolchain">← Task board</Link>
      <Loading state={data}>
        {(d) => {
          const t = d.task as unknown as Task;
          const steps = Array.isArray(t.must_haves) ? (t.must_haves as unknown[]) : [];
          return (
            <>
              <h2>
                {t.title} <Status value={t.status} />
              </h2>
              <p class="small">
                {t.action_type} · agent {t.agent_id ?? "—"} · {t.repo ?? ""}
                {t.number ? `#${t.number}` : ""} · attempts {t.attempts} · updated <Time ts={t.updated_at} />
                {t.session_id ? (
                  <>
                    {" "}
                    · <Link href={`/chat/${encodeURIComponent(t.session_id)}`}>session</Link>
                  </>
                ) : null}
              </p>
              {t.last_error ? <div class="error">{t.last_error}</div> : null}
              <p>{t.description}</p>
              <div class="row">
                <button
                  type="button"
                  disabled={action.busy}
                  onClick={() =>
                    action.run(
                      async () => (await api("post", "/api/toolchain/tasks/{id}/retry", { params: { id } }), setTick((x) => x + 1)),
                    )
                  }
                >
                  Retry
                </button>
                <button
                  type="button"
                  class="danger"
                  disabled={action.busy}
                  onClick={() =>
                    action.run(
                      async () => (await api("post", "/api/toolchain/tasks/{id}/cancel", { params: { id } }), setTick((x) => x + 1)),
                    )
                  }
                >
                  Cancel task
                </button>
              </div>
              <ErrorNote error={action.error} />
              <h3>Steps</h3>
              {steps.length > 0 ? (
                <ol>
                  {steps.map((s, i) => (
                    <li key={i}>{typeof s === "string" ? s : <Json value={s} />}</li>
                  ))}
                </ol>
              ) : (
                <Json value={t.must_haves} />
              )}
              <h3>History</h3>
              <table>
                <tbody>
                  {d.history.map((h, i) => (
                    <tr key={i}>
                      <td>
                        <Time ts={h.at as number} />
                      </td>
                      <td>{String(h.event)}</td>
                      <td>
                        {String(h.from_status ?? "")} → {String(h.to_status ?? "")}
                      </td>
                      <td class="small">{typeof h.detail === "string" ? h.detail : JSON.stringify(h.detail)}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
              <h3>Comments</h3>
              <ul class="list">
                {d.comments.map((c) => (
                  <li key={c.id}>
                    <strong>{c.author}</strong> <span class="badge">{c.comment_type}</span> <Time ts={c.created_at} />
                    <div class="text">{c.body}</div>
                  </li>
                ))}
              </ul>
              <form
                onSubmit={(e) => {
                  e.preventDefault();
                  void action.run(async () => {
                    await api("post", "/api/toolchain/tasks/{id}/comments", { params: { id }, body: { body: comment } });
                    setComment("");
                    setTick((x) => x + 1);
                  });
                }}
              >
                <label for="comment">Add a comment</label>
                <textarea id="comment" rows={2} value={comment} onInput={(e) => setComment(e.currentTarget.value)} required />
                <button type="submit">Comment</button>
              </form>
              <h3>Outputs</h3>
              {d.outputs.map((o) => (
                <div key={o.id} class="card">
                  <span class="badge">{o.type}</span> <Time ts={o.created_at} />
                  <Json value={o.content} />
                </div>
              ))}
            </>
          );
        }}
      </Loading>
    </section>
  );
}

function Deliveries() {
  const list = useLoad(
    async () =>
      (await api("get", "/api/toolchain/deliveries", { query: { limit: 50 } })).deliveries as unknown as Record<string, unknown>[],
    [],
  );
  return (
    <Loading state={list}>
      {(rows) =>
        rows.length === 0 ? (
          <Empty>No webhook delivery yet.</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <th>received</th>
                <th>event</th>
                <th>repo</th>
                <th>outcome</th>
                <th>tasks</th>
              </tr>
            </thead>
            <tbody>
              {rows.map((d) => (
                <tr key={String(d.delivery_id)}>
                  <td>
                    <Time ts={d.received_at as number} />
                  </td>
                  <td>
                    {String(d.event_type)} {d.action ? `(${String(d.action)})` : ""}
                  </td>
                  <td>{String(d.repo ?? "")}</td>
                  <td>
                    <Status value={String(d.outcome)} /> <span class="small">{String(d.reason ?? "")}</span>
                  </td>
                  <td>
                    {((d.task_ids as string[] | null) ?? []).map((id) => (
                      <Link key={id} href={`/toolchain/${encodeURIComponent(id)}`}>
                        {id}{" "}
                      </Link>
                    ))}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Loading>
  );
}

function Agents() {
  const list = useLoad(async () => (await api("get", "/api/agents")).agents, []);
  return (
    <Loading state={list}>
      {(agents) =>
        agents.length === 0 ? (
          <Empty>No agent yet: add one with POST /api/agents.</Empty>
        ) : (
          <table>
            <thead>
              <tr>
                <th>agent</th>
                <th>Gitea user</th>
                <th>roles</th>
                <th>skills</th>
                <th>enabled</th>
              </tr>
            </thead>
            <tbody>
              {agents.map((a) => (
                <tr key={a.id}>
                  <td>{a.id}</td>
                  <td>{a.gitea_username}</td>
                  <td>{a.roles.join(", ")}</td>
                  <td>{a.skills.join(", ")}</td>
                  <td>{a.enabled ? "yes" : "no"}</td>
                </tr>
              ))}
            </tbody>
          </table>
        )
      }
    </Loading>
  );
}
