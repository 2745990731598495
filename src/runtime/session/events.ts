/**
 * The session log's event types (docs/sessions.md, "Three kinds of event, one `seq`").
 *
 * Persistent events change state: they are stored, replicated to D1, form a tree through `parent_id`
 * and share the session's `seq` counter with transient events, which are only broadcast (streaming
 * deltas, tool progress, lifecycle). Field names are snake_case because these objects are the HTTP
 * and streaming wire format as they are.
 */
import type { ActivationReason, SkillCandidate, SkillScores } from "../skills.ts";

export interface ToolCall {
  id: string;
  name: string;
  /** Parsed JSON arguments as the model sent them (validated only when executed). */
  args: unknown;
}

/**
 * Token usage of a step, a run or a session. The detail fields are present only when the provider
 * reported a non-zero count (docs/agent-loop.md, "Usage"): input tokens read from / written to the
 * provider's prompt cache (both included in `input_tokens`), and reasoning tokens (in `output_tokens`).
 */
export interface Usage {
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
  cache_read_tokens?: number;
  cache_write_tokens?: number;
  reasoning_tokens?: number;
}

export type UserMessage = {
  role: "user";
  content: string;
  /** `steer`: the user interjected during a tool loop; `followUp`: a queued follow-up task. */
  meta?: { source?: "steer" | "followUp" };
};

export type AssistantMessage = {
  role: "assistant";
  text: string;
  reasoning?: string;
  tool_calls: ToolCall[];
  provider?: string;
  model?: string;
  usage?: Usage;
  finish_reason?: string;
  /** Set on the visible error message that ends a failed run. */
  error?: { code: string; message: string };
};

export type ToolResultMessage = {
  role: "tool_result";
  tool_call_id: string;
  tool_name: string;
  content: string;
  is_error: boolean;
};

export type Message = UserMessage | AssistantMessage | ToolResultMessage;

export interface PersistentBase {
  id: string;
  parent_id: string | null;
  seq: number;
  session_id: string;
  client_id: string;
  ts: number;
  /** The run this event belongs to; null for events outside a run (rewind/branch by a client…). */
  run_id: string | null;
}

export type MessageEvent = PersistentBase & { type: "message"; message: Message };
export type RewindEvent = PersistentBase & { type: "rewind"; target_event_id: string };
export type BranchEvent = PersistentBase & { type: "branch"; leaf_event_id: string };
export type CompactEvent = PersistentBase & {
  type: "compact";
  summary: string;
  compacted_through: string;
  tokens_before: number;
  tokens_after: number;
};
export type ChannelInjectEvent = PersistentBase & {
  type: "channel_inject";
  channel: string;
  external_id: string;
  /** The device the message came from (a live channel's `device_id`). */
  device_id?: string;
  metadata?: Record<string, unknown>;
};
export type SessionInfoEvent = PersistentBase & { type: "session_info"; changes: Record<string, unknown> };
export type CustomEvent = PersistentBase & { type: "custom"; kind: string; data: unknown };
export type CustomMessageEvent = PersistentBase & { type: "custom_message"; kind: string; message: Message; data?: unknown };
/**
 * A tool call waits for a person (docs/approvals.md): written between the assistant message that made
 * the call and the call's result, so the run's place is read from the log like any step.
 */
export type ToolApprovalRequestedEvent = PersistentBase & {
  type: "tool_approval_requested";
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  /** The arguments the tool will run with when approved (after any `beforeToolCall` rewrite). */
  args: unknown;
  /** Why approval is needed (the policy rule or the extension that asked). */
  reason: string;
  /** When an unanswered request is denied (`runtime.approval_timeout_ms` after the request). */
  expires_at: number;
};
export type ToolApprovalDecidedEvent = PersistentBase & {
  type: "tool_approval_decided";
  approval_id: string;
  tool_call_id: string;
  tool_name: string;
  decision: "approve" | "deny";
  /** `person`: over HTTP or the live channel; `timeout`: nobody answered in time; `cancelled`: the run ended first. */
  decided_by: "person" | "timeout" | "cancelled";
};

/** What the prompt budget did to a run's system prompt (docs/agent-loop.md, "Prompt budget"). */
export interface PromptBudgetReport {
  budget_tokens: number;
  tokens_before: number;
  tokens_after: number;
  /** Section ids removed entirely, in the order they were cut. */
  dropped: string[];
  /** Sections truncated with a marker. */
  shortened: { id: string; tokens_before: number; tokens_after: number }[];
  /** Still over budget after every cut allowed (`base` alone is too big): the prompt is sent anyway. */
  over_budget: boolean;
}

/** One tool a run is offered and why (docs/agent-loop.md, "Tool assembly"). */
export interface ToolChoice {
  name: string;
  /** `always`: the tool marks itself so; `configured`: named by `runtime.always_tools`; `hinted`: by an activated skill; `relevant`: ranked. */
  reason: "always" | "configured" | "hinted" | "relevant";
  /** Relevance to the user message (relevant tools only): cosine similarity when `ranked_by` is `embedding`, else BM25. */
  score?: number;
  /** How relevant tools were ranked: `embedding` (the workspace's `embedding_model`) or `keywords`. */
  ranked_by?: "embedding" | "keywords";
  /** The activated skills whose `allowed-tools` named it (hinted tools only). */
  hinted_by?: string[];
}

/** Run facts: kept for audit and replay, never transcript, never searched, never sent to the model. */
export type RunStartedEvent = PersistentBase & { type: "run_started"; input: Record<string, unknown> };
export type SystemPromptSnapshottedEvent = PersistentBase & {
  type: "system_prompt_snapshotted";
  prompt: string;
  /** Characters of `prompt` that are the cacheable stable prefix (docs/agent-loop.md, "Cacheable prefix"). */
  stable_chars?: number;
  /** What the prompt budget shortened or dropped; absent when the model's context window is unknown. */
  prompt_budget?: PromptBudgetReport;
  /** The run's assembled tools and why each was chosen (docs/agent-loop.md, "Tool assembly"). */
  tools?: { chosen: ToolChoice[]; left_out: string[]; tokens: number; max_tools: number; budget_tokens: number };
};
/** Which skills a run activated and why, with every recalled candidate's scores (src/runtime/skills.ts). */
export type SkillActivationSnapshottedEvent = PersistentBase & {
  type: "skill_activation_snapshotted";
  skills: {
    name: string;
    version: string;
    content_hash?: string;
    reason?: ActivationReason;
    scores?: SkillScores;
    /** The skill's `allowed-tools`, offered to the run as hinted tools. */
    allowed_tools?: string[];
  }[];
  candidates?: SkillCandidate[];
  /** The auxiliary model's reason, or the threshold rule that decided. */
  rationale?: string;
  /** Requested names (explicit or pinned) the workspace does not offer. */
  unknown?: string[];
  /** How many skills the run's catalog offered. */
  catalog_size?: number;
};
export type RunCompletedEvent = PersistentBase & { type: "run_completed"; result: Record<string, unknown> };
export type RunFailedEvent = PersistentBase & {
  type: "run_failed";
  error: { code: string; message: string };
  result?: Record<string, unknown>;
};

export type VisibleEvent =
  | MessageEvent
  | RewindEvent
  | BranchEvent
  | CompactEvent
  | ChannelInjectEvent
  | SessionInfoEvent
  | CustomEvent
  | CustomMessageEvent
  | ToolApprovalRequestedEvent
  | ToolApprovalDecidedEvent;

export type HiddenEvent =
  RunStartedEvent | SystemPromptSnapshottedEvent | SkillActivationSnapshottedEvent | RunCompletedEvent | RunFailedEvent;

export type PersistentEvent = VisibleEvent | HiddenEvent;
export type PersistentType = PersistentEvent["type"];

export const HIDDEN_TYPES = [
  "run_started",
  "system_prompt_snapshotted",
  "skill_activation_snapshotted",
  "run_completed",
  "run_failed",
] as const satisfies readonly HiddenEvent["type"][];

export function isHidden(event: Pick<PersistentEvent, "type">): event is HiddenEvent {
  return (HIDDEN_TYPES as readonly string[]).includes(event.type);
}

export interface TransientBase {
  seq: number;
  session_id: string;
  client_id: string;
  ts: number;
  run_id: string | null;
}

export type TransientEvent = TransientBase &
  (
    | { type: "message_start"; event_id: string; parent_id: string | null; role: "assistant" | "tool_result"; model?: string }
    | { type: "text_delta"; event_id: string; delta: string }
    | { type: "thinking_delta"; event_id: string; delta: string; block_index: number }
    | { type: "tool_call_delta"; event_id: string; tool_call_id: string; tool_name?: string; delta: string }
    | { type: "tool_execution_start"; event_id: string; parent_id: string; tool_call_id: string; tool_name: string; args: unknown }
    | { type: "tool_execution_update"; event_id: string; tool_call_id: string; partial: unknown }
    | { type: "tool_execution_end"; event_id: string; tool_call_id: string; tool_name: string; duration_ms: number; is_error: boolean }
    | { type: "turn_start"; turn_index: number }
    | { type: "turn_end"; turn_index: number; usage?: Usage; stop_reason?: string }
    | { type: "runtime_start" }
    | { type: "runtime_end"; reason: "completed" | "cancelled" | "error"; error?: string }
    | { type: "message_cancelled"; event_id: string; reason: "user_cancel" | "error" | "max_tokens" }
    // The seed's named lifecycle events (docs/extensions.md, "Lifecycle events"): subscribers see them as frames.
    | { type: "prompt_submit"; content_chars: number }
    | { type: "turn_finish"; turn_index: number; duration_ms: number }
    | { type: "turn_error"; turn_index: number; error: string }
    | { type: "session_start" }
    | { type: "session_end"; reason: "closed" | "deleted" }
  );

/** One frame on the live stream (SSE `data:` / WebSocket message): either kind, tagged. */
export type StreamFrame = ({ persistent: true } & PersistentEvent) | ({ persistent: false } & TransientEvent);

/** The fields a caller supplies for a new persistent event; the SessionDO assigns the rest. */
export type NewPersistent<E extends PersistentEvent = PersistentEvent> = E extends PersistentEvent
  ? Omit<E, "seq" | "session_id" | "ts" | "id" | "parent_id"> & { id?: string; parent_id?: string | null }
  : never;
