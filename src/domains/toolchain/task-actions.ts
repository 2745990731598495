/**
 * What people (through the API) may do to a task: retry a failed or cancelled one with a fresh set
 * of attempts, or cancel an open one (stopping its run). Anything else is a 409.
 */
import type { Env } from "../../storage/env.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { cancelRun } from "../../runtime/index.ts";
import { loadTask, openTaskByDedupeKey, transition } from "./task-store.ts";
import type { ToolchainTask } from "./task-model.ts";
import { errorFields, log } from "../../kernel/log.ts";

async function mustLoad(env: Env, workspaceId: string, id: string): Promise<ToolchainTask> {
  const task = await loadTask(env, workspaceId, id);
  if (!task) throw notFound(`Task '${id}'`);
  return task;
}

export async function retryTask(env: Env, workspaceId: string, id: string, by: string, now = Date.now()): Promise<ToolchainTask> {
  const task = await mustLoad(env, workspaceId, id);
  let moved: boolean;
  try {
    moved = await transition(env, workspaceId, id, {
      from: ["failed", "cancelled"],
      to: "pending",
      set: {
        attempts: 0,
        business_failures: 0,
        reminder_sent: 0,
        not_before: now,
        deadline_at: null,
        failure_kind: null,
        last_error: null,
        completed_at: null,
        run_id: null,
      },
      event: "manual_retry",
      detail: { by, previous_status: task.status },
      now,
    });
  } catch (err) {
    // The open-task dedupe index refused to reopen it: a newer task is already doing this work.
    const open = task.dedupeKey ? await openTaskByDedupeKey(env, workspaceId, task.dedupeKey) : null;
    if (open)
      throw new AppError("conflict", `Task '${id}' cannot be retried: task '${open.id}' is already open for the same work`, {
        details: { open_task_id: open.id },
      });
    throw err;
  }
  if (!moved) throw new AppError("conflict", `Task '${id}' is ${task.status}; only failed or cancelled tasks can be retried`);
  return mustLoad(env, workspaceId, id);
}

export async function cancelTask(env: Env, workspaceId: string, id: string, by: string, now = Date.now()): Promise<ToolchainTask> {
  const task = await mustLoad(env, workspaceId, id);
  const moved = await transition(env, workspaceId, id, {
    from: ["pending", "working"],
    to: "cancelled",
    set: { completed_at: now, deadline_at: null },
    event: "cancelled",
    detail: { by, previous_status: task.status },
    now,
  });
  if (!moved) throw new AppError("conflict", `Task '${id}' is ${task.status}; only pending or working tasks can be cancelled`);
  if (task.status === "working" && task.sessionId) {
    // Best effort: the task is cancelled either way, and its tools refuse to act from now on.
    await cancelRun(env, task.sessionId, workspaceId).catch((err: unknown) =>
      log.warn("cancelling the run of a cancelled task failed", { task_id: id, ...errorFields(err) }),
    );
  }
  return mustLoad(env, workspaceId, id);
}
