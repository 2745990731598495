/**
 * What a task pushed with `git`, and the check that it is still there (docs/toolchain.md, "Code
 * scenarios"). Each push the remote accepted during a task run is written to the task's history as
 * `git_pushed` (`recordPush`, called by the run's GitHost). When the run is over, a code scenario's
 * verification also looks at the outside world: for every branch on the configured Gitea this task
 * pushed to, the branch's head must be a commit this task pushed — so a report over a push that
 * never landed, or that someone else's push replaced, does not pass. `headVerdict` is the pure part.
 */
import type { Env } from "../../storage/env.ts";
import type { Agent } from "../tasks/agents.ts";
import type { ActionType } from "./scenarios.ts";
import type { ToolchainConfig } from "./config.ts";
import type { ToolchainTask } from "./task-model.ts";
import { addHistory, loadHistory } from "./task-store.ts";
import { giteaFor } from "./gitea-access.ts";
import { GiteaError } from "../gitea/client.ts";

/** Scenarios that change code: their runs get the workspace, the shell and git (tool set `toolchain_code`). */
export const CODE_ACTIONS: ReadonlySet<ActionType> = new Set<ActionType>([
  "review_result",
  "review_comment",
  "ci_failure",
  "issue_assigned",
]);

export interface Push {
  /** `owner/name` on the configured Gitea, or null for another remote. */
  repo: string | null;
  branch: string;
  commit: string;
}

export async function recordPush(
  env: Env,
  workspaceId: string,
  taskId: string,
  runId: string,
  push: Push & { remote: string },
): Promise<void> {
  await addHistory(env, workspaceId, taskId, "git_pushed", { run_id: runId, ...push });
}

/** Pushed branches as `repo\0branch` → the commits this task pushed there. */
function byBranch(pushes: readonly Push[]): Map<string, { repo: string; branch: string; commits: Set<string> }> {
  const out = new Map<string, { repo: string; branch: string; commits: Set<string> }>();
  for (const p of pushes) {
    if (!p.repo) continue;
    const key = `${p.repo}\u0000${p.branch}`;
    const entry = out.get(key) ?? { repo: p.repo, branch: p.branch, commits: new Set<string>() };
    entry.commits.add(p.commit);
    out.set(key, entry);
  }
  return out;
}

/** Pure: each pushed branch's current head (null: the branch is gone) against the commits pushed there. */
export function headVerdict(branches: readonly { repo: string; branch: string; commits: ReadonlySet<string>; head: string | null }[]): {
  passed: boolean;
  detail: string;
} {
  for (const b of branches) {
    if (b.head === null) return { passed: false, detail: `branch ${b.branch} of ${b.repo}, which this task pushed, no longer exists` };
    if (!b.commits.has(b.head))
      return {
        passed: false,
        detail: `the head of ${b.repo} ${b.branch} is ${b.head.slice(0, 12)}, not a commit this task pushed (${[...b.commits].map((c) => c.slice(0, 12)).join(", ")})`,
      };
  }
  return { passed: true, detail: `${branches.length} pushed branch head(s) verified` };
}

/** Null when the task is not a code scenario or pushed nothing to the configured Gitea; else the verdict. */
export async function pushedHeadCheck(
  env: Env,
  workspaceId: string,
  task: ToolchainTask,
  config: ToolchainConfig,
  agents: readonly Agent[],
): Promise<{ passed: boolean; detail: string } | null> {
  if (!CODE_ACTIONS.has(task.actionType)) return null;
  const history = await loadHistory(env, workspaceId, task.id);
  const pushes = history.filter((h) => h.event === "git_pushed").map((h) => h.detail as unknown as Push);
  const branches = byBranch(pushes);
  if (branches.size === 0) return null;
  const gitea = await giteaFor(env, workspaceId, config, agents.find((a) => a.id === task.agentId) ?? null);
  if (!gitea) return null;
  const heads = [];
  for (const b of branches.values()) {
    let head: string | null;
    try {
      head = (await gitea.getBranch(b.repo, b.branch)).commit?.id ?? null;
    } catch (err) {
      if (!(err instanceof GiteaError && err.status === 404)) throw err;
      head = null;
    }
    heads.push({ ...b, head });
  }
  return headVerdict(heads);
}
