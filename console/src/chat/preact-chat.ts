/**
 * The AI SDK's framework-agnostic chat (`AbstractChat` + `DefaultChatTransport` against
 * `/api/ui/chat`, docs/ui-stream.md) with a small Preact state adapter: the chat keeps its messages
 * and status here and every change re-renders the component that uses it.
 */
import { AbstractChat, DefaultChatTransport, type ChatState, type ChatStatus, type UIMessage } from "ai";
import { useEffect, useState } from "preact/hooks";
import { authHeaders } from "../api/client";

export interface BeaverMetadata {
  session_id: string;
  run_id: string;
  provider?: string;
  model?: string;
  usage?: { input_tokens: number; output_tokens: number; total_tokens: number };
  status?: "completed" | "failed" | "cancelled";
}
export type BeaverMessage = UIMessage<BeaverMetadata>;

class ObservableState implements ChatState<BeaverMessage> {
  #messages: BeaverMessage[] = [];
  status: ChatStatus = "ready";
  error: Error | undefined = undefined;
  readonly listeners = new Set<() => void>();

  get messages(): BeaverMessage[] {
    return this.#messages;
  }
  set messages(messages: BeaverMessage[]) {
    this.#messages = [...messages];
    this.notify();
  }
  pushMessage = (message: BeaverMessage) => {
    this.#messages = [...this.#messages, message];
    this.notify();
  };
  popMessage = () => {
    this.#messages = this.#messages.slice(0, -1);
    this.notify();
  };
  replaceMessage = (index: number, message: BeaverMessage) => {
    this.#messages = [...this.#messages.slice(0, index), message, ...this.#messages.slice(index + 1)];
    this.notify();
  };
  snapshot = <T>(thing: T): T => structuredClone(thing);
  notify(): void {
    for (const l of this.listeners) l();
  }
}

export class BeaverChat extends AbstractChat<BeaverMessage> {
  readonly observable: ObservableState;

  constructor(id: string, onFinish: () => void) {
    const state = new ObservableState();
    super({
      id,
      state,
      transport: new DefaultChatTransport<BeaverMessage>({ api: "/api/ui/chat", headers: () => authHeaders() }),
      onFinish,
    });
    this.observable = state;
  }

  protected override setStatus(next: { status: ChatStatus; error?: Error }): void {
    super.setStatus(next);
    this.observable.notify();
  }
}

/** Re-renders on every change of the chat's messages or status. */
export function useChatState(chat: BeaverChat): { messages: BeaverMessage[]; status: ChatStatus; error: Error | undefined } {
  const [, setTick] = useState(0);
  useEffect(() => {
    const listener = () => setTick((t) => t + 1);
    chat.observable.listeners.add(listener);
    return () => {
      chat.observable.listeners.delete(listener);
    };
  }, [chat]);
  return { messages: chat.messages, status: chat.status, error: chat.error };
}
