/**
 * Beaver's Gitea client: the calls the toolchain makes, on top of `gitea-js` (a dependency-free,
 * fetch-based client generated from Gitea's own API description). Our `customFetch` adds what the
 * generated client lacks: a timeout on every request (and the run's abort signal), and one error
 * type that says whether a failure is the caller's business (4xx: wrong number, no permission…) or
 * the infrastructure's (network, timeout, 5xx, 429, garbage) — the split failure routing depends on.
 * What Gitea said reaches a run only as a short printable summary (kernel/upstream-text.ts).
 */
import { giteaApi, type Api, type ChangeFileOperation, type CreatePullReviewOptions, type MergePullRequestOption } from "gitea-js";
import type { FetchFn } from "../../storage/outbound.ts";
import { readTail, type TextTail } from "../../storage/outbound-body.ts";
import { summariseUpstreamText } from "../../kernel/upstream-text.ts";

export type GiteaErrorKind = "business" | "infrastructure";

export class GiteaError extends Error {
  readonly kind: GiteaErrorKind;
  /** HTTP status, or null when no response arrived (network error, timeout). */
  readonly status: number | null;
  /** `METHOD /path` of the failed call. */
  readonly operation: string;

  constructor(kind: GiteaErrorKind, status: number | null, operation: string, message: string) {
    super(message);
    this.name = "GiteaError";
    this.kind = kind;
    this.status = status;
    this.operation = operation;
  }
}

/** 4xx is the caller's problem, except 408/429 which say "try again later". */
export function kindOfStatus(status: number): GiteaErrorKind {
  return status >= 500 || status === 408 || status === 429 ? "infrastructure" : "business";
}

export interface GiteaClientOptions {
  baseUrl: string;
  token?: string;
  timeoutMs: number;
  /** Aborts in-flight requests (the run was cancelled). */
  signal?: AbortSignal;
  /** How requests leave Beaver (storage/outbound.ts); the runtime's fetch when absent. */
  fetch?: FetchFn;
}

/** Fields gitea-js puts in the request params that are not fetch options. */
const NON_FETCH_KEYS = ["format", "secure", "cancelToken", "baseUrl", "path", "query", "type"] as const;

function operationOf(input: RequestInfo | URL, init: RequestInit | undefined, baseUrl: string): string {
  const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
  const path = url.startsWith(baseUrl) ? url.slice(baseUrl.length) : url;
  return `${init?.method ?? "GET"} ${path.split("?")[0]}`;
}

function makeFetch(opts: GiteaClientOptions, apiBase: string): FetchFn {
  return async (input, init) => {
    const clean: Record<string, unknown> = { ...init };
    for (const k of NON_FETCH_KEYS) delete clean[k];
    const timeout = AbortSignal.timeout(opts.timeoutMs);
    const signal = opts.signal ? AbortSignal.any([timeout, opts.signal]) : timeout;
    const operation = operationOf(input, init, apiBase);
    try {
      return await (opts.fetch ?? fetch)(input, { ...(clean as RequestInit), signal });
    } catch (err) {
      const name = err instanceof Error ? err.name : "";
      const message =
        name === "TimeoutError" || timeout.aborted
          ? `timed out after ${opts.timeoutMs} ms`
          : summariseUpstreamText(err instanceof Error ? err.message : String(err));
      throw new GiteaError("infrastructure", null, operation, `Gitea unreachable (${operation}): ${message}`);
    }
  };
}

/** gitea-js throws the Response itself for non-2xx answers; turn everything into a GiteaError. */
async function call<T>(operation: string, run: () => Promise<{ data: T; error: unknown; status: number }>): Promise<T> {
  let res: { data: T; error: unknown; status: number };
  try {
    res = await run();
  } catch (err) {
    if (err instanceof GiteaError) throw err;
    if (err instanceof Response) {
      const detail = describeError((err as Response & { error?: unknown }).error);
      throw new GiteaError(
        kindOfStatus(err.status),
        err.status,
        operation,
        `Gitea answered ${err.status} to ${operation}${detail ? `: ${detail}` : ""}`,
      );
    }
    throw new GiteaError(
      "infrastructure",
      null,
      operation,
      `Gitea call ${operation} failed: ${summariseUpstreamText(err instanceof Error ? err.message : String(err))}`,
    );
  }
  // A 2xx whose body did not parse is not something the caller can fix.
  if (res.error) throw new GiteaError("infrastructure", res.status, operation, `Gitea sent an unreadable answer to ${operation}`);
  return res.data;
}

/** Gitea's JSON `message`, as a short printable summary: upstream text never reaches a run whole. */
function describeError(error: unknown): string {
  if (!error || typeof error !== "object") return "";
  const message = (error as { message?: unknown }).message;
  return typeof message === "string" ? summariseUpstreamText(message) : "";
}

export function splitRepo(repo: string): [owner: string, name: string] {
  const [owner, name] = repo.split("/");
  if (!owner || !name) throw new GiteaError("business", null, "split repo", `'${repo}' is not owner/name`);
  return [owner, name];
}

/** A file path for the URL: each segment encoded, slashes kept (Gitea's `{filepath}`). */
const encodePath = (path: string) => path.split("/").map(encodeURIComponent).join("/");
const seg = encodeURIComponent;

export type MergeMethod = MergePullRequestOption["Do"];
export type ReviewEvent = NonNullable<CreatePullReviewOptions["event"]>;
export type FileChange = ChangeFileOperation;

/** One Actions run, as `GET /repos/{owner}/{repo}/actions/runs` lists it (newer Gitea; gitea-js 1.23 has no types). */
export interface ActionRun {
  id: number;
  run_number?: number;
  head_sha?: string;
  html_url?: string;
  status?: string;
  conclusion?: string;
}

/** One job of a run (`GET …/actions/runs/{run}/jobs`). */
export interface ActionJob {
  id: number;
  run_id?: number;
  name?: string;
  status?: string;
  conclusion?: string;
}

export function giteaClient(opts: GiteaClientOptions) {
  const base = opts.baseUrl.replace(/\/+$/, "");
  const apiBase = `${base}/api/v1`;
  const apiFetch = makeFetch(opts, apiBase);
  const api: Api<unknown> = giteaApi(base, { token: opts.token, customFetch: apiFetch });
  const r = api.repos;
  /** A GET gitea-js has no method for (Actions, newer than its 1.23 types), through the same fetch and errors. */
  const getJson = <T>(operation: string, path: string, query?: Record<string, string | number>) =>
    call(operation, () => api.request<T, unknown>({ path, method: "GET", query, secure: true, format: "json" }));

  return {
    baseUrl: base,
    getPull: (repo: string, number: number) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/pulls/${number}`, () => r.repoGetPullRequest(seg(o), seg(n), number));
    },
    getPullDiff: (repo: string, number: number) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/pulls/${number}.diff`, () =>
        r.repoDownloadPullDiffOrPatch(seg(o), seg(n), number, "diff", undefined, { format: "text" }),
      );
    },
    listPullFiles: (repo: string, number: number, page = 1, limit = 50) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/pulls/${number}/files`, () => r.repoGetPullRequestFiles(seg(o), seg(n), number, { page, limit }));
    },
    getContents: (repo: string, path: string, ref?: string) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/contents/${path}`, () =>
        r.repoGetContents(seg(o), seg(n), encodePath(path), ref ? { ref } : undefined),
      );
    },
    commitPull: (repo: string, sha: string) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/commits/${sha}/pull`, () => r.repoGetCommitPullRequest(seg(o), seg(n), seg(sha)));
    },
    comment: (repo: string, number: number, body: string) => {
      const [o, n] = splitRepo(repo);
      return call(`POST /repos/${repo}/issues/${number}/comments`, () => r.issueCreateComment(seg(o), seg(n), number, { body }));
    },
    submitReview: (repo: string, number: number, review: { event: ReviewEvent; body: string; commitId?: string }) => {
      const [o, n] = splitRepo(repo);
      const body: CreatePullReviewOptions = {
        event: review.event,
        body: review.body,
        ...(review.commitId ? { commit_id: review.commitId } : {}),
      };
      return call(`POST /repos/${repo}/pulls/${number}/reviews`, () => r.repoCreatePullReview(seg(o), seg(n), number, body));
    },
    merge: (repo: string, number: number, m: { method: MergeMethod; message?: string; deleteBranch?: boolean }) => {
      const [o, n] = splitRepo(repo);
      const body: MergePullRequestOption = {
        Do: m.method,
        ...(m.message ? { MergeMessageField: m.message } : {}),
        ...(m.deleteBranch !== undefined ? { delete_branch_after_merge: m.deleteBranch } : {}),
      };
      return call(`POST /repos/${repo}/pulls/${number}/merge`, () =>
        r.repoMergePullRequest(seg(o), seg(n), number, body, { format: "text" }),
      );
    },
    getBranch: (repo: string, name: string) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/branches/${name}`, () => r.repoGetBranch(seg(o), seg(n), seg(name)));
    },
    listBranchProtections: (repo: string) => {
      const [o, n] = splitRepo(repo);
      return call(`GET /repos/${repo}/branch_protections`, () => r.repoListBranchProtection(seg(o), seg(n)));
    },
    createBranch: (repo: string, name: string, from: string) => {
      const [o, n] = splitRepo(repo);
      return call(`POST /repos/${repo}/branches`, () => r.repoCreateBranch(seg(o), seg(n), { new_branch_name: name, old_ref_name: from }));
    },
    changeFiles: (repo: string, change: { branch: string; newBranch?: string; message: string; files: FileChange[] }) => {
      const [o, n] = splitRepo(repo);
      return call(`POST /repos/${repo}/contents`, () =>
        r.repoChangeFiles(seg(o), seg(n), {
          branch: change.branch,
          ...(change.newBranch ? { new_branch: change.newBranch } : {}),
          message: change.message,
          files: change.files,
        }),
      );
    },
    createPull: (repo: string, pr: { title: string; head: string; base: string; body?: string }) => {
      const [o, n] = splitRepo(repo);
      return call(`POST /repos/${repo}/pulls`, () =>
        r.repoCreatePullRequest(seg(o), seg(n), { title: pr.title, head: pr.head, base: pr.base, body: pr.body ?? "" }),
      );
    },
    /** Actions runs, newest first (Gitea's `getWorkflowRuns`; test/fixtures/gitea/swagger.actions.json). */
    listActionRuns: (repo: string, q: { headSha?: string; limit?: number } = {}) => {
      const [o, n] = splitRepo(repo);
      const query = { ...(q.headSha ? { head_sha: q.headSha } : {}), limit: q.limit ?? 50 };
      return getJson<{ workflow_runs?: ActionRun[] | null }>(
        `GET /repos/${repo}/actions/runs`,
        `/repos/${seg(o)}/${seg(n)}/actions/runs`,
        query,
      );
    },
    /** The jobs of one run (`listWorkflowRunJobs`). */
    listRunJobs: (repo: string, runId: number) => {
      const [o, n] = splitRepo(repo);
      return getJson<{ jobs?: ActionJob[] | null }>(
        `GET /repos/${repo}/actions/runs/${runId}/jobs`,
        `/repos/${seg(o)}/${seg(n)}/actions/runs/${runId}/jobs`,
        { limit: 50 },
      );
    },
    /** The last `maxBytes` of a job's log (`downloadActionsRunJobLogs`), streamed: the whole log is never held. */
    jobLogTail: async (repo: string, jobId: number, maxBytes: number): Promise<TextTail> => {
      const [o, n] = splitRepo(repo);
      const operation = `GET /repos/${repo}/actions/jobs/${jobId}/logs`;
      const res = await apiFetch(`${apiBase}/repos/${seg(o)}/${seg(n)}/actions/jobs/${jobId}/logs`, {
        headers: opts.token ? { Authorization: `Bearer ${opts.token}` } : {},
      });
      if (!res.ok) {
        await res.body?.cancel();
        throw new GiteaError(kindOfStatus(res.status), res.status, operation, `Gitea answered ${res.status} to ${operation}`);
      }
      return readTail(res.body, maxBytes);
    },
    createIssue: (repo: string, issue: { title: string; body?: string; assignees?: string[] }) => {
      const [o, n] = splitRepo(repo);
      return call(`POST /repos/${repo}/issues`, () =>
        r.issueCreateIssue(seg(o), seg(n), {
          title: issue.title,
          body: issue.body ?? "",
          ...(issue.assignees?.length ? { assignees: issue.assignees } : {}),
        }),
      );
    },
  };
}

export type GiteaClient = ReturnType<typeof giteaClient>;
