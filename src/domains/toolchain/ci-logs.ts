/**
 * `gitea_ci_logs`: the failed job's log for a `ci_failure` task (issue 21; docs/toolchain.md, "Code
 * scenarios"). A Gitea Actions commit status's `target_url` is the job's web page,
 * `{repo}/actions/runs/{run}/jobs/{job}`, where `{run}` is the run's number in the repository and
 * `{job}` the job's position in the run; the API wants ids, so the tool finds the run among the
 * repository's runs (`getWorkflowRuns`, filtered by the commit), lists its jobs and reads the failed
 * ones' logs (`listWorkflowRunJobs`, `downloadActionsRunJobLogs`; the operations are in
 * test/fixtures/gitea/swagger.actions.json). Only the log's tail reaches the model, bounded by
 * `ci_log_tail_bytes` and with secret-shaped values redacted. Gitea 1.22 and older have no such API
 * and answer 404: that is a tool error saying so, not a guess.
 */
import { z } from "zod";
import { defineTool, fail, type ToolResult } from "../../runtime/index.ts";
import { redactSecrets } from "../../kernel/prompt-guard.ts";
import { limitsOf } from "../../storage/limits.ts";
import { GiteaError, type ActionJob, type ActionRun, type GiteaClient } from "../gitea/client.ts";
import { Repo, withGitea } from "./gitea-tools.ts";

/** At most this many failed jobs are read; the tail budget is shared between them. */
const MAX_JOBS = 3;

export interface ActionsRef {
  repo: string;
  run: number;
  job: number | null;
}

/** `…/{owner}/{repo}/actions/runs/{run}[/jobs/{job}]` (any host, any sub-path) → its parts, else null. */
export function parseActionsUrl(url: string): ActionsRef | null {
  let path: string;
  try {
    path = new URL(url).pathname;
  } catch {
    return null;
  }
  const m = /\/([^/]+)\/([^/]+)\/actions\/runs\/(\d+)(?:\/jobs\/(\d+))?\/?$/.exec(path);
  if (!m) return null;
  return {
    repo: `${decodeURIComponent(m[1]!)}/${decodeURIComponent(m[2]!)}`,
    run: Number(m[3]),
    job: m[4] === undefined ? null : Number(m[4]),
  };
}

const failed = (x: { status?: string; conclusion?: string }) => x.conclusion === "failure" || x.status === "failure";
const stateOf = (x: { status?: string; conclusion?: string }) => x.conclusion || x.status || "unknown";

/** The jobs to read: the one the URL names (by position in the run, as Gitea's web pages count, or by id), else the failed ones. */
export function pickJobs(jobs: ActionJob[], job: number | null): ActionJob[] {
  const ordered = [...jobs].sort((a, b) => a.id - b.id);
  if (job !== null) {
    const named = ordered[job] ?? ordered.find((j) => j.id === job);
    return named ? [named] : [];
  }
  return ordered.filter(failed).slice(0, MAX_JOBS);
}

function noActionsApi(err: GiteaError): ToolResult {
  return fail(
    "gitea_no_actions_api",
    `Gitea answered 404 to ${err.operation}: this Gitea server has no Actions log API (Gitea 1.22 and older lack it), or the repository does not exist. Read the failing check's page or its description instead.`,
  );
}

async function findRun(g: GiteaClient, repo: string, ref: ActionsRef | null, sha: string | undefined): Promise<ActionRun[] | ToolResult> {
  const runs = (await g.listActionRuns(repo, { headSha: sha })).workflow_runs ?? [];
  const forSha = sha ? ` for commit ${sha.slice(0, 12)}` : "";
  if (ref) {
    const run = runs.find((r) => r.run_number === ref.run) ?? runs.find((r) => r.id === ref.run);
    return run ? [run] : fail("ci_run_not_found", `No Actions run #${ref.run} among the latest ${runs.length} runs of ${repo}${forSha}.`);
  }
  const bad = runs.filter(failed);
  if (bad.length) return bad.slice(0, 1);
  const seen = runs.map((r) => `#${r.run_number ?? r.id} ${stateOf(r)}`).join(", ");
  return fail("ci_run_not_found", `No failed Actions run${forSha} in ${repo}${seen ? ` (runs: ${seen})` : ""}.`);
}

const utf8Bytes = (text: string) => new TextEncoder().encode(text).byteLength;

async function readLogs(g: GiteaClient, repo: string, jobs: ActionJob[], budget: number, header: string): Promise<string> {
  const each = Math.max(1024, Math.floor(budget / jobs.length));
  const parts = [header];
  for (const job of jobs) {
    const tail = await g.jobLogTail(repo, job.id, each);
    const size = tail.truncated ? `the last ${utf8Bytes(tail.text)} of ${tail.totalBytes} bytes` : `all ${tail.totalBytes} bytes`;
    parts.push(
      `--- job "${job.name ?? job.id}" (id ${job.id}, ${stateOf(job)}): ${size} of its log ---`,
      redactSecrets(tail.text).trimEnd(),
    );
  }
  return parts.join("\n");
}

export const giteaCiLogsTool = defineTool({
  name: "gitea_ci_logs",
  outward: true,
  description:
    "Read the log of a failed Gitea Actions job: the end of the log (where the error usually is), with secrets redacted. " +
    "Pass the failing check's link (target_url, …/actions/runs/{run}/jobs/{job}) or the commit sha; job_id reads one job directly.",
  input: z.strictObject({
    repo: Repo,
    target_url: z.string().url().max(2_000).optional().describe("The failing commit status's link (the check's target_url)"),
    sha: z
      .string()
      .regex(/^[0-9a-f]{7,64}$/, "must be a hex commit sha")
      .optional()
      .describe("The commit CI failed on"),
    job_id: z.number().int().positive().optional().describe("An Actions job id, when already known"),
  }),
  idempotent: true,
  readOnly: true,
  execute: ({ repo, target_url, sha, job_id }, ctx) => {
    const ref = target_url ? parseActionsUrl(target_url) : null;
    if (target_url && !ref)
      return Promise.resolve(
        fail(
          "invalid_input",
          `target_url ${target_url} is not a Gitea Actions run link (…/{owner}/{repo}/actions/runs/{run}[/jobs/{job}])`,
        ),
      );
    if (ref && ref.repo !== repo) return Promise.resolve(fail("invalid_input", `target_url is a run of ${ref.repo}, not of ${repo}`));
    if (!ref && !sha && !job_id) return Promise.resolve(fail("invalid_input", "Give target_url, sha or job_id"));
    const budget = limitsOf(ctx.env).ci_log_tail_bytes;
    return withGitea(ctx, async (g) => {
      try {
        if (job_id) return await readLogs(g, repo, [{ id: job_id }], budget, `Log of job ${job_id} in ${repo}:`);
        const runs = await findRun(g, repo, ref, sha);
        if (!Array.isArray(runs)) return runs;
        const run = runs[0]!;
        const jobs = (await g.listRunJobs(repo, run.id)).jobs ?? [];
        const picked = pickJobs(jobs, ref?.job ?? null);
        const label = `run #${run.run_number ?? run.id} (id ${run.id}, ${stateOf(run)}${run.head_sha ? `, commit ${run.head_sha.slice(0, 12)}` : ""})`;
        if (!picked.length) {
          const all = jobs.map((j) => `"${j.name ?? j.id}" ${stateOf(j)}`).join(", ") || "none";
          const what = ref?.job != null ? `no job ${ref.job}` : "no failed job";
          return fail("ci_job_not_found", `${repo} ${label} has ${what}; its jobs: ${all}.`);
        }
        return await readLogs(g, repo, picked, budget, `${repo} ${label}:`);
      } catch (err) {
        if (!(err instanceof GiteaError) || err.status !== 404) throw err;
        // A run and its jobs were listed, so the API exists: the log itself is gone (expired) or not written yet.
        if (!job_id && err.operation.endsWith("/logs"))
          return fail("ci_log_not_found", `Gitea answered 404 to ${err.operation}: the job's log has expired or was not written yet.`);
        return noActionsApi(err);
        throw err;
      }
    });
  },
});
