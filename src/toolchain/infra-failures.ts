/**
 * Infrastructure failures (Gitea unreachable) become one open `infrastructure_failure` task for the
 * infra agent, created directly in D1 — never through Gitea, which is what is broken. While such a
 * task is open, further failures are added to it as observations instead of piling up new tasks.
 */
import type { Env } from "../env.ts";
import type { Agent } from "./agents.ts";
import type { ToolchainConfig } from "./config.ts";
import { infraAgentOf } from "./routing.ts";
import { draftInfraTask, type TaskDraft } from "./task-drafts.ts";
import { addComment, newTaskId, openTaskByDedupeKey } from "./task-store.ts";
import { SYSTEM_AUTHOR } from "./verification.ts";

export interface InfraFailure {
  operation: string;
  error: string;
  originTaskId: string | null;
  originTitle: string;
}

export type InfraRoute = { draft: TaskDraft; existingTaskId: null; notRouted: null } | { draft: null; existingTaskId: string | null; notRouted: string | null };

const INFRA_KEY = "infrastructure_failure:gitea";

/** Either a new task to insert, or the id of the open one the failure was added to, or why neither. */
export async function routeInfraFailure(env: Env, workspaceId: string, config: ToolchainConfig, agents: Agent[], f: InfraFailure, now = Date.now()): Promise<InfraRoute> {
  const open = await openTaskByDedupeKey(env, workspaceId, INFRA_KEY);
  if (open) {
    const body = `Gitea still unreachable: ${f.operation}: ${f.error}${f.originTaskId ? ` (task ${f.originTaskId})` : ""}`;
    await addComment(env, workspaceId, open.id, { author: SYSTEM_AUTHOR, commentType: "observation", body }, now);
    return { draft: null, existingTaskId: open.id, notRouted: null };
  }
  const agent = infraAgentOf(agents, config.routing);
  if (!agent) return { draft: null, existingTaskId: null, notRouted: "no enabled infra agent" };
  const draft = draftInfraTask(newTaskId(), agent, { giteaUrl: config.gitea_base_url ?? "(not configured)", ...f });
  return { draft, existingTaskId: null, notRouted: null };
}
