/**
 * The tool contract shared by builtins, toolchain/Gitea tools, skills and MCP wrappers:
 * a spec with a zod input schema, the context a tool runs in, and the one result shape.
 */
import type { ZodType } from "zod";
import type { Env } from "../../storage/env.ts";
import type { SkillOverride } from "../skills.ts";
import type { SessionWorkspace } from "../workspace/session-workspace.ts";
import type { ModelEntry, WorkspaceConfig } from "../../storage/config/schema.ts";
import type { Usage } from "../session/events.ts";

export interface ToolResult {
  ok: boolean;
  /** Text the model reads next (also for errors: the model should be able to recover). */
  content: string;
  error?: { code: string; message: string };
  /**
   * Model tokens the tool spent on the run's behalf in other sessions (delegated child runs,
   * docs/delegation.md): added to the run's `delegated_usage`, never to its own `usage`.
   */
  usage?: Usage;
}

export interface ToolContext {
  env: Env;
  workspaceId: string;
  sessionId: string;
  runId: string;
  toolCallId: string;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  /** Per-run data supplied by whoever submitted the run (for example `{ task_id }` for toolchain runs). */
  data: Readonly<Record<string, unknown>>;
  /** Streams partial output to live clients (`tool_execution_update`); never persisted. */
  emitUpdate(partial: unknown): void;
  /**
   * Resolves once D1 holds everything this session has logged so far (or once a copy failed; the
   * alarm retries). A run's events reach D1 within a second, not per step (docs/performance.md,
   * "Replication"), so a tool that reads the session tables from D1 awaits this first.
   */
  replicated?(): Promise<void>;
  /** The workspace's `runtime.timezone` when the caller has it loaded (tools fall back to the config). */
  timezone?: string;
  /** The run is a dry run (`SubmitRunInput.dry_run`): the executor does not call `outward` tools. */
  dryRun?: boolean;
  /** The run's `skill_overrides`: tools that read skills read these at the override's tree. */
  skillOverrides?: readonly SkillOverride[];
  /** The session's workspace (files, shell, git; docs/workspace.md) when the run has one. */
  workspace?: SessionWorkspace;
  /** The run's own configuration (what its system prompt told the model), when the caller has it loaded. */
  config?: WorkspaceConfig;
  /** The names of the tools this run was offered (its frozen tool set): a tool that hands work on gives at most these. */
  tools?: readonly string[];
  /** The tool set the run named, and its model override: what delegated child runs inherit (docs/delegation.md). */
  toolset?: string;
  modelOverride?: ModelEntry;
  /** Tokens the run may still spend (`runtime.max_run_tokens` less its own and delegated usage); absent: no cap. */
  tokensLeft?: number;
}

/** What `ToolSpec.onRunCancelled` knows of the call it is told about. */
export interface CancelledCallContext {
  env: Env;
  workspaceId: string;
  sessionId: string;
  runId: string;
  toolCallId: string;
}

export interface ToolSpec<I = unknown> {
  name: string;
  description: string;
  input: ZodType<I>;
  /**
   * The JSON Schema the model is shown, when the tool brings its own (an MCP server's `inputSchema`);
   * otherwise it is derived from `input`. Arguments are validated by `input` either way.
   */
  inputJsonSchema?: Record<string, unknown>;
  /** Always offered to the model (not subject to per-run selection). */
  always?: boolean;
  /** Safe to run again after an interruption (otherwise an interrupted call gets an `interrupted` error). */
  idempotent?: boolean;
  /**
   * Only reads (no effect anywhere, so also safe to run again): the calls of one model step to such
   * tools run in parallel, their results kept in call order (docs/agent-loop.md, "Parallel tool calls").
   */
  readOnly?: boolean;
  /**
   * Characters of a result the model reads (hermes' per-tool `max_result_size_chars`); the central
   * cap `tool_result_chars` (storage/limits.ts) bounds it and applies when a tool sets none. A longer
   * result is cut with a note saying so (executor.ts).
   */
  maxResultChars?: number;
  /**
   * Has effects outside the run (writes to Gitea, mail, schedules, memory, fetches the web): in a dry run
   * the executor answers for it without calling `execute` (docs/evaluation.md, "Isolation").
   */
  outward?: boolean;
  execute(args: I, ctx: ToolContext): Promise<ToolResult>;
  /**
   * The run ended `cancelled` with this call unanswered — also when no `execute` is running any more
   * to see its signal abort (the session was evicted mid-call and the cancel found a new instance).
   * A tool that started work elsewhere (delegated child runs, docs/delegation.md) stops it here.
   * Called with the call's raw arguments, at most a few seconds, errors logged and ignored.
   */
  onRunCancelled?(args: unknown, ctx: CancelledCallContext): Promise<void>;
}

export function defineTool<I>(spec: ToolSpec<I>): ToolSpec<unknown> {
  return spec as unknown as ToolSpec<unknown>;
}

export const ok = (content: string): ToolResult => ({ ok: true, content });
export const fail = (code: string, message: string): ToolResult => ({
  ok: false,
  content: `Error (${code}): ${message}`,
  error: { code, message },
});
