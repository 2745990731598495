/**
 * One delegated child run through `SessionClient` (docs/delegation.md, "Durability"): create the
 * child's session under its derived id, submit the task under an idempotency key derived the same way,
 * and wait for the run's end. Doing it again — a parent resumed after an eviction — finds the same
 * session and the same run, so a child never runs twice; a child that finished meanwhile is simply
 * collected. A cancelled parent cancels the child — also by id and key alone (cancelChild), from an
 * instance that no longer holds the wait.
 */
import type { Env } from "../../storage/env.ts";
import type { ModelEntry } from "../../storage/config/schema.ts";
import { AppError } from "../../kernel/errors.ts";
import { SessionClient, type RunResult } from "../../runtime/index.ts";
import type { DelegationMark } from "./delegation.ts";
import { sentByData } from "../../kernel/sent-by.ts";

/** How long one wait on the child lasts before it is asked again (a child may run much longer). */
const WAIT_SLICE_MS = 30_000;

export interface ChildRunRequest {
  env: Env;
  workspaceId: string;
  sessionId: string;
  title: string;
  /** Recorded on the child session: the link back to its parent (parent_session_id, parent_run_id, …). */
  metadata: Record<string, unknown>;
  content: string;
  systemPrompt: string;
  idempotencyKey: string;
  toolset?: string;
  /** The tools it is offered (absent: its whole tool set). */
  tools?: string[];
  mark: DelegationMark;
  /** The child's share of its parent's `max_run_tokens` (absent: the parent has no cap). */
  maxRunTokens?: number;
  model?: ModelEntry | null;
  skills?: string[];
  /** Where the message came from (recorded as `channel_inject` before it; docs/delegation.md, "Channels"). */
  channel: { channel: string; device_id: string; external_id: string };
  /**
   * Who sent the parent's message (kernel/sent-by.ts): the child works on their behalf, so a personal
   * MCP server is called with their tokens there too (docs/mcp.md, "Personal servers").
   */
  sentBy?: string | null;
}

/** Starts the child (or finds it started) and resolves with its run's result once it ends; cancels it when `signal` aborts. */
export async function runChild(r: ChildRunRequest, signal: AbortSignal): Promise<RunResult> {
  const { client } = await SessionClient.create(r.env, {
    workspaceId: r.workspaceId,
    id: r.sessionId,
    title: r.title,
    metadata: r.metadata,
  });
  const submitted = await client.submit({
    workspace_id: r.workspaceId,
    content: r.content,
    client_id: "delegation",
    idempotency_key: r.idempotencyKey,
    ...(r.toolset !== undefined ? { toolset: r.toolset } : {}),
    ...(r.tools ? { allowed_tools: r.tools } : {}),
    ...(r.maxRunTokens !== undefined ? { max_run_tokens: r.maxRunTokens } : {}),
    tool_data: { delegation: r.mark, ...(r.sentBy ? sentByData(r.sentBy) : {}) },
    ...(r.model ? { model_override: r.model } : {}),
    ...(r.skills && r.skills.length > 0 ? { pinned_skills: r.skills } : {}),
    system_prompt_extra: r.systemPrompt,
    channel: r.channel,
  });
  const cancel = () => void client.cancel(r.workspaceId, submitted.run_id).catch(() => undefined);
  if (signal.aborted) cancel();
  signal.addEventListener("abort", cancel, { once: true });
  try {
    for (;;) {
      const result = await client.waitForRun(submitted.run_id, WAIT_SLICE_MS, r.workspaceId);
      if (result.status !== "queued" && result.status !== "running") return result;
    }
  } finally {
    signal.removeEventListener("abort", cancel);
  }
}

/**
 * Cancels the child run submitted under `idempotencyKey` in session `sessionId`, knowing no run id: how
 * a parent that ended cancelled stops its children after an eviction (docs/delegation.md, "Cancel").
 * A child never created (its session answers 404) is nothing to cancel.
 */
export async function cancelChild(env: Env, workspaceId: string, sessionId: string, idempotencyKey: string): Promise<void> {
  await SessionClient.of(env, sessionId)
    .cancelByKey(workspaceId, idempotencyKey)
    .catch((err: unknown) => {
      if (!(err instanceof AppError) || err.code !== "not_found") throw err;
    });
}
