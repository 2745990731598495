/**
 * How the conversation's messages look (docs/console.md, "Chat"): assistant text as sanitised Markdown
 * (markdown.ts), thinking collapsed, tool cards that keep their result, approval cards, and each
 * message's actions (copy, rewind, branch). A finished run (transcript turns, turns.ts) and a streaming
 * one (the AI SDK UI message) render through the same pieces, so the page does not jump when a run ends.
 */
import { useMemo, useState } from "preact/hooks";
import { api } from "../api/client";
import { ErrorNote, Json, Status, Time, UsageText, useAction } from "../ui";
import { onMarkdownClick, renderMarkdown } from "./markdown";
import type { BeaverMessage } from "./preact-chat";
import type { TurnItem } from "./turns";
import { Thumbs } from "./thumbs";

export type Item = TurnItem;

export function Markdown({ text, streaming = false }: { text: string; streaming?: boolean }) {
  const html = useMemo(() => renderMarkdown(text, streaming), [text, streaming]);
  // The HTML is DOMPurify's output (markdown.ts); the copy buttons are handled here by delegation.
  return <div class="md" onClick={onMarkdownClick} dangerouslySetInnerHTML={{ __html: html }} />;
}

function CopyButton({ text, label }: { text: string; label: string }) {
  const [done, setDone] = useState(false);
  return (
    <button
      type="button"
      class="small link"
      aria-label={label}
      onClick={() =>
        void navigator.clipboard?.writeText(text).then(() => {
          setDone(true);
          setTimeout(() => setDone(false), 1500);
        })
      }
    >
      {done ? "Copied" : "Copy"}
    </button>
  );
}

export function ToolCall({
  name,
  input,
  output,
  error,
  pending,
}: {
  name: string;
  input: unknown;
  output?: unknown;
  error?: string | undefined;
  pending?: boolean;
}) {
  return (
    <div class={`tool ${error ? "tool-error" : ""}`} data-testid="tool-call">
      <div>
        <span class="badge">tool</span> <strong>{name}</strong> {pending ? <span class="muted">running…</span> : null}
        {error ? <span class="badge bad">error</span> : null}
      </div>
      <details>
        <summary>arguments</summary>
        <Json value={input} />
      </details>
      <details open={output !== undefined || error !== undefined}>
        <summary>result</summary>
        {output !== undefined ? <Json value={output} /> : null}
        {error ? <div class="error">{error}</div> : null}
        {output === undefined && !error ? <p class="muted small">waiting for the result…</p> : null}
      </details>
    </div>
  );
}

export function Thinking({ text, streaming }: { text: string; streaming?: boolean }) {
  return (
    <details class="thinking">
      <summary>{streaming ? "thinking…" : "thinking"}</summary>
      <div class="text">{text}</div>
    </details>
  );
}

interface Decision {
  decision: "approve" | "deny";
  decided_by: string;
}
export type Decisions = Map<string, Decision>;
export const approvalIdOf = (item: Item) => String((item.details as { approval_id?: unknown } | undefined)?.approval_id ?? "");

/** The decisions the transcript holds, by approval id (`tool_approval_decided` notices). */
export function approvalDecisions(items: Item[]): Decisions {
  const out: Decisions = new Map();
  for (const i of items) if (i.type === "tool_approval_decided") out.set(approvalIdOf(i), i.details as unknown as Decision);
  return out;
}

/** A tool call waiting for a person (docs/approvals.md): its tool, arguments and reason; Approve / Deny, or the decision made. */
export function ApprovalRequest({
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

/** Rewind the session to `eventId` (the next message continues from there). */
function useRewind(sessionId: string, onDone: () => void) {
  const action = useAction();
  const rewind = (eventId: string, then?: () => void) =>
    action.run(async () => {
      await api("post", "/api/sessions/{id}/rewind", {
        params: { id: sessionId },
        body: { target_event_id: eventId, client_id: "console" },
      });
      then?.();
      onDone();
    });
  return { action, rewind };
}

export interface NavProps {
  sessionId: string;
  canRewind: boolean;
  onDone: () => void;
}

/**
 * A user message: copy; rewind here (continue after it); branch (continue from the message before it,
 * with this one's text in the composer to edit and send).
 */
export function UserMessage({
  item,
  before,
  onBranch,
  nav,
}: {
  item: Item;
  before: string | null;
  onBranch: (text: string) => void;
  nav: NavProps;
}) {
  const { action, rewind } = useRewind(nav.sessionId, nav.onDone);
  return (
    <li class={`msg user ${item.source === "steer" ? "steer" : ""}`} data-role="user">
      <div class="meta">you{item.source ? ` · ${String(item.source)}` : ""}</div>
      <div class="text">{item.text}</div>
      <div class="actions">
        <CopyButton text={item.text} label="Copy this message" />
        <button
          type="button"
          class="small link"
          disabled={!nav.canRewind || action.busy}
          onClick={() => rewind(item.event_id)}
          aria-label="Rewind here (to this user message)"
        >
          Rewind here
        </button>
        {before ? (
          <button
            type="button"
            class="small link"
            disabled={!nav.canRewind || action.busy}
            onClick={() => rewind(before, () => onBranch(item.text))}
            aria-label="Edit as a branch (send this message again from before it)"
          >
            Edit as a branch
          </button>
        ) : null}
      </div>
      <ErrorNote error={action.error} />
    </li>
  );
}

interface ToolCallArgs {
  id: string;
  name: string;
  args: unknown;
}

/** A finished answer: one run's steps (text, thinking, tool calls each with its result), as the streamed answer showed it. */
export function Answer({ steps, results, nav }: { steps: Item[]; results: Map<string, Item>; nav: NavProps }) {
  const { action, rewind } = useRewind(nav.sessionId, nav.onDone);
  const last = steps.at(-1)!;
  const withMeta = [...steps].reverse().find((s) => s.model) ?? last;
  const text = steps
    .map((s) => s.text)
    .filter(Boolean)
    .join("\n\n");
  return (
    <li class="msg assistant" data-role="assistant">
      <div class="meta">
        {withMeta.model ? <span data-testid="model">{String(withMeta.model)}</span> : "assistant"}{" "}
        {withMeta.provider ? <span class="muted">({String(withMeta.provider)})</span> : null} <UsageText usage={withMeta.usage as never} />
      </div>
      {steps.map((step) => {
        const calls = (step.tool_calls as ToolCallArgs[] | undefined) ?? [];
        const err = step.error as { code: string; message: string } | undefined;
        return (
          <div key={step.event_id} class="step">
            {step.reasoning ? <Thinking text={String(step.reasoning)} /> : null}
            {step.text ? <Markdown text={step.text} /> : null}
            {calls.map((c) => {
              const result = results.get(c.id);
              return (
                <ToolCall
                  key={c.id}
                  name={c.name}
                  input={c.args}
                  output={result && !result.is_error ? result.text : undefined}
                  error={result?.is_error ? result.text : undefined}
                />
              );
            })}
            {err ? (
              <div class="error">
                <strong>{err.code}</strong> {err.message}
              </div>
            ) : null}
          </div>
        );
      })}
      <div class="actions">
        {text ? <CopyButton text={text} label="Copy this answer" /> : null}
        <button
          type="button"
          class="small link"
          disabled={!nav.canRewind || action.busy}
          onClick={() => rewind(last.event_id)}
          aria-label="Rewind here (to this answer)"
        >
          Rewind here
        </button>
        {last.run_id ? <Thumbs sessionId={nav.sessionId} runId={last.run_id} /> : null}
      </div>
      <ErrorNote error={action.error} />
    </li>
  );
}

/** A transcript item that is neither part of an answer nor a user message: a notice, or a lone tool result. */
export function OtherItem({ item }: { item: Item }) {
  if (item.kind === "tool_result") {
    return (
      <li class="msg tool-result" data-role="tool">
        <div class="meta">
          result of <strong>{String(item.tool_name)}</strong> {item.is_error ? <span class="badge bad">error</span> : null}
        </div>
        <Json value={item.text} />
      </li>
    );
  }
  return (
    <li class="notice muted small">
      {String(item.notice ?? item.kind)} {item.text}
    </li>
  );
}

/** The answer of a run that is streaming now (AI SDK UI message parts). */
export function LiveMessage({ message }: { message: BeaverMessage }) {
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
    <li class="msg assistant live" data-role="assistant" data-testid="live-answer" aria-busy={meta?.status ? "false" : "true"}>
      <div class="meta">
        {meta?.model ? <span data-testid="model">{meta.model}</span> : "assistant"}{" "}
        {meta?.provider ? <span class="muted">({meta.provider})</span> : null} <UsageText usage={meta?.usage} />{" "}
        {meta?.status ? <Status value={meta.status} /> : <span class="muted">streaming…</span>}
      </div>
      {message.parts.map((p, i) => {
        if (p.type === "text") return <Markdown key={i} text={p.text} streaming={p.state === "streaming"} />;
        if (p.type === "reasoning") return <Thinking key={i} text={p.text} streaming={p.state === "streaming"} />;
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
