/**
 * What other parts of Beaver (routes, toolchain dispatcher) send to a SessionDO to start a run and
 * what they get back. Field names are snake_case because they are also the HTTP API's.
 */
import type { ModelEntry } from "../../storage/config/schema.ts";
import type { Usage } from "./events.ts";
import type { SkillOverride } from "../skills.ts";

export interface SubmitRunInput {
  workspace_id: string;
  content: string;
  client_id?: string;
  /** Same key, same session → the same run, never a second one. */
  idempotency_key?: string;
  /**
   * Hash of the request the key came with (`requestFingerprint`). When both the first use and a repeat
   * carry one and they differ, the repeat is refused (`idempotency_key_reused`) instead of answered with
   * a run it did not ask for. Set by the HTTP route; internal callers key attempts and rebuild their
   * prompt on retry, so they leave it out and keep "same key → same run".
   */
  idempotency_fingerprint?: string;
  /** `steer` / `followUp` messages are merged as <system-reminder> (see session handlers). */
  source?: "steer" | "followUp";
  /** Named tool set for this run (src/tools/toolsets.ts); default `default`. */
  toolset?: string;
  /** Data handed to tools through ToolContext.data (for example `{ task_id }`). */
  tool_data?: Record<string, unknown>;
  /** Overrides the workspace's main model for this run (an agent's own model). */
  model_override?: ModelEntry;
  /** Extra system prompt section for this run (toolchain task instructions). */
  system_prompt_extra?: string;
  /** Overrides `runtime.max_tool_iterations` for this run: a toolchain task needs more steps than a chat turn. */
  max_tool_iterations?: number;
  /** Overrides `runtime.max_run_tokens` for this run: a delegated child gets its share of its parent's budget. */
  max_run_tokens?: number;
  /** Skills to activate for this run by name (`skills` on a message; docs/skills-and-plugins.md). */
  skills?: string[];
  /** Skills pinned by whoever submitted the run (a toolchain agent's `skills`). */
  pinned_skills?: string[];
  /**
   * `requested_only`: the run activates only its explicit and pinned skills, with no automatic choice (no
   * ranking, no embedding or auxiliary-model call). Evaluation runs use it so both arms differ only in the
   * skill under test and the report's cost counts every model call (docs/evaluation.md, "Isolation").
   */
  skill_choice?: "auto" | "requested_only";
  /**
   * A dry run (an isolated evaluation run, docs/evaluation.md): tools marked `outward` are not executed;
   * the model reads a result saying what would have been done, and the call stays in the log as the record.
   */
  dry_run?: boolean;
  /** Skills this run sees at another tree than their current version (the version under test; src/runtime/skills.ts). */
  skill_overrides?: SkillOverride[];
  /**
   * The run is offered only tools with these names (a subset of its tool set): a delegated child run gets
   * at most its parent's tools (docs/delegation.md). Absent = the whole tool set.
   */
  allowed_tools?: string[];
  /** A registered run driver runs this run instead of the agent loop (a team run; docs/delegation.md, "Teams"). */
  driver?: string;
  /**
   * Where the message came from when not from an API client: a live channel (the session WebSocket), a
   * schedule, a toolchain task, mail, a team run or a delegation. Recorded as a `channel_inject` event
   * right before the message (never sent to the model, shown in the transcript; docs/channels.md).
   */
  channel?: ChannelOrigin;
  /** A retry: the failed run whose input this is (docs/sessions.md, "Retry"). */
  retry_of?: string;
}

/** Where a message came from (docs/channels.md, "Inbound: channel_inject"). */
export interface ChannelOrigin {
  /** `websocket`, `schedule`, `toolchain`, `mail`, `team`, `delegate`, … */
  channel: string;
  /** The id of the message in its source (a frame's client id, a schedule slot, a task id, a mail id…). */
  external_id: string;
  /** The device the message came from (a live channel's `device_id`). */
  device_id?: string;
  /** Small facts about the source (schedule id, task id, …), shown with the event. */
  metadata?: Record<string, unknown>;
}

export type RunStatus = "queued" | "running" | "completed" | "failed" | "cancelled";

export type RunUsage = Usage;

export interface RunResult {
  session_id: string;
  run_id: string;
  status: RunStatus;
  output_text: string;
  finish_reason: string;
  tool_iterations: number;
  provider: string | null;
  model: string | null;
  usage: RunUsage;
  /** Tokens spent by runs this run delegated to (docs/delegation.md); absent when it delegated nothing. */
  delegated_usage?: RunUsage;
  error?: { code: string; message: string };
}
