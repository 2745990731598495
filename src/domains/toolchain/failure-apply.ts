/**
 * Carries out a failure decision (`failure-routing.ts`) for a task whose run is over: first the
 * status change (the one transition that wins owns the failure — no double comments), then the
 * routes: a Gitea comment, a supervisor issue, an infrastructure task. Each route taken, skipped or
 * failed is written to the task's history. A route that fails because Gitea is down falls back to
 * the infrastructure route (one report per failure); nothing goes back through the route that failed.
 */
import type { Env } from "../../storage/env.ts";
import { GiteaError } from "../gitea/client.ts";
import type { Agent } from "../tasks/agents.ts";
import type { ToolchainConfig } from "./config.ts";
import { decideFailure, type FailureCause } from "./failure-routing.ts";
import { giteaFor } from "./gitea-access.ts";
import { routeInfraFailure } from "./infra-failures.ts";
import { supervisorOf } from "./routing.ts";
import { addComment, addHistory, insertOpenTask, transition } from "./task-store.ts";
import type { ToolchainTask } from "./task-model.ts";

export interface ApplyContext {
  env: Env;
  workspaceId: string;
  config: ToolchainConfig;
  agents: Agent[];
  now: number;
}

async function raiseInfra(c: ApplyContext, task: ToolchainTask, operation: string, error: string): Promise<void> {
  const failure = { operation, error, originTaskId: task.id, originTitle: task.title };
  let route = await routeInfraFailure(c.env, c.workspaceId, c.config, c.agents, failure);
  // Another failure opened the infrastructure task a moment ago (the open-task index refused ours):
  // route again, which adds to that one.
  for (let refused = 0; route.kind === "new" && !(await insertOpenTask(c.env, c.workspaceId, route.draft, c.now)); refused++) {
    if (refused === 2) throw new Error(`the infrastructure task for ${operation} was refused three times`);
    route = await routeInfraFailure(c.env, c.workspaceId, c.config, c.agents, failure);
  }
  switch (route.kind) {
    case "new":
      await addHistory(c.env, c.workspaceId, task.id, "routed_infrastructure", { infra_task_id: route.draft.id, operation }, c.now);
      break;
    case "add":
      await addComment(c.env, c.workspaceId, route.taskId, route.observation, c.now);
      await addHistory(
        c.env,
        c.workspaceId,
        task.id,
        "routed_infrastructure",
        { infra_task_id: route.taskId, operation, added_to_open_task: true },
        c.now,
      );
      break;
    case "none":
      await addHistory(c.env, c.workspaceId, task.id, "route_skipped", { route: "infrastructure", reason: route.reason }, c.now);
  }
}

type Outage = { operation: string; error: string };

/** Runs one Gitea route and records it; returns the outage when Gitea could not be reached. */
async function giteaRoute(
  c: ApplyContext,
  task: ToolchainTask,
  route: "comment" | "issue",
  run: () => Promise<Record<string, unknown>>,
): Promise<Outage | null> {
  try {
    const detail = await run();
    await addHistory(c.env, c.workspaceId, task.id, route === "comment" ? "routed_comment" : "routed_supervisor_issue", detail, c.now);
    return null;
  } catch (err) {
    if (!(err instanceof GiteaError)) throw err;
    await addHistory(
      c.env,
      c.workspaceId,
      task.id,
      "route_failed",
      { route, kind: err.kind, status: err.status, operation: err.operation, error: err.message },
      c.now,
    );
    return err.kind === "infrastructure" ? { operation: err.operation, error: err.message } : null;
  }
}

/** Fail (or send back for a retry) a working task, then take its failure routes. False if another dispatcher got there first. */
export async function applyFailure(c: ApplyContext, task: ToolchainTask, cause: FailureCause): Promise<boolean> {
  const assignee = c.agents.find((a) => a.id === task.agentId) ?? null;
  const supervisor = supervisorOf(c.agents, c.config.routing);
  const d = decideFailure({ task, cause, config: c.config, assignee, supervisor });
  const common = {
    failure_kind: d.kind,
    last_error: d.reason.slice(0, 2000),
    business_failures: cause.kind === "business" ? task.businessFailures + 1 : task.businessFailures,
  };
  const moved = d.retry
    ? await transition(c.env, c.workspaceId, task.id, {
        from: ["working"],
        to: "pending",
        set: { ...common, not_before: c.now + c.config.retry.backoff_ms, deadline_at: null, reminder_sent: 0 },
        event: "retry_scheduled",
        detail: { kind: d.kind, reason: d.reason, cause: cause.kind, next_attempt: task.attempts + 1 },
        now: c.now,
      })
    : await transition(c.env, c.workspaceId, task.id, {
        from: ["working"],
        to: "failed",
        set: { ...common, completed_at: c.now, deadline_at: null },
        event: "failed",
        detail: { kind: d.kind, reason: d.reason, cause: cause.kind },
        now: c.now,
      });
  if (!moved) return false;

  if (d.notRouted) await addHistory(c.env, c.workspaceId, task.id, "route_skipped", { reason: d.notRouted }, c.now);
  // An outage to report: the cause itself, or a Gitea route that could not reach Gitea (reported once).
  let outage: Outage | null = d.infraTask;
  if (d.comment || d.issue) {
    // Beaver's notices are posted with the workspace's token, not the failing agent's.
    const gitea = await giteaFor(c.env, c.workspaceId, c.config);
    if (!gitea) {
      await addHistory(c.env, c.workspaceId, task.id, "route_skipped", { reason: "no toolchain.gitea_base_url configured" }, c.now);
    } else {
      const comment = d.comment;
      if (comment) {
        const down = await giteaRoute(c, task, "comment", async () => {
          const res = await gitea.comment(comment.repo, comment.number, comment.body);
          return { repo: comment.repo, number: comment.number, comment_id: res.id ?? null };
        });
        outage ??= down;
      }
      const issue = d.issue;
      if (issue) {
        const down = await giteaRoute(c, task, "issue", async () => {
          const res = await gitea.createIssue(issue.repo, { title: issue.title, body: issue.body, assignees: [issue.assignee] });
          return { repo: issue.repo, issue_number: res.number ?? null, assignee: issue.assignee };
        });
        outage ??= down;
      }
    }
  }
  if (outage) await raiseInfra(c, task, outage.operation, outage.error);
  return true;
}
