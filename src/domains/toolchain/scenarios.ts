/**
 * Turns one Gitea webhook (its `X-Gitea-Event-Type` and parsed body) into the toolchain scenarios it
 * stands for — the ten action types of docs/toolchain.md, "Scenarios, action types and `must_haves`" —
 * or a reason to ignore it. Pure: no storage, no Gitea calls.
 * A CI or deploy event on a commit carries the PR only when the payload has it; the intake resolves
 * the rest through the pull-request index, else Gitea (`resolve-pull.ts`).
 */
import type { ZodType } from "zod";
import {
  CommitStatusPayloadSchema,
  IssueCommentPayloadSchema,
  IssuePayloadSchema,
  PullRequestPayloadSchema,
  WorkflowJobPayloadSchema,
  WorkflowRunPayloadSchema,
  loginOf,
  type GiteaPullRequest,
} from "../gitea/webhook-payloads.ts";
import { zodIssues } from "../../kernel/errors.ts";
import { BEAVER_MARKER } from "./markers.ts";

export type ActionType =
  | "review_request"
  | "review_updated"
  | "review_result"
  | "review_comment"
  | "ci_failure"
  | "issue_assigned"
  | "deploy_failure"
  | "mention"
  | "review_merged"
  | "infrastructure_failure";

/** What Beaver remembers about a pull request (the PR index row, minus bookkeeping). */
export interface PullFacts {
  repo: string;
  number: number;
  title: string;
  url: string | null;
  author: string | null;
  headRef: string;
  headSha: string;
  baseRef: string;
  state: string;
  requestedReviewers: string[];
  /** Size of the change as Gitea reports it in the webhook (null when unknown, e.g. from the PR index). */
  size: PullSize;
}

export interface PullSize {
  changedFiles: number | null;
  additions: number | null;
  deletions: number | null;
}

export type RiskLevel = "low" | "medium" | "high" | "unknown";

/**
 * How closely a reviewer should look (the `risk_level` in a review request's context), from the size
 * of the change alone: more than 20 files or 500 changed lines is high, more than 5 files or 100
 * lines medium, anything smaller low.
 */
export function riskLevelOf(size: PullSize): RiskLevel {
  if (size.changedFiles === null || size.additions === null || size.deletions === null) return "unknown";
  const lines = size.additions + size.deletions;
  if (size.changedFiles > 20 || lines > 500) return "high";
  if (size.changedFiles > 5 || lines > 100) return "medium";
  return "low";
}

/** A CI/deploy signal on a commit: a commit status, a workflow job or a workflow run. */
export interface CheckFacts {
  source: "status" | "workflow_job" | "workflow_run";
  name: string;
  state: string;
  description: string | null;
  targetUrl: string | null;
  failedSteps: string[];
}

export type Scenario =
  | { kind: "review_request"; pr: PullFacts; trigger: "opened" | "reopened" | "review_requested"; requested: string | null }
  | { kind: "review_updated"; pr: PullFacts; newSha: string }
  | { kind: "review_result"; pr: PullFacts; result: "APPROVED" | "REQUEST_CHANGES"; reviewer: string | null; reviewBody: string }
  | { kind: "review_comment"; pr: PullFacts; reviewer: string | null; reviewBody: string }
  | { kind: "ci_failure"; repo: string; sha: string; branch: string | null; pr: PullFacts | null; check: CheckFacts }
  | { kind: "deploy_failure"; repo: string; sha: string; branch: string | null; pr: PullFacts | null; check: CheckFacts }
  | {
      kind: "issue_assigned";
      repo: string;
      issue: { number: number; title: string; body: string; url: string | null; labels: string[] };
      assignees: string[];
      defaultBranch: string;
    }
  | {
      kind: "mention";
      repo: string;
      number: number;
      isPull: boolean;
      sourceType: "issue_comment" | "pull_request_comment" | "review";
      url: string | null;
      title: string;
      commenter: string | null;
      body: string;
      mentioned: string[];
    }
  | { kind: "review_merged"; pr: PullFacts; mergedBy: string | null };

export interface Classified {
  /** Scenarios in priority order (a review with an @mention yields the review first). */
  scenarios: Scenario[];
  /** Who caused the event (an agent never gets a task for its own action). */
  actor: string | null;
  repo: string;
  action: string | null;
  /** PR facts to upsert into the index. */
  pulls: PullFacts[];
  /** Why nothing is to be done, when `scenarios` is empty. */
  ignored: string | null;
}

/** The payload does not have the shape its event type promises (→ 400 with the field path). */
export class PayloadError extends Error {
  readonly details: { path: string; message: string }[];
  constructor(message: string, details: { path: string; message: string }[] = []) {
    super(message);
    this.name = "PayloadError";
    this.details = details;
  }
}

/** An event type Beaver does not handle at all (→ 202 ignored). */
export class UnsupportedEventError extends Error {
  constructor(readonly eventType: string) {
    super(`Event type '${eventType}' is not handled by the toolchain`);
    this.name = "UnsupportedEventError";
  }
}

export interface ClassifyOptions {
  /** Compiled `toolchain.deploy_pattern`. */
  deployPattern: RegExp;
}

const FAILED_STATES = new Set(["failure", "error"]);
const FAILED_CONCLUSIONS = new Set(["failure", "failed", "timed_out", "startup_failure"]);

function parse<T>(schema: ZodType<T>, body: unknown, eventType: string): T {
  const result = schema.safeParse(body);
  if (!result.success) {
    const details = zodIssues(result.error);
    throw new PayloadError(`Payload of '${eventType}' is invalid: ${details[0]?.path}: ${details[0]?.message}`, details);
  }
  return result.data;
}

export function pullFacts(repo: string, number: number, pr: GiteaPullRequest): PullFacts {
  return {
    repo,
    number,
    title: pr.title,
    url: pr.html_url ?? null,
    author: loginOf(pr.user) ?? null,
    headRef: pr.head.ref,
    headSha: pr.head.sha,
    baseRef: pr.base.ref,
    state: pr.merged ? "merged" : (pr.state ?? "open"),
    requestedReviewers: (pr.requested_reviewers ?? []).map(loginOf).filter((n): n is string => Boolean(n)),
    size: { changedFiles: pr.changed_files ?? null, additions: pr.additions ?? null, deletions: pr.deletions ?? null },
  };
}

/** `@name` mentions in a text, lower-cased and unique; e-mail addresses and paths are not mentions. */
export function extractMentions(text: string): string[] {
  const out = new Set<string>();
  const re = /(^|[^\w@/.\x60-])@([A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9_])?)/g;
  for (const m of text.matchAll(re)) out.add(m[2]!.toLowerCase());
  return [...out];
}

function mentionScenario(
  base: Omit<Extract<Scenario, { kind: "mention" }>, "kind" | "mentioned">,
): Extract<Scenario, { kind: "mention" }> | null {
  // Beaver's own notices (failure comments, supervisor issues) mention people on purpose; they are
  // already routed directly and must not come back as new work.
  if (base.body.includes(BEAVER_MARKER)) return null;
  const mentioned = extractMentions(base.body);
  return mentioned.length ? { kind: "mention", ...base, mentioned } : null;
}

function done(
  repo: string,
  action: string | null,
  actor: string | null,
  scenarios: Scenario[],
  pulls: PullFacts[],
  reasonIfNone: string,
): Classified {
  return { repo, action, actor, scenarios, pulls, ignored: scenarios.length ? null : reasonIfNone };
}

function classifyPullRequest(eventType: string, body: unknown): Classified {
  const p = parse(PullRequestPayloadSchema, body, eventType);
  const repo = p.repository.full_name;
  const pr = pullFacts(repo, p.pull_request.number ?? p.number, p.pull_request);
  const actor = loginOf(p.sender) ?? null;
  const scenarios: Scenario[] = [];
  const reviewBody = p.review?.content ?? "";
  const reviewer = actor;

  switch (eventType) {
    case "pull_request":
      if (p.action === "opened" || p.action === "reopened") {
        scenarios.push({ kind: "review_request", pr, trigger: p.action, requested: null });
      } else if (p.action === "closed" && p.pull_request.merged) {
        scenarios.push({ kind: "review_merged", pr, mergedBy: loginOf(p.pull_request.merged_by) ?? actor });
      }
      break;
    case "pull_request_review_request":
      if (p.action === "review_requested") {
        scenarios.push({ kind: "review_request", pr, trigger: "review_requested", requested: loginOf(p.requested_reviewer) ?? null });
      }
      break;
    case "pull_request_sync":
      scenarios.push({ kind: "review_updated", pr, newSha: pr.headSha });
      break;
    case "pull_request_review_approved":
    case "pull_request_review_rejected": {
      const result = eventType === "pull_request_review_approved" ? "APPROVED" : "REQUEST_CHANGES";
      scenarios.push({ kind: "review_result", pr, result, reviewer, reviewBody });
      break;
    }
    case "pull_request_review_comment":
      scenarios.push({ kind: "review_comment", pr, reviewer, reviewBody });
      break;
  }
  if (eventType.startsWith("pull_request_review_") && eventType !== "pull_request_review_request" && reviewBody) {
    const mention = mentionScenario({
      repo,
      number: pr.number,
      isPull: true,
      sourceType: "review",
      url: pr.url,
      title: pr.title,
      commenter: actor,
      body: reviewBody,
    });
    if (mention) scenarios.push(mention);
  }
  return done(repo, p.action, actor, scenarios, [pr], `pull request action '${p.action}' needs no agent action`);
}

function classifyIssueAssign(eventType: string, body: unknown): Classified {
  const p = parse(IssuePayloadSchema, body, eventType);
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? null;
  if (p.action !== "assigned") return done(repo, p.action, actor, [], [], `issue action '${p.action}' needs no agent action`);
  const assignees = [...(p.issue.assignees ?? []), ...(p.issue.assignee ? [p.issue.assignee] : [])]
    .map(loginOf)
    .filter((n): n is string => Boolean(n));
  const unique = [...new Set(assignees.map((a) => a.toLowerCase()))];
  const issue = {
    number: p.issue.number,
    title: p.issue.title,
    body: p.issue.body ?? "",
    url: p.issue.html_url ?? null,
    labels: (p.issue.labels ?? []).map((l) => l.name),
  };
  const defaultBranch = p.repository.default_branch || "main";
  const scenarios: Scenario[] = unique.length ? [{ kind: "issue_assigned", repo, issue, assignees: unique, defaultBranch }] : [];
  return done(repo, p.action, actor, scenarios, [], "the issue has no assignee");
}

function classifyIssues(eventType: string, body: unknown): Classified {
  const p = parse(IssuePayloadSchema, body, eventType);
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? null;
  // `issues` carries opened/edited/closed…; an assignment arrives as `issue_assign`. A new issue's
  // body may still @mention an agent.
  if (p.action === "opened") {
    const mention = mentionScenario({
      repo,
      number: p.issue.number,
      isPull: false,
      sourceType: "issue_comment",
      url: p.issue.html_url ?? null,
      title: p.issue.title,
      commenter: actor,
      body: p.issue.body ?? "",
    });
    if (mention) return done(repo, p.action, actor, [mention], [], "");
  }
  return done(repo, p.action, actor, [], [], `issue action '${p.action}' needs no agent action`);
}

function classifyComment(eventType: "issue_comment" | "pull_request_comment", body: unknown): Classified {
  const p = parse(IssueCommentPayloadSchema, body, eventType);
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? loginOf(p.comment.user) ?? null;
  if (p.action !== "created") return done(repo, p.action, actor, [], [], `comment action '${p.action}' needs no agent action`);
  const isPull = eventType === "pull_request_comment" || Boolean(p.is_pull) || Boolean(p.issue.pull_request);
  const mention = mentionScenario({
    repo,
    number: p.issue.number,
    isPull,
    sourceType: isPull ? "pull_request_comment" : "issue_comment",
    url: p.comment.html_url ?? p.issue.html_url ?? null,
    title: p.issue.title,
    commenter: actor,
    body: p.comment.body,
  });
  const reason = p.comment.body.includes(BEAVER_MARKER)
    ? "a Beaver notice (routed directly, not as a mention)"
    : "the comment mentions nobody";
  return done(repo, p.action, actor, mention ? [mention] : [], [], reason);
}

function checkScenario(
  deploy: boolean,
  repo: string,
  sha: string,
  branch: string | null,
  pr: PullFacts | null,
  check: CheckFacts,
): Scenario {
  return deploy ? { kind: "deploy_failure", repo, sha, branch, pr, check } : { kind: "ci_failure", repo, sha, branch, pr, check };
}

function classifyStatus(body: unknown, opts: ClassifyOptions): Classified {
  const p = parse(CommitStatusPayloadSchema, body, "status");
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? null;
  if (!FAILED_STATES.has(p.state)) return done(repo, p.state, actor, [], [], `commit status '${p.state}' is not a failure`);
  const name = p.context ?? "";
  const check: CheckFacts = {
    source: "status",
    name,
    state: p.state,
    description: p.description ?? null,
    targetUrl: p.target_url ?? null,
    failedSteps: [],
  };
  return done(repo, p.state, actor, [checkScenario(opts.deployPattern.test(name), repo, p.sha, null, null, check)], [], "");
}

function classifyWorkflowJob(body: unknown, opts: ClassifyOptions): Classified {
  const p = parse(WorkflowJobPayloadSchema, body, "workflow_job");
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? null;
  const job = p.workflow_job;
  const conclusion = job.conclusion ?? "";
  if (p.action !== "completed" || !FAILED_CONCLUSIONS.has(conclusion)) {
    return done(repo, p.action, actor, [], [], `workflow job ${p.action}/${conclusion || "no conclusion"} is not a failure`);
  }
  const pr = p.pull_request?.number ? pullFacts(repo, p.pull_request.number, p.pull_request) : null;
  const check: CheckFacts = {
    source: "workflow_job",
    name: job.name,
    state: conclusion,
    description: null,
    targetUrl: job.html_url ?? null,
    failedSteps: (job.steps ?? []).filter((s) => FAILED_CONCLUSIONS.has(s.conclusion ?? "")).map((s) => s.name),
  };
  const scenario = checkScenario(opts.deployPattern.test(job.name), repo, job.head_sha, job.head_branch ?? null, pr, check);
  return done(repo, p.action, actor, [scenario], pr ? [pr] : [], "");
}

function classifyWorkflowRun(body: unknown, opts: ClassifyOptions): Classified {
  const p = parse(WorkflowRunPayloadSchema, body, "workflow_run");
  const repo = p.repository.full_name;
  const actor = loginOf(p.sender) ?? null;
  const run = p.workflow_run;
  const conclusion = run.conclusion ?? "";
  if (p.action !== "completed" || !FAILED_CONCLUSIONS.has(conclusion)) {
    return done(repo, p.action, actor, [], [], `workflow run ${p.action}/${conclusion || "no conclusion"} is not a failure`);
  }
  const name = p.workflow?.name || run.display_title || run.path || p.workflow?.path || "workflow";
  const path = run.path ?? p.workflow?.path ?? "";
  const deploy = opts.deployPattern.test(name) || opts.deployPattern.test(path.split("/").pop() ?? "");
  const pr = p.pull_request?.number ? pullFacts(repo, p.pull_request.number, p.pull_request) : null;
  const check: CheckFacts = {
    source: "workflow_run",
    name,
    state: conclusion,
    description: run.display_title ?? null,
    targetUrl: run.html_url ?? null,
    failedSteps: [],
  };
  return done(repo, p.action, actor, [checkScenario(deploy, repo, run.head_sha, run.head_branch ?? null, pr, check)], pr ? [pr] : [], "");
}

/** Events that arrive but never need an agent (answered 202 ignored, not 400). */
const NO_ACTION_EVENTS = new Set([
  "create",
  "delete",
  "fork",
  "push",
  "issue_label",
  "issue_milestone",
  "pull_request_assign",
  "pull_request_label",
  "pull_request_milestone",
  "wiki",
  "repository",
  "release",
  "package",
  "schedule",
  "workflow_dispatch",
]);

/**
 * Classify one delivery. Throws `PayloadError` when the body lacks what its event type needs and
 * `UnsupportedEventError` for event types Gitea does not define.
 */
export function classify(eventType: string, body: unknown, opts: ClassifyOptions): Classified {
  if (typeof body !== "object" || body === null || Array.isArray(body)) throw new PayloadError("Payload must be a JSON object");
  switch (eventType) {
    case "pull_request":
    case "pull_request_review_request":
    case "pull_request_sync":
    case "pull_request_review_approved":
    case "pull_request_review_rejected":
    case "pull_request_review_comment":
      return classifyPullRequest(eventType, body);
    case "issue_assign":
      return classifyIssueAssign(eventType, body);
    case "issues":
      return classifyIssues(eventType, body);
    case "issue_comment":
    case "pull_request_comment":
      return classifyComment(eventType, body);
    case "status":
      return classifyStatus(body, opts);
    case "workflow_job":
      return classifyWorkflowJob(body, opts);
    case "workflow_run":
      return classifyWorkflowRun(body, opts);
  }
  if (NO_ACTION_EVENTS.has(eventType)) {
    const repo = (body as { repository?: { full_name?: unknown } }).repository?.full_name;
    return {
      scenarios: [],
      actor: null,
      repo: typeof repo === "string" ? repo : "",
      action: null,
      pulls: [],
      ignored: `event type '${eventType}' needs no agent action`,
    };
  }
  throw new UnsupportedEventError(eventType);
}
