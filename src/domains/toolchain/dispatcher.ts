/**
 * Runs toolchain tasks: claims pending tasks up to the workspace's concurrency, starts each attempt
 * as a run of the task's own session, and when the run is over verifies the work and either marks
 * the task done or routes the failure. Working tasks whose run outlives the report window get one
 * reminder run, then fail as a system failure. Called right after intake and by the cron tick; every
 * step is a conditional transition, so overlapping dispatchers never double-run or double-route.
 */
import type { Env } from "../../storage/env.ts";
import type { ModelEntry } from "../../storage/config/schema.ts";
import { AppError } from "../../kernel/errors.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { cancelRun, type RunResult } from "../../runtime/index.ts";
import { listAgents } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { toolchainConfigOf, type ToolchainConfig } from "./config.ts";
import { applyFailure, type ApplyContext } from "./failure-apply.ts";
import { toolchainHandler } from "./handler.ts";
import { awaitRun, isRunOver, sessionIdOf, startAgentRun } from "../tasks/agent-run.ts";
import {
  addHistory,
  loadComments,
  loadHistory,
  loadOutputs,
  readyTasks,
  transition,
  workingTasks,
  workspacesWithOpenTasks,
} from "./task-store.ts";
import type { TaskType } from "../tasks/task-type.ts";
import type { ToolchainTask } from "./task-model.ts";
import type { RunKind } from "./prompt-sections.ts";
import { CODE_ACTIONS, pushedHeadCheck } from "./pushes.ts";
import { errorFields, log } from "../../kernel/log.ts";

export interface DispatchSummary {
  started: number;
  finished: number;
  reminded: number;
}

interface Ctx extends ApplyContext {
  agents: Agent[];
}

async function evidenceOf(env: Env, workspaceId: string, taskId: string) {
  const [comments, outputs] = await Promise.all([loadComments(env, workspaceId, taskId), loadOutputs(env, workspaceId, taskId)]);
  return { comments, outputs: outputs.length };
}

/** Gitea calls of this run that failed for infrastructure reasons (recorded by the Gitea tools). */
async function giteaOutages(env: Env, workspaceId: string, taskId: string, runId: string) {
  const history = await loadHistory(env, workspaceId, taskId);
  return history.filter((h) => h.event === "gitea_unreachable" && h.detail.run_id === runId);
}

/** Verify a task whose run is over and complete it: done, or a routed failure. */
async function finishTask(c: Ctx, task: ToolchainTask, result: RunResult): Promise<boolean> {
  if (result.status === "failed" || result.status === "cancelled") {
    const reason = `the run ${result.status === "cancelled" ? "was cancelled" : "crashed"}: ${result.error?.message ?? result.finish_reason}`;
    return applyFailure(c, task, { kind: "system", reason });
  }
  const verdict = toolchainHandler.verify(task, await evidenceOf(c.env, c.workspaceId, task.id));
  // Code scenarios: a branch this task pushed must still have a commit it pushed at its head.
  const pushed = verdict.passed ? await pushedHeadCheck(c.env, c.workspaceId, task, c.config, c.agents) : null;
  if (pushed && !pushed.passed) return applyFailure(c, task, { kind: "business", reason: `verification failed (${pushed.detail})` });
  if (verdict.passed) {
    return transition(c.env, c.workspaceId, task.id, {
      from: ["working"],
      to: "done",
      set: { completed_at: c.now, deadline_at: null, failure_kind: null },
      event: "verified",
      detail: { reason: verdict.reason, detail: verdict.detail, run_id: result.run_id },
      now: c.now,
    });
  }
  const outages = await giteaOutages(c.env, c.workspaceId, task.id, result.run_id);
  if (outages.length) {
    const last = outages[outages.length - 1]!;
    return applyFailure(c, task, {
      kind: "infrastructure",
      reason: String(last.detail.error ?? "Gitea unreachable"),
      operation: String(last.detail.operation ?? "Gitea call"),
    });
  }
  return applyFailure(c, task, { kind: "business", reason: `verification failed (${verdict.detail})` });
}

/** Queue a run of the task's own session with the toolchain prompt and tools. */
function startTaskRun(c: Ctx, task: ToolchainTask, model: ModelEntry | null, run: RunKind, idempotencyKey: string) {
  const skills = c.agents.find((a) => a.id === task.agentId)?.skills ?? [];
  return startAgentRun(c.env, {
    workspaceId: c.workspaceId,
    taskId: task.id,
    title: task.title,
    toolset: CODE_ACTIONS.has(task.actionType) ? "toolchain_code" : "toolchain",
    metadata: { task_id: task.id, task_type: "toolchain", action_type: task.actionType, agent_id: task.agentId },
    content: toolchainHandler.runContent(task, run),
    systemPrompt: toolchainHandler.systemPrompt(task),
    toolData: { task_id: task.id, agent_id: task.agentId },
    model,
    idempotencyKey,
    skills,
    maxToolIterations: c.config.max_tool_iterations,
    channel: {
      channel: "toolchain",
      external_id: idempotencyKey,
      metadata: { task_id: task.id, action_type: task.actionType, run: run.kind },
    },
  });
}

function runKindOf(task: ToolchainTask, c: Ctx): RunKind {
  // `attempts` was already incremented by the claim.
  return task.attempts <= 1
    ? { kind: "start" }
    : { kind: "retry", attempt: task.attempts, maxAttempts: c.config.retry.max_attempts, reason: task.lastError ?? "no report" };
}

/** Claim one pending task and run it; returns whether this dispatcher started it. */
async function startTask(c: Ctx, pending: ToolchainTask): Promise<boolean> {
  const attempt = pending.attempts + 1;
  const claimed = await transition(c.env, c.workspaceId, pending.id, {
    from: ["pending"],
    to: "working",
    set: {
      attempts: attempt,
      deadline_at: c.now + c.config.timeouts.report_window_ms,
      session_id: sessionIdOf(pending.id),
      run_id: null,
      reminder_sent: 0,
    },
    event: "claimed",
    detail: { attempt },
    now: c.now,
  });
  if (!claimed) return false;
  const task: ToolchainTask = { ...pending, attempts: attempt, status: "working" };
  const agent = c.agents.find((a) => a.id === task.agentId);
  if (!agent?.enabled) {
    await applyFailure(c, task, { kind: "system", reason: `agent '${task.agentId}' is missing or disabled` });
    return true;
  }
  let runId: string;
  let sessionId: string;
  try {
    ({ runId, sessionId } = await startTaskRun(c, task, agent.model, runKindOf(task, c), `${task.id}:attempt:${attempt}`));
  } catch (err) {
    const reason = err instanceof AppError ? `${err.code}: ${err.message}` : `could not start the run: ${String(err)}`;
    await applyFailure(c, task, { kind: "system", reason });
    return true;
  }
  await transition(c.env, c.workspaceId, task.id, {
    from: ["working"],
    to: "working",
    set: { run_id: runId },
    event: "run_started",
    detail: { run_id: runId, session_id: sessionId, attempt },
    now: c.now,
  });
  const result = await awaitRun(c.env, c.workspaceId, sessionId, runId, c.config.timeouts.run_wait_ms);
  if (isRunOver(result)) await finishTask({ ...c, now: Date.now() }, { ...task, runId }, result);
  return true;
}

/** A working task seen by a later tick: finish it if its run is over; remind or fail it if it is late. */
async function watchTask(c: Ctx, task: ToolchainTask): Promise<"finished" | "reminded" | "waiting"> {
  let unreadable: string | null = null;
  if (task.runId && task.sessionId) {
    try {
      const result = await awaitRun(c.env, c.workspaceId, task.sessionId, task.runId, 1);
      if (isRunOver(result)) {
        await finishTask(c, task, result);
        return "finished";
      }
    } catch (err) {
      // A run whose state cannot be read (its session lost or unreachable) must not keep the task
      // working forever: the report window still applies, and the history says why.
      unreadable = err instanceof Error ? err.message : String(err);
    }
  }
  if (task.deadlineAt === null || c.now < task.deadlineAt) return "waiting";
  if (unreadable)
    await addHistory(
      c.env,
      c.workspaceId,
      task.id,
      "run_unreadable",
      { run_id: task.runId, session_id: task.sessionId, error: unreadable },
      c.now,
    );
  const verdict = toolchainHandler.verify(task, await evidenceOf(c.env, c.workspaceId, task.id));
  if (verdict.passed) {
    const done = await transition(c.env, c.workspaceId, task.id, {
      from: ["working"],
      to: "done",
      set: { completed_at: c.now, deadline_at: null },
      event: "verified",
      detail: { reason: verdict.reason, detail: verdict.detail, late: true },
      now: c.now,
    });
    return done ? "finished" : "waiting";
  }
  if (!task.reminderSent) {
    const agent = c.agents.find((a) => a.id === task.agentId);
    const moved = await transition(c.env, c.workspaceId, task.id, {
      from: ["working"],
      to: "working",
      set: { reminder_sent: 1, deadline_at: c.now + c.config.timeouts.report_window_ms },
      event: "reminder_sent",
      detail: { previous_run_id: task.runId },
      now: c.now,
    });
    if (!moved) return "waiting";
    try {
      const { runId, sessionId } = await startTaskRun(
        c,
        task,
        agent?.model ?? null,
        { kind: "reminder" },
        `${task.id}:attempt:${task.attempts}:reminder`,
      );
      await transition(c.env, c.workspaceId, task.id, {
        from: ["working"],
        to: "working",
        set: { run_id: runId, session_id: sessionId },
        event: "run_started",
        detail: { run_id: runId, session_id: sessionId, reminder: true },
        now: c.now,
      });
    } catch (err) {
      await applyFailure(c, task, {
        kind: "system",
        reason: `could not start the reminder run: ${err instanceof Error ? err.message : String(err)}`,
      });
    }
    return "reminded";
  }
  if (task.sessionId) await cancelRun(c.env, task.sessionId, c.workspaceId).catch(() => undefined);
  await applyFailure(c, task, {
    kind: "system",
    reason: `no report within the report window, even after a reminder (attempt ${task.attempts})`,
  });
  return "finished";
}

function logFailure(step: string, taskId: string, err: unknown): "error" {
  log.error("toolchain dispatch step failed", { step, task_id: taskId, ...errorFields(err) });
  return "error";
}

async function contextFor(env: Env, workspaceId: string, now: number): Promise<Ctx> {
  const [config, agents] = await Promise.all([loadConfig(env, workspaceId), listAgents(env, workspaceId)]);
  const toolchain: ToolchainConfig = toolchainConfigOf(config);
  return { env, workspaceId, config: toolchain, agents, now };
}

/** One dispatch pass over a workspace's toolchain tasks. */
export async function dispatchWorkspace(env: Env, workspaceId: string, now = Date.now()): Promise<DispatchSummary> {
  const c = await contextFor(env, workspaceId, now);
  const summary: DispatchSummary = { started: 0, finished: 0, reminded: 0 };
  const working = await workingTasks(env, workspaceId);
  for (const task of working) {
    // One task's trouble (a session that cannot be reached) must not stop the others; the next pass retries it.
    const outcome = await watchTask(c, task).catch((err: unknown) => logFailure("watch", task.id, err));
    if (outcome === "finished") summary.finished++;
    if (outcome === "reminded") summary.reminded++;
  }
  const stillWorking = (await workingTasks(env, workspaceId)).length;
  const slots = Math.max(0, c.config.concurrency.max_working - stillWorking);
  if (!slots) return summary;
  const ready = await readyTasks(env, workspaceId, now, slots);
  const started = await Promise.all(ready.map((t) => startTask(c, t).catch((err: unknown) => logFailure("start", t.id, err))));
  summary.started = started.filter((s) => s === true).length;
  return summary;
}

/** Toolchain tasks as a task type the cron dispatches (registered in src/app/tasks.ts). */
export const toolchainTaskType: TaskType = {
  name: "toolchain",
  openWorkspaces: workspacesWithOpenTasks,
  dispatch: dispatchWorkspace,
};
