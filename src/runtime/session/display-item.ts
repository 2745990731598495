/**
 * A transcript entry as clients receive it: one per visible event (plus navigation notices), tagged
 * by `kind` so a client can pick its rendering without knowing every event type. Field names are
 * snake_case because this is HTTP/stream wire format.
 */
import type { Message, PersistentType, ToolCall, Usage } from "./events.ts";

interface DisplayBase {
  /** The event this item renders (for a notice: the rewind/branch/compact/… event itself). */
  event_id: string;
  seq: number;
  ts: number;
  client_id: string;
  run_id: string | null;
  /** The persistent event type the item comes from. */
  type: PersistentType;
  /** Plain text to show (may be empty, e.g. an assistant turn that only calls tools). */
  text: string;
}

export type NoticeKind = "rewind" | "branch" | "compact" | "channel" | "session_info" | "approval";

export type UserItem = DisplayBase & {
  kind: "user";
  /** Shown inline and small (`steer`) or with a "follow-up" mark (`followUp`). */
  source?: "steer" | "followUp";
};

export type AssistantItem = DisplayBase & {
  kind: "assistant";
  tool_calls: ToolCall[];
  reasoning?: string;
  provider?: string;
  model?: string;
  usage?: Usage;
  finish_reason?: string;
  error?: { code: string; message: string };
};

export type ToolResultItem = DisplayBase & {
  kind: "tool_result";
  tool_call_id: string;
  tool_name: string;
  is_error: boolean;
};

export type NoticeItem = DisplayBase & {
  kind: "notice";
  notice: NoticeKind;
  /** rewind/branch: the event navigated to. */
  target_event_id?: string;
  /** Notice-specific facts (compaction token counts, channel metadata, changed settings). */
  details?: Record<string, unknown>;
};

export type CustomItem = DisplayBase & {
  kind: "custom";
  custom_kind: string;
  data?: unknown;
  /** custom_message: the message the model sees. */
  message?: Message;
};

export type DisplayItem = UserItem | AssistantItem | ToolResultItem | NoticeItem | CustomItem;
