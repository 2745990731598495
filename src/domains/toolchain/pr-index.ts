/**
 * The index of pull requests seen in webhooks (repo, number, head sha, author…), so that a commit
 * status or workflow event is routed to its PR's author without asking Gitea. When the index has no
 * PR for a commit, Gitea's `GET /repos/{owner}/{repo}/commits/{sha}/pull` is the fallback.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { pullRequestIndex } from "../../storage/db/schema.ts";
import type { PullFacts } from "./scenarios.ts";

/** Upsert statements for PR facts (run inside the intake's batch). */
export function pullUpsertStatements(env: Env, workspaceId: string, pulls: PullFacts[], now: number): D1PreparedStatement[] {
  // Prepared statements, not the query builder: webhook deliveries about PRs run them (docs/performance.md,
  // "Webhook intake"). The SQL names the table of storage/db/schema/toolchain.ts.
  return pulls.map((p) =>
    env.DB.prepare(
      `INSERT INTO pull_request_index (workspace_id, repo, number, head_sha, head_ref, base_ref, author, title, state, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)
       ON CONFLICT (workspace_id, repo, number) DO UPDATE SET head_sha = excluded.head_sha, head_ref = excluded.head_ref,
         base_ref = excluded.base_ref, author = excluded.author, title = excluded.title, state = excluded.state,
         updated_at = excluded.updated_at`,
    ).bind(workspaceId, p.repo, p.number, p.headSha, p.headRef, p.baseRef, p.author ?? "", p.title, p.state, now),
  );
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
