/**
 * What a toolchain tool needs to know about the run it serves: the task (from `ToolContext.data`,
 * checked against the run's workspace and session), the agent doing it, and the workspace's
 * toolchain config. Only a working task's run may act: once a task is done, failed or cancelled, a
 * run still in flight can neither report nor change anything in Gitea.
 */
import { fail, type ToolContext, type ToolResult } from "../../runtime/index.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { getAgent } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { toolchainConfigOf, type ToolchainConfig } from "./config.ts";
import { loadTask } from "./task-store.ts";
import type { ToolchainTask } from "./task-model.ts";

export interface TaskToolContext {
  task: ToolchainTask;
  agent: Agent | null;
  config: ToolchainConfig;
}

class ToolContextError extends Error {
  constructor(
    readonly code: string,
    message: string,
  ) {
    super(message);
    this.name = "ToolContextError";
  }
}

/** The task a toolchain tool call serves; throws `ToolContextError` when the run carries none. */
async function taskToolContext(ctx: ToolContext): Promise<TaskToolContext> {
  const taskId = ctx.data.task_id;
  if (typeof taskId !== "string") throw new ToolContextError("no_task", "This run is not a toolchain task run (no task_id)");
  const task = await loadTask(ctx.env, ctx.workspaceId, taskId);
  if (!task) throw new ToolContextError("no_task", `Toolchain task ${taskId} not found`);
  // Only the task's own session acts for it (runs of other sessions cannot borrow a task id).
  if (task.sessionId !== ctx.sessionId)
    throw new ToolContextError("not_task_session", `This run's session does not belong to task ${taskId}`);
  const [agent, config] = await Promise.all([getAgent(ctx.env, ctx.workspaceId, task.agentId), loadConfig(ctx.env, ctx.workspaceId)]);
  return { task, agent, config: toolchainConfigOf(config) };
}

/** Run a toolchain tool's body for the working task of this run, or answer why it may not act. */
export async function withWorkingTask(ctx: ToolContext, run: (t: TaskToolContext) => Promise<ToolResult>): Promise<ToolResult> {
  let t: TaskToolContext;
  try {
    t = await taskToolContext(ctx);
  } catch (err) {
    if (err instanceof ToolContextError) return fail(err.code, err.message);
    throw err;
  }
  if (t.task.status !== "working")
    return fail("task_not_working", `Task ${t.task.id} is ${t.task.status}; only a working task's run may act for it`);
  return run(t);
}
