// Test data: one sample event of every persistent type (the mapped type breaks the build when a type is added).
import type { PersistentType } from "../../src/runtime/session/events.ts";
import type { EventOf } from "../../src/runtime/session/event-handlers.ts";

const base = (id: string) => ({
  id,
  parent_id: "p0",
  seq: 10,
  session_id: "ses_1",
  client_id: "cli_1",
  ts: 1_700_000_000_000,
  run_id: "run_1",
});

/** One sample per type; the mapped type makes this fail to compile when a type is added. */
export const samples: { [T in PersistentType]: EventOf<T> } = {
  message: { ...base("m1"), type: "message", message: { role: "user", content: "hello there" } },
  rewind: { ...base("rw"), type: "rewind", target_event_id: "m1" },
  branch: { ...base("br"), type: "branch", leaf_event_id: "m1" },
  compact: { ...base("cp"), type: "compact", summary: "we fixed the bug", compacted_through: "m1", tokens_before: 900, tokens_after: 90 },
  channel_inject: { ...base("ch"), type: "channel_inject", channel: "telegram", external_id: "tg-42", metadata: { chat: "ops" } },
  session_info: { ...base("si"), type: "session_info", changes: { model: "gpt-5", title: "Bug hunt" } },
  custom: { ...base("cu"), type: "custom", kind: "bookmark", data: { label: "here" } },
  custom_message: {
    ...base("cm"),
    type: "custom_message",
    kind: "memory_recall",
    message: { role: "user", content: "<system-reminder>\nuser prefers tabs\n</system-reminder>" },
    data: { memory_ids: ["mem_1"] },
  },
  tool_approval_requested: {
    ...base("ar"),
    type: "tool_approval_requested",
    approval_id: "apr_1",
    tool_call_id: "call_1",
    tool_name: "deploy",
    args: { env: "prod" },
    reason: 'tool policy rule match "deploy": require_approval',
    expires_at: 1_700_000_900_000,
  },
  tool_approval_decided: {
    ...base("ad"),
    type: "tool_approval_decided",
    approval_id: "apr_1",
    tool_call_id: "call_1",
    tool_name: "deploy",
    decision: "approve",
    decided_by: "person",
  },
  run_started: { ...base("h1"), parent_id: null, type: "run_started", input: { content: "hi" } },
  system_prompt_snapshotted: { ...base("h2"), parent_id: null, type: "system_prompt_snapshotted", prompt: "You are Beaver." },
  skill_activation_snapshotted: {
    ...base("h3"),
    parent_id: null,
    type: "skill_activation_snapshotted",
    skills: [{ name: "git", version: "3" }],
  },
  run_completed: { ...base("h4"), parent_id: null, type: "run_completed", result: { status: "completed" } },
  run_failed: { ...base("h5"), parent_id: null, type: "run_failed", error: { code: "provider_error", message: "upstream down" } },
};
