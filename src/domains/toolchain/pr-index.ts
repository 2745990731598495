/**
 * The index of pull requests seen in webhooks (repo, number, head sha, author…), so that a commit
 * status or workflow event is routed to its PR's author without asking Gitea. When the index has no
 * PR for a commit, Gitea's `GET /repos/{owner}/{repo}/commits/{sha}/pull` is the fallback.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb, type Db } from "../../storage/db/client.ts";
import { pullRequestIndex } from "../../storage/db/schema.ts";
import type { PullFacts } from "./scenarios.ts";

/** Upsert statements for PR facts (run inside the intake's batch). */
export function pullUpsertQueries(db: Db, workspaceId: string, pulls: PullFacts[], now: number) {
  return pulls.map((p) => {
    const values = {
      workspaceId,
      repo: p.repo,
      number: p.number,
      headSha: p.headSha,
      headRef: p.headRef,
      baseRef: p.baseRef,
      author: p.author ?? "",
      title: p.title,
      state: p.state,
      updatedAt: now,
    };
    const { workspaceId: _w, repo: _r, number: _n, ...set } = values;
    return db
      .insert(pullRequestIndex)
      .values(values)
      .onConflictDoUpdate({ target: [pullRequestIndex.workspaceId, pullRequestIndex.repo, pullRequestIndex.number], set });
  });
}

export async function pullByHeadSha(env: Env, workspaceId: string, repo: string, sha: string): Promise<PullFacts | null> {
  const row = await makeDb(env.DB)
    .select()
    .from(pullRequestIndex)
    .where(and(eq(pullRequestIndex.workspaceId, workspaceId), eq(pullRequestIndex.repo, repo), eq(pullRequestIndex.headSha, sha)))
    .get();
  if (!row) return null;
  return {
    repo: row.repo,
    number: row.number,
    title: row.title,
    url: null,
    author: row.author || null,
    headRef: row.headRef,
    headSha: row.headSha,
    baseRef: row.baseRef,
    state: row.state,
    requestedReviewers: [],
    size: { changedFiles: null, additions: null, deletions: null },
  };
}
