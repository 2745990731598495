/**
 * One handler per persistent event type (docs/sessions.md, "One handler per event type"): how the event
 * reaches the model (`convertToLlm`), how it appears in a transcript (`convertToDisplay`), what of it
 * is searchable and where the active leaf goes after it. The walks in tree, build-context and display
 * never switch on event types; a new type gets its behaviour here, and the registry's mapped type makes
 * a type without a handler a compile error.
 */
import type {
  AssistantMessage,
  HiddenEvent,
  Message,
  MessageEvent,
  PersistentEvent,
  PersistentType,
  UserMessage,
  VisibleEvent,
} from "./events.ts";
import type { DisplayItem } from "./display-item.ts";
import { excerpt, messageText } from "./message-text.ts";
import { wrapSystemReminder } from "./system-reminder.ts";

export type EventOf<T extends PersistentType> = Extract<PersistentEvent, { type: T }>;

/**
 * What an event contributes to the model's context.
 * - `include`: the message, as is.
 * - `merge_prev`: `content` is appended to the preceding tool_result (the tool loop is still open);
 *   when the context has no tool_result to take it, `standalone` (or a user message carrying
 *   `content`) is included instead — see `assembleMessages` in build-context.ts.
 * - `skip`: nothing.
 * - `barrier`: `summary` replaces everything up to and including the event `through` (a compaction,
 *   docs/sessions.md "Compaction"): the walk goes on past the barrier through the events kept after
 *   `through` and stops there, and the summary opens the context.
 */
export type LlmAction =
  | { action: "include"; message: Message }
  | { action: "merge_prev"; content: string; standalone?: Message }
  | { action: "skip" }
  | { action: "barrier"; summary: Message; through: string };

/** What a handler may look up while converting: other visible events of the same session. */
export interface ConvertContext {
  lookup(id: string): VisibleEvent | undefined;
}
export type LlmConvertContext = ConvertContext;
export type DisplayContext = ConvertContext;

export interface EventTypeHandler<E extends PersistentEvent> {
  /**
   * The active leaf after this event: its own id (it becomes the leaf), another event's id (it
   * navigates: rewind, branch) or null (the leaf is unchanged: hidden run facts).
   */
  leafAfter(event: E): string | null;
  convertToLlm(event: E, ctx: LlmConvertContext): LlmAction;
  convertToDisplay(event: E, ctx: DisplayContext): DisplayItem | null;
  /** Visible text for full-text search; null when there is none. */
  searchText(event: E): string | null;
}

export type HandlerRegistry = { [T in PersistentType]: EventTypeHandler<EventOf<T>> };

const SKIP: LlmAction = { action: "skip" };

function base(event: PersistentEvent, text: string) {
  return {
    event_id: event.id,
    seq: event.seq,
    ts: event.ts,
    client_id: event.client_id,
    run_id: event.run_id,
    type: event.type,
    text,
  };
}

function nonEmpty(text: string | undefined): string | null {
  return text !== undefined && text.trim().length > 0 ? text : null;
}

/** Short description of another event for navigation notices. */
function describeTarget(id: string, ctx: DisplayContext): string {
  const target = ctx.lookup(id);
  if (target === undefined) return id;
  const text = previewText(target);
  return text === null ? target.type : `“${excerpt(text)}”`;
}

const STEER_PREFIX: Record<NonNullable<NonNullable<UserMessage["meta"]>["source"]>, string> = {
  steer: "The user sent this message while you were working:",
  followUp: "The user queued this follow-up task:",
};

/** An assistant turn with nothing in it (the error that ends a failed run) — providers reject those. */
function isEmptyAssistant(message: AssistantMessage): boolean {
  return message.text.trim().length === 0 && message.tool_calls.length === 0;
}

function messageToLlm(message: Message): LlmAction {
  if (message.role === "user" && message.meta?.source !== undefined) {
    const content = wrapSystemReminder(`${STEER_PREFIX[message.meta.source]}\n${message.content}`);
    return { action: "merge_prev", content, standalone: message };
  }
  if (message.role === "assistant" && isEmptyAssistant(message)) return SKIP;
  return { action: "include", message };
}

function messageToDisplay(event: PersistentEvent, message: Message): DisplayItem {
  switch (message.role) {
    case "user":
      return {
        ...base(event, message.content),
        kind: "user",
        ...(message.meta?.source !== undefined ? { source: message.meta.source } : {}),
      };
    case "assistant": {
      const { text, tool_calls, reasoning, provider, model, usage, finish_reason, error } = message;
      return {
        ...base(event, text),
        kind: "assistant",
        tool_calls,
        ...(reasoning !== undefined ? { reasoning } : {}),
        ...(provider !== undefined ? { provider } : {}),
        ...(model !== undefined ? { model } : {}),
        ...(usage !== undefined ? { usage } : {}),
        ...(finish_reason !== undefined ? { finish_reason } : {}),
        ...(error !== undefined ? { error } : {}),
      };
    }
    case "tool_result":
      return {
        ...base(event, message.content),
        kind: "tool_result",
        tool_call_id: message.tool_call_id,
        tool_name: message.tool_name,
        is_error: message.is_error,
      };
  }
}

/**
 * What of a message is searchable (docs/sessions.md, "Search"): what people and the agent said — user
 * text, assistant text and its error. Never tool arguments (they may carry secrets) and never tool
 * output (command output and file dumps would swamp ranking and may echo secrets the tool read).
 */
function messageSearchText(message: Message): string | null {
  if (message.role === "tool_result") return null;
  if (message.role === "assistant") {
    return nonEmpty([message.text, message.error?.message].filter((t) => nonEmpty(t) !== null).join("\n"));
  }
  return nonEmpty(messageText(message));
}

const messageHandler: EventTypeHandler<MessageEvent> = {
  leafAfter: (event) => event.id,
  convertToLlm: (event) => messageToLlm(event.message),
  convertToDisplay: (event) => messageToDisplay(event, event.message),
  searchText: (event) => messageSearchText(event.message),
};

/** Run facts: audit and replay only (architecture: never transcript, never searched, never sent). */
const hiddenHandler: EventTypeHandler<HiddenEvent> = {
  leafAfter: () => null,
  convertToLlm: () => SKIP,
  convertToDisplay: () => null,
  searchText: () => null,
};

function formatChanges(changes: Record<string, unknown>): string {
  const parts = Object.entries(changes).map(([key, value]) => `${key}: ${typeof value === "string" ? value : JSON.stringify(value)}`);
  return parts.length === 0 ? "Session settings changed" : `Session settings changed (${parts.join(", ")})`;
}

/** The message that stands in for everything a compaction summarised. */
export function compactionSummaryMessage(summary: string): UserMessage {
  return {
    role: "user",
    content: wrapSystemReminder(`The earlier part of this conversation was compacted. Summary:\n${summary}`),
  };
}

export const HANDLERS: HandlerRegistry = {
  message: messageHandler,
  rewind: {
    leafAfter: (event) => event.target_event_id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event, ctx) => ({
      ...base(event, `Rewound to ${describeTarget(event.target_event_id, ctx)}`),
      kind: "notice",
      notice: "rewind",
      target_event_id: event.target_event_id,
    }),
    searchText: () => null,
  },
  branch: {
    leafAfter: (event) => event.leaf_event_id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event, ctx) => ({
      ...base(event, `Switched to the branch ending at ${describeTarget(event.leaf_event_id, ctx)}`),
      kind: "notice",
      notice: "branch",
      target_event_id: event.leaf_event_id,
    }),
    searchText: () => null,
  },
  compact: {
    leafAfter: (event) => event.id,
    convertToLlm: (event) => ({
      action: "barrier",
      summary: compactionSummaryMessage(event.summary),
      through: event.compacted_through,
    }),
    convertToDisplay: (event) => ({
      ...base(event, event.summary),
      kind: "notice",
      notice: "compact",
      details: {
        compacted_through: event.compacted_through,
        tokens_before: event.tokens_before,
        tokens_after: event.tokens_after,
      },
    }),
    searchText: (event) => nonEmpty(event.summary),
  },
  channel_inject: {
    leafAfter: (event) => event.id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event) => ({
      ...base(event, `From ${event.channel}`),
      kind: "notice",
      notice: "channel",
      details: {
        channel: event.channel,
        external_id: event.external_id,
        ...(event.metadata !== undefined ? { metadata: event.metadata } : {}),
      },
    }),
    searchText: () => null,
  },
  session_info: {
    leafAfter: (event) => event.id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event) => ({
      ...base(event, formatChanges(event.changes)),
      kind: "notice",
      notice: "session_info",
      details: { changes: event.changes },
    }),
    searchText: () => null,
  },
  custom: {
    leafAfter: (event) => event.id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event) => ({ ...base(event, ""), kind: "custom", custom_kind: event.kind, data: event.data }),
    searchText: () => null,
  },
  custom_message: {
    leafAfter: (event) => event.id,
    convertToLlm: (event) => ({ action: "include", message: event.message }),
    convertToDisplay: (event) => ({
      ...base(event, messageText(event.message)),
      kind: "custom",
      custom_kind: event.kind,
      message: event.message,
      ...(event.data !== undefined ? { data: event.data } : {}),
    }),
    searchText: (event) => messageSearchText(event.message),
  },
  // Approvals (docs/approvals.md): on the path between a call and its result, never sent to the model
  // (the model learns the outcome from the tool result), shown as notices.
  tool_approval_requested: {
    leafAfter: (event) => event.id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event) => ({
      ...base(event, `Approval requested for ${event.tool_name}`),
      kind: "notice",
      notice: "approval",
      details: {
        approval_id: event.approval_id,
        tool_call_id: event.tool_call_id,
        tool_name: event.tool_name,
        args: event.args,
        reason: event.reason,
        expires_at: event.expires_at,
      },
    }),
    searchText: () => null,
  },
  tool_approval_decided: {
    leafAfter: (event) => event.id,
    convertToLlm: () => SKIP,
    convertToDisplay: (event) => ({
      ...base(event, `${event.tool_name} ${event.decision === "approve" ? "approved" : "denied"} (${event.decided_by})`),
      kind: "notice",
      notice: "approval",
      details: { approval_id: event.approval_id, tool_call_id: event.tool_call_id, decision: event.decision, decided_by: event.decided_by },
    }),
    searchText: () => null,
  },
  run_started: hiddenHandler,
  system_prompt_snapshotted: hiddenHandler,
  skill_activation_snapshotted: hiddenHandler,
  run_completed: hiddenHandler,
  run_failed: hiddenHandler,
};

/** A stored event whose type this build has no handler for (a log written by a newer version). */
export class UnknownEventTypeError extends Error {
  constructor(readonly eventType: string) {
    super(`no handler for session event type "${eventType}"`);
    this.name = "UnknownEventTypeError";
  }
}

export function handlerFor<E extends PersistentEvent>(event: E, registry: HandlerRegistry = HANDLERS): EventTypeHandler<E> {
  const handler: unknown = registry[event.type];
  if (handler === undefined) throw new UnknownEventTypeError(event.type);
  // The registry is keyed by `type`, so the entry for `event.type` handles exactly E; TypeScript
  // cannot correlate a union key with its mapped value, hence the cast.
  return handler as EventTypeHandler<E>;
}

export function convertToLlm(event: PersistentEvent, ctx: LlmConvertContext): LlmAction {
  return handlerFor(event).convertToLlm(event, ctx);
}

export function convertToDisplay(event: PersistentEvent, ctx: DisplayContext): DisplayItem | null {
  return handlerFor(event).convertToDisplay(event, ctx);
}

/** What of an event goes into the D1 full-text index: its visible text; null for hidden run facts and events without text. */
export function searchableText(event: PersistentEvent): string | null {
  return handlerFor(event).searchText(event);
}

/** The active leaf after `event` per its handler: null means unchanged. */
export function leafAfter(event: PersistentEvent): string | null {
  return handlerFor(event).leafAfter(event);
}

/** An event that moves the leaf elsewhere (rewind, branch): a marker, never a tree leaf itself. */
export function navigationTarget(event: PersistentEvent): string | null {
  const next = leafAfter(event);
  return next !== null && next !== event.id ? next : null;
}

/** Text for one-line previews (tree leaves, navigation notices): the searchable text, or a tool result's output. */
export function previewText(event: PersistentEvent): string | null {
  if (event.type === "message" && event.message.role === "tool_result") return nonEmpty(event.message.content);
  return searchableText(event);
}
