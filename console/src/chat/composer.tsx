/**
 * The message box, pinned under the conversation (docs/console.md, "Chat"): Enter sends, Shift+Enter
 * adds a line (as in every chat UI; not while an input method is composing). While a run streams the
 * text steers it (joins the run between its steps) and a Stop button cancels it.
 */
import { useEffect, useRef } from "preact/hooks";
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { ErrorNote, useAction } from "../ui";
import type { BeaverChat } from "./preact-chat";

export function Composer({
  sessionId,
  chat,
  busy,
  text,
  setText,
  onDone,
}: {
  sessionId: string;
  chat: BeaverChat;
  busy: boolean;
  text: string;
  setText: (text: string) => void;
  onDone: () => void;
}) {
  const [steered, setSteered] = useState(false);
  const action = useAction();
  const box = useRef<HTMLTextAreaElement>(null);
  // Grow with the text up to a few lines (then it scrolls), so the pinned composer stays small.
  useEffect(() => {
    const el = box.current;
    if (!el) return;
    el.style.height = "auto";
    el.style.height = `${Math.min(el.scrollHeight + 2, 200)}px`;
  }, [text]);
  useEffect(() => {
    if (text) box.current?.focus();
  }, [text === ""]);
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
      <label for="message" class="visually-hidden">
        {busy ? "Steer the running run" : "Message"}
      </label>
      <div class="composer-box">
        <textarea
          id="message"
          ref={box}
          rows={1}
          placeholder={busy ? "Steer the running run…" : "Message Beaver…"}
          value={text}
          onInput={(e) => setText(e.currentTarget.value)}
          onKeyDown={(e) => {
            if (e.key === "Enter" && !e.shiftKey && !e.isComposing) send(e);
          }}
        />
        {busy ? (
          <>
            <button type="submit" disabled={!text.trim()}>
              Steer
            </button>
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
              Stop
            </button>
          </>
        ) : (
          <button type="submit" disabled={!text.trim()}>
            Send
          </button>
        )}
      </div>
      <div class="row small muted composer-hint">
        <span>Enter sends · Shift+Enter adds a line</span>
        {steered && busy ? <span role="status">Steer sent: the run reads it before its next step.</span> : null}
      </div>
      <ErrorNote error={action.error} />
    </form>
  );
}
