/**
 * The `GitHost` for a run's `git` command (domains/git/command.ts, docs/workspace.md "Git"): commits
 * are authored as the task's agent (its Gitea user name, e-mail from `toolchain.git.author_email`;
 * `beaver` outside a task), the workspace's (or the agent's) Gitea token goes only to the configured
 * Gitea's origin — as HTTP Basic credentials added per request, never in a URL or anything the model
 * reads — and other HTTPS remotes are reached without credentials through the egress-checked fetch.
 * A push is checked against the `toolchain.git` policy and Gitea's branch protection.
 */
import type { ToolContext } from "../../runtime/index.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import { outboundFetch } from "../../storage/outbound.ts";
import picomatch from "picomatch";
import { giteaClient } from "../gitea/client.ts";
import type { GitHost } from "../git/command.ts";
import { getAgent } from "../tasks/agent-store.ts";
import { toolchainConfigOf } from "./config.ts";
import { loadTask } from "./task-store.ts";
import { recordPush } from "./pushes.ts";

/** The author name outside a task (a chat session on the `code` tool set). */
const DEFAULT_AUTHOR = "beaver";

/** `owner/name` of a clone URL on the Gitea at `base` (`<base>/<owner>/<name>[.git]`), or null for another host. */
export function giteaRepoOf(remoteUrl: string, base: URL): string | null {
  let url: URL;
  try {
    url = new URL(remoteUrl);
  } catch {
    return null;
  }
  if (url.origin !== base.origin) return null;
  const prefix = base.pathname.replace(/\/+$/, "");
  if (!url.pathname.startsWith(`${prefix}/`)) return null;
  const parts = url.pathname
    .slice(prefix.length + 1)
    .replace(/\/+$/, "")
    .split("/");
  if (parts.length !== 2 || !parts[0] || !parts[1]) return null;
  return `${parts[0]}/${parts[1].replace(/\.git$/, "")}`;
}

export async function gitHostFor(ctx: ToolContext): Promise<GitHost> {
  const config = toolchainConfigOf(await loadConfig(ctx.env, ctx.workspaceId));
  const taskId = ctx.data.task_id;
  const task = typeof taskId === "string" ? await loadTask(ctx.env, ctx.workspaceId, taskId) : null;
  // Only the task's own session acts as its agent (toolchain/tool-context.ts has the same rule).
  const agent = task && task.sessionId === ctx.sessionId ? await getAgent(ctx.env, ctx.workspaceId, task.agentId) : null;
  const name = agent?.giteaUsername ?? DEFAULT_AUTHOR;
  const secretName = agent?.giteaTokenSecret ?? config.gitea_token_secret;
  const token = secretName ? await resolveSecret(ctx.env, ctx.workspaceId, secretName) : undefined;
  const base = config.gitea_base_url ? new URL(config.gitea_base_url) : null;
  const fetch = outboundFetch(ctx.env);
  const gitea = base
    ? giteaClient({ baseUrl: base.href, token, timeoutMs: config.timeouts.gitea_request_ms, signal: ctx.signal, fetch })
    : null;
  return {
    fetch,
    credentials: async (url) =>
      base && token && url.origin === base.origin ? { Authorization: `Basic ${btoa(`${name}:${token}`)}` } : null,
    author: { name, email: config.git.author_email.replaceAll("{agent}", name) },
    policy: { allowForcePush: config.git.allow_force_push, allowDefaultBranchPush: config.git.allow_default_branch_push },
    // `git clone owner/name`: the configured Gitea's repository (the task steps say so).
    shorthand: (spec) => (base ? `${base.href.replace(/\/+$/, "")}/${spec}.git` : null),
    async pushed({ remoteUrl, branch, commit }) {
      if (!task || !agent) return;
      await recordPush(ctx.env, ctx.workspaceId, task.id, ctx.runId, {
        remote: remoteUrl,
        repo: base ? giteaRepoOf(remoteUrl, base) : null,
        branch,
        commit,
      });
    },
    async isProtected(remoteUrl, branch) {
      const repo = base && gitea ? giteaRepoOf(remoteUrl, base) : null;
      if (!repo || !gitea) return false;
      // Gitea's rules name branches by glob (`release/*`), and protect a branch before it exists.
      const rules = await gitea.listBranchProtections(repo);
      return rules.some((rule) => {
        const pattern = rule.rule_name || rule.branch_name;
        return pattern ? picomatch.isMatch(branch, pattern) : false;
      });
    },
  };
}
