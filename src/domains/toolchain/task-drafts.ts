/**
 * From a routed scenario to the task Beaver stores: title, the rendered event (description) and the
 * `must_haves` JSON (docs/toolchain.md, "Scenarios, action types and `must_haves`") — event_type,
 * action_type, concrete numbered steps (real repo, numbers and API calls), context, from, source — plus
 * the dedupe key that makes one piece of work out of several events about the same thing. Pure.
 */
import type { Agent } from "../tasks/agents.ts";
import type { ActionType, CheckFacts, PullFacts, Scenario } from "./scenarios.ts";
import { EVENT_TEMPLATES, MENTION_GUIDANCE, STEP_TEMPLATES, TITLE_TEMPLATES } from "./prompt-texts.ts";
import { fill } from "../tasks/handler.ts";
import { noticeTaskId } from "./markers.ts";
import { riskLevelOf } from "./scenarios.ts";

export interface MustHaves {
  event_type: ActionType;
  action_type: ActionType;
  steps: string[];
  context: Record<string, string | number | boolean | string[] | null>;
  from: string;
  source: "webhook" | "system";
}

export interface TaskDraft {
  id: string;
  agentId: string;
  title: string;
  description: string;
  actionType: ActionType;
  mustHaves: MustHaves;
  repo: string | null;
  number: number | null;
  dedupeKey: string | null;
  originTaskId: string | null;
}

const MAX_TEXT = 4_000;
const clip = (text: string, max = MAX_TEXT) => (text.length > max ? `${text.slice(0, max)}…` : text);
const orNone = (v: string | null | undefined) => (v && v.trim() ? v : "(none)");

/** A branch-name-safe summary of an issue title. */
export function briefOf(title: string): string {
  const slug = title
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 30)
    .replace(/-+$/g, "");
  return slug || "work";
}

/** A rough intent of a mention's text, selecting the guidance the agent gets. */
export function mentionIntent(text: string): keyof typeof MENTION_GUIDANCE {
  if (/\breview\b/i.test(text)) return "review";
  if (/\b(fix|bug|broken|fails?|failing|error)\b/i.test(text)) return "fix";
  if (text.includes("?")) return "question";
  return "request";
}

function prVars(pr: PullFacts) {
  return {
    repo: pr.repo,
    number: pr.number,
    title: pr.title,
    url: orNone(pr.url),
    author: orNone(pr.author),
    head_ref: pr.headRef,
    base_ref: pr.baseRef,
    head_sha: pr.headSha,
  };
}

function checkVars(check: CheckFacts) {
  return {
    check_name: check.name || "(unnamed)",
    check_source: check.source,
    check_state: check.state,
    check_description: orNone(check.description),
    check_url: orNone(check.targetUrl),
    failed_steps: check.failedSteps.length ? check.failedSteps.join(", ") : "(not reported)",
  };
}

interface Rendered {
  variant: string;
  vars: Record<string, string | number>;
  context: MustHaves["context"];
  repo: string | null;
  number: number | null;
  dedupeKey: string | null;
  /** The task this one is the escalation of (a supervisor issue Beaver opened). */
  originTaskId?: string | null;
}

function render(s: Scenario, agent: Agent): Rendered {
  switch (s.kind) {
    case "review_result": {
      const vars = { ...prVars(s.pr), reviewer: orNone(s.reviewer), review_body: orNone(clip(s.reviewBody)) };
      return {
        variant: s.result === "APPROVED" ? "review_result_approved" : "review_result_changes",
        vars,
        context: {
          pr_number: s.pr.number,
          repo: s.pr.repo,
          pr_title: s.pr.title,
          result: s.result,
          reviewer: s.reviewer,
          review_body: clip(s.reviewBody),
          branch: s.pr.headRef,
        },
        repo: s.pr.repo,
        number: s.pr.number,
        dedupeKey: null,
      };
    }
    case "review_request":
      return {
        variant: "review_request",
        vars: { ...prVars(s.pr), trigger: s.trigger },
        context: {
          pr_number: s.pr.number,
          repo: s.pr.repo,
          pr_title: s.pr.title,
          pr_author: s.pr.author,
          branch: s.pr.headRef,
          base: s.pr.baseRef,
          head_sha: s.pr.headSha,
          trigger: s.trigger,
          risk_level: riskLevelOf(s.pr.size),
          changed_files: s.pr.size.changedFiles,
          additions: s.pr.size.additions,
          deletions: s.pr.size.deletions,
        },
        repo: s.pr.repo,
        number: s.pr.number,
        dedupeKey: `review:${s.pr.repo}#${s.pr.number}@${s.pr.headSha}:${agent.id}`,
      };
    case "review_updated":
      return {
        variant: "review_updated",
        vars: { ...prVars(s.pr), new_sha: s.newSha },
        context: {
          pr_number: s.pr.number,
          repo: s.pr.repo,
          pr_title: s.pr.title,
          pr_author: s.pr.author,
          new_sha: s.newSha,
          reviewer: agent.giteaUsername,
        },
        repo: s.pr.repo,
        number: s.pr.number,
        dedupeKey: `review:${s.pr.repo}#${s.pr.number}@${s.newSha}:${agent.id}`,
      };
    case "review_comment":
      return {
        variant: "review_comment",
        vars: { ...prVars(s.pr), reviewer: orNone(s.reviewer), review_body: orNone(clip(s.reviewBody)) },
        context: {
          pr_number: s.pr.number,
          repo: s.pr.repo,
          pr_title: s.pr.title,
          reviewer: s.reviewer,
          review_body: clip(s.reviewBody),
          branch: s.pr.headRef,
        },
        repo: s.pr.repo,
        number: s.pr.number,
        dedupeKey: null,
      };
    case "ci_failure": {
      // Routing only lets a CI failure through with its pull request.
      const pr = s.pr!;
      const summary = [s.check.name, s.check.state, s.check.description, s.check.failedSteps.join(", ")].filter(Boolean).join(" — ");
      return {
        variant: "ci_failure",
        vars: { ...prVars(pr), sha: s.sha, ...checkVars(s.check) },
        context: {
          pr_number: pr.number,
          repo: s.repo,
          branch: pr.headRef,
          sha: s.sha,
          error_summary: summary,
          check_url: s.check.targetUrl,
          check_source: s.check.source,
        },
        repo: s.repo,
        number: pr.number,
        dedupeKey: `ci_failure:${s.repo}#${pr.number}@${s.sha}:${agent.id}`,
      };
    }
    case "deploy_failure":
      return {
        variant: "deploy_failure",
        vars: { repo: s.repo, sha: s.sha, branch: orNone(s.branch ?? s.pr?.headRef), ...checkVars(s.check) },
        context: {
          repo: s.repo,
          commit_sha: s.sha,
          reason: s.check.description ?? s.check.state,
          check_name: s.check.name,
          check_url: s.check.targetUrl,
          pr_number: s.pr?.number ?? null,
        },
        repo: s.repo,
        number: s.pr?.number ?? null,
        dedupeKey: `deploy_failure:${s.repo}@${s.sha}:${agent.id}`,
      };
    case "issue_assigned": {
      const brief = briefOf(s.issue.title);
      const branch = `fix/${s.issue.number}-${brief}`;
      const failureOf = noticeTaskId(s.issue.body, "system-failure");
      return {
        variant: "issue_assigned",
        vars: {
          repo: s.repo,
          number: s.issue.number,
          title: s.issue.title,
          url: orNone(s.issue.url),
          labels: s.issue.labels.length ? s.issue.labels.join(", ") : "(none)",
          issue_body: orNone(clip(s.issue.body)),
          branch,
          default_branch: s.defaultBranch,
        },
        context: {
          issue_number: s.issue.number,
          repo: s.repo,
          issue_title: s.issue.title,
          labels: s.issue.labels,
          issue_body: clip(s.issue.body),
          brief,
          branch,
          base: s.defaultBranch,
          failure_of: failureOf,
        },
        repo: s.repo,
        number: s.issue.number,
        dedupeKey: `issue_assigned:${s.repo}#${s.issue.number}:${agent.id}`,
        originTaskId: failureOf,
      };
    }
    case "mention": {
      const intent = mentionIntent(s.body);
      const base = { repo: s.repo, number: s.number, commenter: orNone(s.commenter) };
      const guidance = fill(MENTION_GUIDANCE[intent]!, base);
      return {
        variant: "mention",
        vars: { ...base, title: s.title, url: orNone(s.url), source_type: s.sourceType, intent, content: clip(s.body), guidance },
        context: {
          source_type: s.sourceType,
          source_url: s.url,
          repo: s.repo,
          number: s.number,
          is_pull: s.isPull,
          commenter: s.commenter,
          content_snippet: clip(s.body, 500),
          intent_hint: intent,
          response_guidance: guidance,
        },
        repo: s.repo,
        number: s.number,
        dedupeKey: null,
      };
    }
    case "review_merged":
      return {
        variant: "review_merged",
        vars: { ...prVars(s.pr), merged_by: orNone(s.mergedBy) },
        context: { pr_number: s.pr.number, repo: s.pr.repo, pr_title: s.pr.title, pr_author: s.pr.author, merged_by: s.mergedBy },
        repo: s.pr.repo,
        number: s.pr.number,
        dedupeKey: null,
      };
  }
}

/** The task for one agent and one scenario. `id` is chosen by the caller so steps can name it. */
export function draftTask(id: string, s: Scenario, agent: Agent): TaskDraft {
  const r = render(s, agent);
  const vars = { ...r.vars, task_id: id };
  const steps = STEP_TEMPLATES[r.variant]!.map((t) => fill(t, vars));
  return {
    id,
    agentId: agent.id,
    title: clip(fill(TITLE_TEMPLATES[r.variant]!, vars), 200),
    description: fill(EVENT_TEMPLATES[r.variant]!, vars),
    actionType: s.kind,
    mustHaves: { event_type: s.kind, action_type: s.kind, steps, context: r.context, from: "system", source: "webhook" },
    repo: r.repo,
    number: r.number,
    dedupeKey: r.dedupeKey,
    originTaskId: r.originTaskId ?? null,
  };
}

export interface InfraFailureFacts {
  giteaUrl: string;
  operation: string;
  error: string;
  originTaskId: string | null;
  originTitle: string;
}

/** The task Beaver creates directly (never through Gitea) when Gitea could not be reached. */
export function draftInfraTask(id: string, agent: Agent, f: InfraFailureFacts): TaskDraft {
  const vars = {
    task_id: id,
    gitea_url: f.giteaUrl,
    operation: f.operation,
    error: clip(f.error, 500),
    origin_task_id: f.originTaskId ?? "(none)",
    origin_title: f.originTitle,
  };
  return {
    id,
    agentId: agent.id,
    title: clip(fill(TITLE_TEMPLATES.infrastructure_failure!, vars), 200),
    description: fill(EVENT_TEMPLATES.infrastructure_failure!, vars),
    actionType: "infrastructure_failure",
    mustHaves: {
      event_type: "infrastructure_failure",
      action_type: "infrastructure_failure",
      steps: STEP_TEMPLATES.infrastructure_failure!.map((t) => fill(t, vars)),
      context: { gitea_url: f.giteaUrl, operation: f.operation, error: clip(f.error, 500), origin_task_id: f.originTaskId },
      from: "system",
      source: "system",
    },
    repo: null,
    number: null,
    dedupeKey: "infrastructure_failure:gitea",
    originTaskId: f.originTaskId,
  };
}
