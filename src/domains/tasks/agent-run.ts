/**
 * Starting and watching the agent run of a task through the session service: each task has its own
 * session `task:<id>`, and each attempt (or reminder) is one run submitted with an idempotency key,
 * so a dispatcher that dies and comes back never starts the same attempt twice.
 */
import type { Env } from "../../storage/env.ts";
import type { ModelEntry } from "../../storage/config/schema.ts";
import { createSession, submitRun, waitForRun, type ChannelOrigin, type RunResult } from "../../runtime/index.ts";

export const sessionIdOf = (taskId: string) => `task:${taskId}`;

export interface AgentRunRequest {
  workspaceId: string;
  taskId: string;
  title: string;
  /** The tool set of the run (src/app/runtime.ts): `toolchain`, `toolchain_code` (with the workspace and git) or `mail`. */
  toolset: "toolchain" | "toolchain_code" | "mail";
  /** Recorded on the session (shown to the model as session metadata). */
  metadata: Record<string, unknown>;
  content: string;
  systemPrompt: string;
  toolData: Record<string, unknown>;
  model: ModelEntry | null;
  idempotencyKey: string;
  /** Skills pinned to the run (the agent's `skills`). */
  skills?: string[];
  /** Tool iterations the run may take (toolchain.max_tool_iterations); the workspace's runtime limit when absent. */
  maxToolIterations?: number;
  /** Where the work came from (a toolchain task, a mail): recorded as `channel_inject` before the message (docs/channels.md). */
  channel: ChannelOrigin;
}

/** Create the task's session if needed and queue the run; returns the run id. */
export async function startAgentRun(env: Env, r: AgentRunRequest): Promise<{ sessionId: string; runId: string }> {
  const sessionId = sessionIdOf(r.taskId);
  await createSession(env, { workspaceId: r.workspaceId, id: sessionId, title: r.title.slice(0, 200), metadata: r.metadata });
  const submitted = await submitRun(env, sessionId, {
    workspace_id: r.workspaceId,
    content: r.content,
    client_id: "toolchain",
    idempotency_key: r.idempotencyKey,
    toolset: r.toolset,
    tool_data: r.toolData,
    ...(r.model ? { model_override: r.model } : {}),
    system_prompt_extra: r.systemPrompt,
    ...(r.skills && r.skills.length > 0 ? { pinned_skills: r.skills } : {}),
    ...(r.maxToolIterations !== undefined ? { max_tool_iterations: r.maxToolIterations } : {}),
    channel: r.channel,
  });
  return { sessionId, runId: submitted.run_id };
}

export const isRunOver = (r: RunResult) => r.status === "completed" || r.status === "failed" || r.status === "cancelled";

/** The run's result, or its current state when it has not ended within `timeoutMs`. */
export function awaitRun(env: Env, workspaceId: string, sessionId: string, runId: string, timeoutMs: number): Promise<RunResult> {
  return waitForRun(env, sessionId, runId, timeoutMs, workspaceId);
}
