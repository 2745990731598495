/**
 * Infrastructure failures (Gitea unreachable) become one open `infrastructure_failure` task for the
 * infra agent, created directly in D1 — never through Gitea, which is what is broken. While such a
 * task is open, further failures are added to it as observations instead of piling up new tasks.
 */
import type { Env } from "../../storage/env.ts";
import type { Agent } from "../tasks/agents.ts";
import type { ToolchainConfig } from "./config.ts";
import { infraAgentOf } from "./routing.ts";
import { draftInfraTask, type TaskDraft } from "./task-drafts.ts";
import { newTaskId, openTaskByDedupeKey } from "./task-store.ts";
import { SYSTEM_AUTHOR } from "./verification.ts";

export interface InfraFailure {
  operation: string;
  error: string;
  originTaskId: string | null;
  originTitle: string;
}

export type InfraRoute =
  /** No infrastructure task is open: create this one. */
  | { kind: "new"; draft: TaskDraft }
  /** One is open: add this observation to it (the caller writes it, with whatever else it writes). */
  | { kind: "add"; taskId: string; observation: { author: string; commentType: "observation"; body: string } }
  | { kind: "none"; reason: string };

const INFRA_KEY = "infrastructure_failure:gitea";

/** Where an outage goes. Reads only: the caller writes the new task or the observation. */
export async function routeInfraFailure(
  env: Env,
  workspaceId: string,
  config: ToolchainConfig,
  agents: Agent[],
  f: InfraFailure,
): Promise<InfraRoute> {
  const open = await openTaskByDedupeKey(env, workspaceId, INFRA_KEY);
  if (open) {
    const body = `Gitea still unreachable: ${f.operation}: ${f.error}${f.originTaskId ? ` (task ${f.originTaskId})` : ""}`;
    return { kind: "add", taskId: open.id, observation: { author: SYSTEM_AUTHOR, commentType: "observation", body } };
  }
  const agent = infraAgentOf(agents, config.routing);
  if (!agent) return { kind: "none", reason: "no enabled infra agent" };
  return { kind: "new", draft: draftInfraTask(newTaskId(), agent, { giteaUrl: config.gitea_base_url ?? "(not configured)", ...f }) };
}
