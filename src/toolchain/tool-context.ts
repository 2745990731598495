/**
 * What a toolchain tool needs to know about the run it serves: the task (from `ToolContext.data`,
 * checked against the run's workspace), the agent doing it, and the workspace's toolchain config.
 */
import type { ToolContext } from "../tools/spec.ts";
import { loadConfig } from "../config/store.ts";
import { getAgent } from "./agent-store.ts";
import type { Agent } from "./agents.ts";
import { toolchainConfigOf, type ToolchainConfig } from "./config.ts";
import { loadTask } from "./task-store.ts";
import type { ToolchainTask } from "./task-model.ts";

export interface TaskToolContext {
  task: ToolchainTask;
  agent: Agent | null;
  config: ToolchainConfig;
}

export class ToolContextError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ToolContextError";
  }
}

/** The task a toolchain tool call serves; throws `ToolContextError` when the run carries none. */
export async function taskToolContext(ctx: ToolContext): Promise<TaskToolContext> {
  const taskId = ctx.data.task_id;
  if (typeof taskId !== "string") throw new ToolContextError("no_task", "This run is not a toolchain task run (no task_id)");
  const task = await loadTask(ctx.env, ctx.workspaceId, taskId);
  if (!task) throw new ToolContextError("no_task", `Toolchain task ${taskId} not found`);
  // Only the task's own session acts for it (runs of other sessions cannot borrow a task id).
  if (task.sessionId !== ctx.sessionId) throw new ToolContextError("not_task_session", `This run's session does not belong to task ${taskId}`);
  const [agent, config] = await Promise.all([getAgent(ctx.env, ctx.workspaceId, task.agentId), loadConfig(ctx.env, ctx.workspaceId)]);
  return { task, agent, config: toolchainConfigOf(config.toolchain) };
}
