/**
 * Where a failed task goes (docs/toolchain.md, "Failure routing"). Business failure (the run ended
 * without verifiable work) → a Gitea comment @mentioning the assignee and a bounded retry; system
 * failure (crash, timeout, attempts used up, or business failures in a row) → a Gitea issue assigned to
 * the supervisor; infrastructure failure (Gitea unreachable) → an `infrastructure_failure` task for the
 * infra agent, created directly, and a retry (a system failure as well once the attempts are used up).
 * No route recurses: infrastructure tasks and supervisor escalations are never routed again. Pure: the
 * task, the cause and the config in; the decision out.
 */
import type { Agent } from "../tasks/agents.ts";
import type { ToolchainConfig } from "./config.ts";
import { noticeMarker } from "./markers.ts";
import {
  BUSINESS_FAILURE_COMMENT,
  BUSINESS_FAILURE_COMMENT_FINAL,
  SYSTEM_FAILURE_ISSUE_BODY,
  SYSTEM_FAILURE_ISSUE_TITLE,
} from "./prompt-texts.ts";
import { fill } from "../tasks/handler.ts";
import type { FailureKind, ToolchainTask } from "./task-model.ts";

export type FailureCause =
  { kind: "business"; reason: string } | { kind: "system"; reason: string } | { kind: "infrastructure"; reason: string; operation: string };

export interface GiteaComment {
  repo: string;
  number: number;
  body: string;
}

export interface GiteaIssue {
  repo: string;
  title: string;
  body: string;
  assignee: string;
}

export interface FailureDecision {
  /** The kind the task is failed (or retried) as; business failures may escalate to system. */
  kind: FailureKind;
  reason: string;
  /** Put the task back to pending (attempt n+1) rather than failing it. */
  retry: boolean;
  comment: GiteaComment | null;
  issue: GiteaIssue | null;
  /** Create (or add to) the open infrastructure task. */
  infraTask: { operation: string; error: string } | null;
  /** Why a route was not taken, for the history. */
  notRouted: string | null;
}

export interface FailureContext {
  task: ToolchainTask;
  cause: FailureCause;
  config: ToolchainConfig;
  assignee: Agent | null;
  supervisor: Agent | null;
}

function systemDecision(ctx: FailureContext, reason: string): FailureDecision {
  const { task, supervisor } = ctx;
  const base: FailureDecision = { kind: "system", reason, retry: false, comment: null, issue: null, infraTask: null, notRouted: null };
  if (task.actionType === "infrastructure_failure") return { ...base, notRouted: "infrastructure tasks are never routed again" };
  if (task.originTaskId) return { ...base, notRouted: `this task is already the escalation of task ${task.originTaskId}` };
  if (!supervisor) return { ...base, notRouted: "no enabled supervisor agent" };
  if (!task.repo) return { ...base, notRouted: "the task has no repository to open an issue in" };
  const vars = {
    task_id: task.id,
    title: task.title,
    action_type: task.actionType,
    agent_id: task.agentId,
    related: task.number ? `${task.repo}#${task.number}` : task.repo,
    attempts: task.attempts,
    reason,
    marker: noticeMarker("system-failure", task.id),
  };
  return {
    ...base,
    issue: {
      repo: task.repo,
      title: fill(SYSTEM_FAILURE_ISSUE_TITLE, vars).slice(0, 250),
      body: fill(SYSTEM_FAILURE_ISSUE_BODY, vars),
      assignee: supervisor.giteaUsername,
    },
  };
}

export function decideFailure(ctx: FailureContext): FailureDecision {
  const { task, cause, config, assignee } = ctx;
  const attemptsLeft = task.attempts < config.retry.max_attempts;
  switch (cause.kind) {
    case "system":
      return systemDecision(ctx, cause.reason);
    case "infrastructure": {
      const base: FailureDecision = {
        kind: "infrastructure",
        reason: cause.reason,
        retry: false,
        comment: null,
        issue: null,
        infraTask: null,
        notRouted: null,
      };
      if (task.actionType === "infrastructure_failure") return { ...base, notRouted: "infrastructure tasks are never routed again" };
      const infraTask = { operation: cause.operation, error: cause.reason };
      if (attemptsLeft) return { ...base, retry: true, infraTask };
      // Attempts used up: a system failure for the supervisor too, besides reporting the outage.
      return {
        ...systemDecision(
          ctx,
          `${task.attempts} of ${config.retry.max_attempts} attempts used, the last ended by an outage: ${cause.reason}`,
        ),
        infraTask,
      };
    }
    case "business": {
      const failures = task.businessFailures + 1;
      const escalate = failures >= config.retry.business_failures_before_system || !attemptsLeft;
      const vars = {
        assignee: assignee?.giteaUsername ?? task.agentId,
        task_id: task.id,
        action_type: task.actionType,
        title: task.title,
        reason: cause.reason,
        next_attempt: task.attempts + 1,
        max_attempts: config.retry.max_attempts,
        marker: noticeMarker("business-failure", task.id),
      };
      const comment =
        task.repo && task.number && assignee
          ? { repo: task.repo, number: task.number, body: fill(escalate ? BUSINESS_FAILURE_COMMENT_FINAL : BUSINESS_FAILURE_COMMENT, vars) }
          : null;
      const noComment = comment ? null : "no pull request or issue to comment on";
      if (!escalate)
        return { kind: "business", reason: cause.reason, retry: true, comment, issue: null, infraTask: null, notRouted: noComment };
      const why = `${failures} business failure(s)${attemptsLeft ? "" : `, ${task.attempts} of ${config.retry.max_attempts} attempts used`}: ${cause.reason}`;
      const system = systemDecision(ctx, why);
      return { ...system, comment, notRouted: [noComment, system.notRouted].filter(Boolean).join("; ") || null };
    }
  }
}
