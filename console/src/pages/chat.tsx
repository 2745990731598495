/**
 * Chat and sessions (docs/console.md, "Chat"): the session list (a drawer on a phone) and a conversation
 * that streams live through the AI SDK UI route (`/api/ui/chat`, docs/ui-stream.md) — Markdown text,
 * thinking, tool calls with their results, the model that answered — with the composer pinned under
 * it (send, steer, stop), message actions (copy, rewind, branch) and the session's own actions
 * (rename, archive, delete). Runs started elsewhere, approvals and new titles are noticed through the
 * session's event stream, opened with a single-use stream ticket (EventSource cannot send a bearer
 * token). A tool call waiting for approval (docs/approvals.md) is shown with Approve / Deny.
 */
import { useEffect, useLayoutEffect, useMemo, useRef, useState } from "preact/hooks";
import { api, ApiError } from "../api/client";
import type { Schemas } from "../api/openapi";
import { navigate } from "../router";
import { BeaverChat, useChatState } from "../chat/preact-chat";
import { ErrorNote, useLoad } from "../ui";
import { groupTurns } from "../chat/turns";
import { RatingsContext, useSessionRatings } from "../chat/thumbs";
import { Answer, ApprovalRequest, LiveMessage, OtherItem, UserMessage, approvalDecisions, approvalIdOf, type Item } from "../chat/messages";
import { Composer } from "../chat/composer";
import { SessionList } from "../chat/session-list";
import { SessionDetails, SessionHeader } from "../chat/session-header";
import { FilesPanel } from "../files/files-panel";
import { DelegationTree } from "../chat/delegation-tree";

function newSessionId(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(12));
  return "ses_" + Array.from(bytes, (b) => "abcdefghijklmnopqrstuvwxyz0123456789"[b % 36]).join("");
}

/** Ids this tab made with "New chat" and has not sent to yet: they do not exist on the server, so they are not asked for. */
const fresh = new Set<string>();

function startNewChat(): void {
  const id = newSessionId();
  fresh.add(id);
  navigate(`/chat/${id}`);
}

export function ChatPage({ sessionId }: { sessionId: string | undefined }) {
  const [listTick, setListTick] = useState(0);
  const [drawer, setDrawer] = useState(false);
  useEffect(() => setDrawer(false), [sessionId]);
  return (
    <div class={`chat-layout ${drawer ? "drawer-open" : ""}`}>
      <aside class="sidebar drawer" aria-label="Sessions" id="sessions-drawer">
        <button type="button" class="drawer-close small secondary" onClick={() => setDrawer(false)}>
          Close
        </button>
        <SessionList current={sessionId} tick={listTick} onNew={startNewChat} />
      </aside>
      {drawer ? <div class="drawer-backdrop" onClick={() => setDrawer(false)} aria-hidden="true" /> : null}
      {sessionId ? (
        <Conversation
          key={sessionId}
          sessionId={sessionId}
          onChanged={() => setListTick((t) => t + 1)}
          onOpenDrawer={() => setDrawer(true)}
        />
      ) : (
        <section class="conversation" aria-label="Conversation">
          <header class="conv-head">
            <div class="row">
              <button type="button" class="drawer-toggle small" onClick={() => setDrawer(true)}>
                <span aria-hidden="true">☰</span> Sessions
              </button>
              <h2>Chat</h2>
            </div>
          </header>
          <div class="scroller">
            <div class="empty">
              <p>Pick a session, or start a new chat.</p>
              <button type="button" onClick={startNewChat}>
                New chat
              </button>
            </div>
          </div>
        </section>
      )}
    </div>
  );
}

async function loadSession(id: string): Promise<Schemas["Session"] | null> {
  if (fresh.has(id)) return null;
  try {
    return await api("get", "/api/sessions/{id}", { params: { id } });
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return null; // an id typed by hand: a new chat created by its first message
    throw err;
  }
}

/** Keeps the conversation scrolled to its end while the reader is there (not when they scrolled up to read). */
function useStickToBottom(deps: unknown[]) {
  const ref = useRef<HTMLDivElement>(null);
  const atEnd = useRef(true);
  useEffect(() => {
    const el = ref.current;
    if (!el) return;
    const onScroll = () => (atEnd.current = el.scrollHeight - el.scrollTop - el.clientHeight < 80);
    el.addEventListener("scroll", onScroll, { passive: true });
    return () => el.removeEventListener("scroll", onScroll);
  }, []);
  useLayoutEffect(() => {
    const el = ref.current;
    if (el && atEnd.current) el.scrollTop = el.scrollHeight;
  }, deps);
  return ref;
}

function Conversation({ sessionId, onChanged, onOpenDrawer }: { sessionId: string; onChanged: () => void; onOpenDrawer: () => void }) {
  const [tick, setTick] = useState(0);
  const [draft, setDraft] = useState("");
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
  const ratings = useSessionRatings(sessionId, tick, exists);
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
    if (streaming && !exists && !session.loading) {
      fresh.delete(sessionId);
      refresh();
      onChanged();
    }
  }, [streaming, exists]);
  useSessionEvents(exists ? sessionId : null, session.data?.last_seq ?? 0, (type) => {
    if (type === "tool_approval_requested" || type === "tool_approval_decided") return refresh();
    if (type === "session_info") {
      // A new title (the auxiliary model's, docs/sessions.md "Titles") or a rename elsewhere.
      refresh();
      return onChanged();
    }
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
  const approval = (item: Item) => (
    <ApprovalRequest key={item.event_id} item={item} sessionId={sessionId} decided={decisions.get(approvalIdOf(item))} onDone={refresh} />
  );
  useEffect(() => {
    if (status === "ready" && messages.length > 0 && transcript.data && !transcript.loading) {
      const shown = new Set((transcript.data ?? []).map((i) => i.run_id));
      if (messages.every((m) => m.role === "user" || shown.has(m.id))) chat.messages = [];
    }
  }, [status, transcript.data, transcript.loading]);

  const scroller = useStickToBottom([items.length, messages, transcript.data]);
  const nav = { sessionId, canRewind: !busy && !activeRun, onDone: refresh };
  const turns = groupTurns(items);
  return (
    <section class="conversation" aria-label="Conversation">
      <SessionHeader
        session={session.data}
        fallbackTitle={exists ? sessionId : "New chat"}
        onChanged={() => {
          refresh();
          onChanged();
        }}
        onDeleted={() => {
          onChanged();
          navigate("/chat");
        }}
        onOpenDrawer={onOpenDrawer}
      />
      {exists ? <DelegationTree session={session.data} tick={tick} /> : null}
      {exists ? <SessionDetails sessionId={sessionId} tick={tick} busy={busy} onDone={refresh} /> : null}
      {exists ? <FilesPanel sessionId={sessionId} tick={tick} /> : null}
      <ErrorNote error={session.error} />
      <div class="scroller" ref={scroller} tabIndex={0} aria-label="Conversation messages">
        {exists || live.length > 0 ? null : <p class="muted empty">Write a message below to start this chat.</p>}
        <RatingsContext.Provider value={ratings}>
          <ol class="messages" aria-live="polite" aria-label="Messages">
            {turns.map((turn, index) => {
              if (turn.kind === "answer") return <Answer key={turn.first.event_id} steps={turn.steps} results={turn.results} nav={nav} />;
              const item = turn.item;
              if (item.type === "tool_approval_requested") return approval(item);
              if (item.kind === "user") {
                const prev = turns[index - 1];
                const before = prev ? (prev.kind === "answer" ? prev.steps.at(-1)!.event_id : prev.item.event_id) : null;
                return <UserMessage key={item.event_id} item={item} before={before} onBranch={setDraft} nav={nav} />;
              }
              return <OtherItem key={item.event_id} item={item} />;
            })}
            {live.map((m) => (
              <LiveMessage key={m.id} message={m} />
            ))}
            {liveApprovals.map(approval)}
          </ol>
        </RatingsContext.Provider>
        {error ? <ErrorNote error={error} /> : null}
      </div>
      <Composer sessionId={sessionId} chat={chat} busy={busy || activeRun !== null} text={draft} setText={setDraft} onDone={refresh} />
    </section>
  );
}

/** The session's event stream through a single-use ticket; `onEvent` hears run starts and ends, approvals and title changes. */
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
        for (const type of [
          "runtime_start",
          "runtime_end",
          "rewind",
          "branch",
          "session_info",
          "tool_approval_requested",
          "tool_approval_decided",
        ])
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
