/**
 * Chat and sessions: the session list with search, and a conversation that streams live through the
 * AI SDK UI route (`/api/ui/chat`, docs/ui-stream.md) — text, thinking, tool calls with arguments and
 * results, the model that answered — with send, steer and cancel, the session tree (rewind, branch)
 * and the runs with their status and usage. Runs started elsewhere are noticed through the session's
 * event stream, opened with a single-use stream ticket (EventSource cannot send a bearer token).
 * A tool call waiting for approval (docs/approvals.md) is shown with its tool and arguments and
 * Approve / Deny buttons, from the transcript's approval notices; the stream's
 * `tool_approval_requested` / `tool_approval_decided` events make the page read them at once.
 */
import { useEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { Schemas } from "../api/openapi";
import { navigate } from "../router";
import { BeaverChat, useChatState, type BeaverMessage } from "../chat/preact-chat";
import { ErrorNote, Json, Link, Loading, Status, Time, UsageText, useAction, useLoad } from "../ui";

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "ses_" + Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("");
}

export function ChatPage({ sessionId }: { sessionId: string | undefined }) {
  const [listTick, setListTick] = useState(0);
  return (
    <div class="split">
      <SessionList current={sessionId} tick={listTick} />
      {sessionId ? (
        <Conversation key={sessionId} sessionId={sessionId} onChanged={() => setListTick((t) => t + 1)} />
      ) : (
        <section class="panel">
          <h2>Chat</h2>
          <p>Pick a session, or start a new chat.</p>
          <button type="button" onClick={() => navigate(`/chat/${newSessionId()}`)}>
            New chat
          </button>
        </section>
      )}
    </div>
  );
}

function SessionList({ current, tick }: { current: string | undefined; tick: number }) {
  const [q, setQ] = useState("");
  const [query, setQuery] = useState("");
  const sessions = useLoad(() => api("get", "/api/sessions", { query: { limit: 50 } }), [tick]);
  const results = useLoad(async () => (query ? api("get", "/api/sessions/search", { query: { q: query, limit: 20 } }) : null), [query]);
  return (
    <aside class="sidebar" aria-label="Sessions">
      <button type="button" onClick={() => navigate(`/chat/${newSessionId()}`)}>
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
      {query ? (
        <Loading state={results}>
          {(r) => (
            <ul class="list">
              {(r?.results ?? []).map((hit) => (
                <li key={hit.event_id}>
                  <Link href={`/chat/${encodeURIComponent(hit.session_id)}`}>{hit.session_title || hit.session_id}</Link>
                  <div class="muted small">{hit.snippet}</div>
                </li>
              ))}
              {r && r.results.length === 0 ? <li class="muted">No match.</li> : null}
            </ul>
          )}
        </Loading>
      ) : (
        <Loading state={sessions}>
          {(s) => (
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
          )}
        </Loading>
      )}
    </aside>
  );
}

type Item = Record<string, unknown> & { event_id: string; kind: string; text: string; run_id: string | null; type: string };

async function loadSession(id: string): Promise<Schemas["Session"] | null> {
  try {
    return await api("get", "/api/sessions/{id}", { params: { id } });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null; // a new chat: created by its first message
    throw err;
  }
}

function Conversation({ sessionId, onChanged }: { sessionId: string; onChanged: () => void }) {
  const [tick, setTick] = useState(0);
  const refresh = () => setTick((t) => t + 1);
  const session = useLoad(() => loadSession(sessionId), [sessionId, tick]);
  const exists = session.data !== null && session.data !== undefined;
  const transcript = useLoad(
    async () => (exists ? ((await api("get", "/api/sessions/{id}/transcript", { params: { id: sessionId } })).items as Item[]) : []),
    [sessionId, tick, exists],
  );
  const chat = useMemo(
    () =>
      new BeaverChat(sessionId, () => {
        refresh();
        onChanged();
      }),
    [sessionId],
  );
  const { messages, status, error } = useChatState(chat);
  const busy = status === "submitted" || status === "streaming";
  const activeRun = session.data?.active_run_id ?? null;

  // A reload during a run: pick the run up again from its start (GET /api/ui/chat/:id/stream).
  const resumed = useRef(false);
  useEffect(() => {
    if (!resumed.current && activeRun && chat.status === "ready") {
      resumed.current = true;
      void chat.resumeStream();
    }
  }, [activeRun, chat]);
  useEffect(() => () => void chat.stop(), [chat]);
  // A new chat's session exists once its first run streams: read it then, so the event stream opens
  // (a run that waits for approval says so only there and in the transcript).
  const streaming = status === "streaming";
  useEffect(() => {
    if (streaming && !exists && !session.loading) refresh();
  }, [streaming, exists]);
  useSessionEvents(exists ? sessionId : null, session.data?.last_seq ?? 0, (type) => {
    if (type === "tool_approval_requested" || type === "tool_approval_decided") return refresh();
    if (chat.status !== "ready") return;
    if (type === "runtime_start") {
      // A run started by another client (or a steer that came after the run it meant): follow it live;
      // what the chat showed before is in the transcript by now.
      chat.messages = [];
      refresh();
      void chat.resumeStream();
    } else refresh();
  });

  // Once a streamed run is in the transcript, the transcript shows it; until then, the live message does.
  const liveRuns = new Set(messages.filter((m) => m.role === "assistant").map((m) => m.id));
  // While a run streams with its prompt shown live, the transcript's copy of that prompt (read again
  // when an approval arrives) is hidden; steer messages stay.
  const liveUser = busy && messages.some((m) => m.role === "user");
  const items = (transcript.data ?? []).filter(
    (i) => !(i.run_id && liveRuns.has(i.run_id) && (i.kind !== "user" || (liveUser && !i.source))),
  );
  const live = messages.filter((m) => !(m.role === "user" && !busy));
  const decisions = approvalDecisions(transcript.data ?? []);
  // Approvals of a run still streaming: its transcript items are hidden behind the live message, so
  // they are shown after it.
  const liveApprovals = (transcript.data ?? []).filter(
    (i) => i.type === "tool_approval_requested" && i.run_id !== null && liveRuns.has(i.run_id),
  );
  useEffect(() => {
    if (status === "ready" && messages.length > 0 && transcript.data && !transcript.loading) {
      const shown = new Set((transcript.data ?? []).map((i) => i.run_id));
      if (messages.every((m) => m.role === "user" || shown.has(m.id))) chat.messages = [];
    }
  }, [status, transcript.data, transcript.loading]);

  return (
    <section class="panel conversation" aria-label="Conversation">
      <header class="row spread">
        <h2>{session.data?.title || (exists ? sessionId : "New chat")}</h2>
        {session.data ? (
          <span class="muted small">
            {session.data.status} · <UsageText usage={session.data.usage} />
          </span>
        ) : null}
      </header>
      <ErrorNote error={session.error} />
      <ol class="messages" aria-live="polite" aria-label="Messages">
        {items.map((item) => (
          <TranscriptItem
            key={item.event_id}
            item={item}
            sessionId={sessionId}
            canRewind={!busy && !activeRun}
            decisions={decisions}
            onDone={refresh}
          />
        ))}
        {live.map((m) => (
          <LiveMessage key={m.id} message={m} />
        ))}
        {liveApprovals.map((item) => (
          <ApprovalRequest
            key={item.event_id}
            item={item}
            sessionId={sessionId}
            decided={decisions.get(approvalIdOf(item))}
            onDone={refresh}
          />
        ))}
      </ol>
      {error ? <ErrorNote error={error} /> : null}
      <Composer sessionId={sessionId} chat={chat} busy={busy || activeRun !== null} onDone={refresh} />
      {exists ? <SessionSide sessionId={sessionId} tick={tick} busy={busy} onDone={refresh} /> : null}
    </section>
  );
}

/** The session's event stream through a single-use ticket; `onEvent` hears run starts and ends. */
function useSessionEvents(sessionId: string | null, fromSeq: number, onEvent: (type: string) => void): void {
  const handler = useRef(onEvent);
  handler.current = onEvent;
  const from = useRef(fromSeq);
  if (fromSeq > from.current) from.current = fromSeq;
  useEffect(() => {
    if (!sessionId) return;
    let source: EventSource | null = null;
    let timer: ReturnType<typeof setTimeout> | undefined;
    let stopped = false;
    const open = async () => {
      try {
        const { ticket } = await api("post", "/api/sessions/{id}/stream-ticket", { params: { id: sessionId } });
        if (stopped) return;
        const url = `/api/sessions/${encodeURIComponent(sessionId)}/stream?ticket=${encodeURIComponent(ticket)}&last_seq=${from.current}&client_id=console`;
        source = new EventSource(url);
        const seen = (e: MessageEvent) => {
          const seq = Number(e.lastEventId);
          if (Number.isInteger(seq) && seq > from.current) from.current = seq;
        };
        source.addEventListener("runtime_start", (e) => (seen(e), handler.current("runtime_start")));
        source.addEventListener("runtime_end", (e) => (seen(e), handler.current("runtime_end")));
        source.addEventListener("rewind", (e) => (seen(e), handler.current("rewind")));
        source.addEventListener("branch", (e) => (seen(e), handler.current("branch")));
        for (const type of ["tool_approval_requested", "tool_approval_decided"])
          source.addEventListener(type, (e) => (seen(e), handler.current(type)));
        source.onerror = () => {
          // A ticket opens one stream: reconnect with a new one.
          source?.close();
          if (!stopped) timer = setTimeout(open, 2000);
        };
      } catch {
        if (!stopped) timer = setTimeout(open, 5000);
      }
    };
    void open();
    return () => {
      stopped = true;
      clearTimeout(timer);
      source?.close();
    };
  }, [sessionId]);
}

function ToolCall({
  name,
  input,
  output,
  error,
  pending,
}: {
  name: string;
  input: unknown;
  output?: unknown;
  error?: string;
  pending?: boolean;
}) {
  return (
    <div class={`tool ${error ? "tool-error" : ""}`} data-testid="tool-call">
      <div>
        <span class="badge">tool</span> <strong>{name}</strong> {pending ? <span class="muted">running…</span> : null}
      </div>
      <details open>
        <summary>arguments</summary>
        <Json value={input} />
      </details>
      {output !== undefined ? (
        <details open>
          <summary>result</summary>
          <Json value={output} />
        </details>
      ) : null}
      {error ? <div class="error">{error}</div> : null}
    </div>
  );
}

interface Decision {
  decision: "approve" | "deny";
  decided_by: string;
}
const approvalIdOf = (item: Item) => String((item.details as { approval_id?: unknown } | undefined)?.approval_id ?? "");

/** The decisions the transcript holds, by approval id (`tool_approval_decided` notices). */
function approvalDecisions(items: Item[]): Map<string, Decision> {
  const out = new Map<string, Decision>();
  for (const i of items) if (i.type === "tool_approval_decided") out.set(approvalIdOf(i), i.details as unknown as Decision);
  return out;
}

/** A tool call waiting for a person (docs/approvals.md): its tool, arguments and reason; Approve / Deny, or the decision made. */
function ApprovalRequest({
  item,
  sessionId,
  decided,
  onDone,
}: {
  item: Item;
  sessionId: string;
  decided: Decision | undefined;
  onDone: () => void;
}) {
  const d = item.details as { approval_id: string; tool_name: string; args: unknown; reason: string; expires_at: number };
  const action = useAction();
  const [mine, setMine] = useState<Decision | null>(null);
  const decision = decided ?? mine;
  const decide = (choice: "approve" | "deny") =>
    action.run(async () => {
      const r = await api("post", "/api/sessions/{id}/approvals/{approval_id}", {
        params: { id: sessionId, approval_id: d.approval_id },
        body: { decision: choice, client_id: "console" },
      });
      setMine({ decision: r.decision, decided_by: "person" });
      onDone();
    });
  return (
    <li class="msg approval" data-testid="approval" aria-label={`Approval for ${d.tool_name}`}>
      <div class="meta">
        <span class="badge warn">approval</span> <strong>{d.tool_name}</strong> {d.reason ? <span class="muted">· {d.reason}</span> : null}
      </div>
      <details open>
        <summary>arguments</summary>
        <Json value={d.args} />
      </details>
      {decision ? (
        <p role="status" data-testid="approval-decision">
          {decision.decision === "approve" ? "Approved" : "Denied"}
          {decision.decided_by !== "person" ? ` (${decision.decided_by})` : ""}
        </p>
      ) : (
        <div class="row">
          <button type="button" disabled={action.busy} onClick={() => decide("approve")}>
            Approve
          </button>
          <button type="button" class="danger" disabled={action.busy} onClick={() => decide("deny")}>
            Deny
          </button>
          <span class="muted small">
            waits until <Time ts={d.expires_at} />
          </span>
        </div>
      )}
      <ErrorNote error={action.error} />
    </li>
  );
}

function TranscriptItem({
  item,
  sessionId,
  canRewind,
  decisions,
  onDone,
}: {
  item: Item;
  sessionId: string;
  canRewind: boolean;
  decisions: Map<string, Decision>;
  onDone: () => void;
}) {
  const action = useAction();
  const rewind = () =>
    action.run(async () => {
      await api("post", "/api/sessions/{id}/rewind", {
        params: { id: sessionId },
        body: { target_event_id: item.event_id, client_id: "console" },
      });
      onDone();
    });
  const rewindButton =
    item.kind !== "notice" ? (
      <button
        type="button"
        class="small link"
        disabled={!canRewind || action.busy}
        onClick={rewind}
        aria-label={`Rewind to this ${item.kind} message`}
      >
        Rewind here
      </button>
    ) : null;
  if (item.type === "tool_approval_requested")
    return <ApprovalRequest item={item} sessionId={sessionId} decided={decisions.get(approvalIdOf(item))} onDone={onDone} />;
  if (item.kind === "notice") {
    return (
      <li class="notice muted small">
        {String(item.notice)} {item.text}
      </li>
    );
  }
  if (item.kind === "user") {
    return (
      <li class="msg user" data-role="user">
        <div class="meta">
          you{item.source ? ` · ${String(item.source)}` : ""} {rewindButton}
        </div>
        <div class="text">{item.text}</div>
        <ErrorNote error={action.error} />
      </li>
    );
  }
  if (item.kind === "tool_result") {
    return (
      <li class="msg tool-result" data-role="tool">
        <div class="meta">
          result of <strong>{String(item.tool_name)}</strong> {item.is_error ? <span class="badge bad">error</span> : null} {rewindButton}
        </div>
        <Json value={item.text} />
        <ErrorNote error={action.error} />
      </li>
    );
  }
  const calls = (item.tool_calls as { id: string; name: string; args: unknown }[] | undefined) ?? [];
  const err = item.error as { code: string; message: string } | undefined;
  return (
    <li class="msg assistant" data-role="assistant">
      <div class="meta">
        {item.model ? <span data-testid="model">{String(item.model)}</span> : "assistant"}{" "}
        {item.provider ? <span class="muted">({String(item.provider)})</span> : null} <UsageText usage={item.usage as never} />{" "}
        {rewindButton}
      </div>
      {item.reasoning ? (
        <details class="thinking">
          <summary>thinking</summary>
          <div class="text">{String(item.reasoning)}</div>
        </details>
      ) : null}
      {item.text ? <div class="text">{item.text}</div> : null}
      {calls.map((c) => (
        <ToolCall key={c.id} name={c.name} input={c.args} />
      ))}
      {err ? (
        <div class="error">
          <strong>{err.code}</strong> {err.message}
        </div>
      ) : null}
      <ErrorNote error={action.error} />
    </li>
  );
}

function LiveMessage({ message }: { message: BeaverMessage }) {
  if (message.role === "user") {
    return (
      <li class="msg user" data-role="user">
        <div class="meta">you</div>
        <div class="text">{message.parts.map((p) => (p.type === "text" ? p.text : "")).join("")}</div>
      </li>
    );
  }
  const meta = message.metadata;
  return (
    <li class="msg assistant live" data-role="assistant" data-testid="live-answer">
      <div class="meta">
        {meta?.model ? <span data-testid="model">{meta.model}</span> : "assistant"}{" "}
        {meta?.provider ? <span class="muted">({meta.provider})</span> : null} <UsageText usage={meta?.usage} />{" "}
        {meta?.status ? <Status value={meta.status} /> : <span class="muted">streaming…</span>}
      </div>
      {message.parts.map((p, i) => {
        if (p.type === "text")
          return (
            <div key={i} class="text">
              {p.text}
            </div>
          );
        if (p.type === "reasoning")
          return (
            <details key={i} class="thinking" open={p.state === "streaming"}>
              <summary>thinking</summary>
              <div class="text">{p.text}</div>
            </details>
          );
        if (p.type === "dynamic-tool")
          return (
            <ToolCall
              key={i}
              name={p.toolName}
              input={p.input}
              output={p.state === "output-available" ? p.output : undefined}
              error={p.state === "output-error" ? p.errorText : undefined}
              pending={p.state === "input-streaming" || p.state === "input-available"}
            />
          );
        return null;
      })}
    </li>
  );
}

function Composer({ sessionId, chat, busy, onDone }: { sessionId: string; chat: BeaverChat; busy: boolean; onDone: () => void }) {
  const [text, setText] = useState("");
  const [steered, setSteered] = useState(false);
  const action = useAction();
  const send = (e: Event) => {
    e.preventDefault();
    const content = text.trim();
    if (!content) return;
    setText("");
    if (busy) {
      // Steer: join the running run (written into the log between its steps).
      setSteered(false);
      void action.run(async () => {
        await api("post", "/api/sessions/{id}/messages", {
          params: { id: sessionId },
          body: { content, source: "steer", client_id: "console" },
        });
        setSteered(true);
      });
    } else {
      void chat.sendMessage({ text: content });
    }
  };
  return (
    <form class="composer" onSubmit={send}>
      <label for="message">{busy ? "Steer the running run" : "Message"}</label>
      <textarea
        id="message"
        rows={3}
        value={text}
        onInput={(e) => setText(e.currentTarget.value)}
        onKeyDown={(e) => {
          if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) send(e);
        }}
      />
      <div class="row">
        <button type="submit">{busy ? "Steer" : "Send"}</button>
        {busy ? (
          <button
            type="button"
            class="danger"
            onClick={() =>
              action.run(async () => {
                await api("post", "/api/sessions/{id}/cancel", { params: { id: sessionId }, body: {} });
                onDone();
              })
            }
          >
            Cancel run
          </button>
        ) : null}
        <span class="muted small">Ctrl+Enter sends</span>
        {steered && busy ? <span role="status">Steer sent: the run reads it before its next step.</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </form>
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
      <details open>
        <summary>
          <h3>Branches</h3>
        </summary>
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
      </details>
      <details open>
        <summary>
          <h3>Runs</h3>
        </summary>
        <Loading state={runs}>
          {(r) => (
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
          )}
        </Loading>
      </details>
    </div>
  );
}
