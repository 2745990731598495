/**
 * Finds the pull request a CI or deploy signal on a commit belongs to: the payload's own PR, else
 * the PR index (PRs seen in earlier webhooks), else — for CI failures only, since a deployment goes
 * to infra either way — Gitea's `GET /repos/{owner}/{repo}/commits/{sha}/pull`. An unreachable Gitea
 * is reported as an outage for the caller to route, not as "no PR".
 */
import type { Env } from "../../storage/env.ts";
import { GiteaError } from "../gitea/client.ts";
import type { ToolchainConfig } from "./config.ts";
import { giteaFor } from "./gitea-access.ts";
import { pullByHeadSha } from "./pr-index.ts";
import { pullFacts, type PullFacts, type Scenario } from "./scenarios.ts";

export type PullLookup =
  /** `fromGitea`: Gitea named it, so the index should learn it. */
  { pr: PullFacts | null; fromGitea: boolean; outage: null } | { pr: null; fromGitea: false; outage: GiteaError };

const none: PullLookup = { pr: null, fromGitea: false, outage: null };

export async function resolvePull(
  env: Env,
  workspaceId: string,
  config: ToolchainConfig,
  s: Extract<Scenario, { kind: "ci_failure" | "deploy_failure" }>,
): Promise<PullLookup> {
  if (s.pr) return { pr: s.pr, fromGitea: false, outage: null };
  const indexed = await pullByHeadSha(env, workspaceId, s.repo, s.sha);
  if (indexed) return { pr: indexed, fromGitea: false, outage: null };
  if (s.kind === "deploy_failure") return none;
  const gitea = await giteaFor(env, workspaceId, config);
  if (!gitea) return none;
  try {
    const pr = await gitea.commitPull(s.repo, s.sha);
    if (!pr.number || !pr.head?.ref || !pr.head.sha || !pr.base?.ref) return none;
    const facts = pullFacts(s.repo, pr.number, {
      title: pr.title ?? "",
      html_url: pr.html_url,
      state: pr.state,
      merged: pr.merged,
      user: pr.user ? { login: pr.user.login } : null,
      head: { ref: pr.head.ref, sha: pr.head.sha },
      base: { ref: pr.base.ref, sha: pr.base.sha ?? "" },
      requested_reviewers: [],
    });
    return { pr: facts, fromGitea: true, outage: null };
  } catch (err) {
    if (!(err instanceof GiteaError)) throw err;
    if (err.kind === "infrastructure") return { pr: null, fromGitea: false, outage: err };
    // 404 and other business answers: Gitea knows no PR for this commit.
    return none;
  }
}
