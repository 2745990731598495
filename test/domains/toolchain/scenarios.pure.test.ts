import { describe, expect, it } from "vitest";
import {
  classify,
  extractMentions,
  PayloadError,
  riskLevelOf,
  UnsupportedEventError,
  type Scenario,
} from "../../../src/domains/toolchain/scenarios.ts";
import { draftTask } from "../../../src/domains/toolchain/task-drafts.ts";
import { fixtureJson } from "../../support/toolchain-fixtures.ts";

const opts = { deployPattern: /^deploy/i };
const kinds = (eventType: string, name: string) => classify(eventType, fixtureJson(name), opts).scenarios.map((s) => s.kind);
const first = <K extends Scenario["kind"]>(eventType: string, name: string, kind: K) => {
  const s = classify(eventType, fixtureJson(name), opts).scenarios[0];
  expect(s?.kind).toBe(kind);
  return s as Extract<Scenario, { kind: K }>;
};

describe("classify: the ten scenarios from real and written payloads", () => {
  it("review_request from an opened, a reopened and a review-requested PR", () => {
    const opened = first("pull_request", "HookPullRequest", "review_request");
    expect(opened).toMatchObject({
      trigger: "opened",
      pr: {
        repo: "gordon/hello-world",
        number: 1,
        author: "gordon",
        headRef: "feature/changes",
        headSha: "0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c",
      },
    });
    expect(first("pull_request", "HookPullRequestReopened", "review_request").trigger).toBe("reopened");
    const requested = first("pull_request_review_request", "pull_request_review_requested", "review_request");
    expect(requested).toMatchObject({ trigger: "review_requested", requested: "a_nice_user", pr: { number: 7, author: "jony" } });
  });

  it("review_request carries the change's size and a risk level (docs/toolchain.md)", () => {
    const s = first("pull_request_review_request", "HookPullRequestAddReviewRequest", "review_request");
    expect(s.pr.size).toEqual({ changedFiles: 1, additions: 1, deletions: 0 });
    expect(riskLevelOf(s.pr.size)).toBe("low");
    expect(riskLevelOf({ changedFiles: 6, additions: 10, deletions: 0 })).toBe("medium");
    expect(riskLevelOf({ changedFiles: 2, additions: 90, deletions: 20 })).toBe("medium");
    expect(riskLevelOf({ changedFiles: 21, additions: 1, deletions: 0 })).toBe("high");
    expect(riskLevelOf({ changedFiles: 3, additions: 400, deletions: 101 })).toBe("high");
    expect(riskLevelOf({ changedFiles: null, additions: 1, deletions: 1 })).toBe("unknown");
    const reviewer = {
      id: "rev",
      giteaUsername: "a_nice_user",
      roles: ["reviewer" as const],
      model: null,
      giteaTokenSecret: null,
      enabled: true,
      createdAt: 0,
      updatedAt: 0,
    };
    expect(draftTask("t1", s, reviewer).mustHaves.context).toMatchObject({
      risk_level: "low",
      changed_files: 1,
      additions: 1,
      deletions: 0,
    });
  });

  it("review_updated from pull_request_sync (new head sha)", () => {
    const s = first("pull_request_sync", "HookPullRequestUpdated", "review_updated");
    expect(s.newSha).toBe(s.pr.headSha);
    expect(s.pr).toMatchObject({ repo: "Test-CI/multi-line-secrets", number: 2 });
  });

  it("review_result APPROVED and REQUEST_CHANGES from the review event types", () => {
    expect(first("pull_request_review_approved", "HookPullRequestReviewAck", "review_result")).toMatchObject({
      result: "APPROVED",
      reviewer: "a_nice_user",
      reviewBody: "juhu thats a great idea",
    });
    expect(first("pull_request_review_rejected", "HookPullRequestReviewDeny", "review_result")).toMatchObject({
      result: "REQUEST_CHANGES",
      reviewBody: "I decided otherwhies :O",
    });
  });

  it("review_comment, and a mention in the review body as a second scenario", () => {
    expect(kinds("pull_request_review_comment", "HookPullRequestReviewComment")).toEqual(["review_comment"]);
    const c = classify("pull_request_review_comment", fixtureJson("pull_request_review_comment_mention"), opts);
    expect(c.scenarios.map((s) => s.kind)).toEqual(["review_comment", "mention"]);
    expect(c.scenarios[1]).toMatchObject({ sourceType: "review", mentioned: ["gordon"], number: 7 });
  });

  it("ci_failure from a failed commit status, a failed workflow job (with its PR) and never from a success", () => {
    const status = first("status", "status_failure", "ci_failure");
    expect(status).toMatchObject({
      repo: "a_nice_user/hello_world_ci",
      sha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
      pr: null,
      check: { source: "status", name: "ci/woodpecker/pr/test", state: "failure" },
    });
    const job = first("workflow_job", "workflow_job_failure", "ci_failure");
    expect(job.pr).toMatchObject({ number: 7, author: "jony" });
    expect(job.check.failedSteps).toEqual(["go test ./..."]);
    expect(classify("status", fixtureJson("status_success"), opts)).toMatchObject({
      scenarios: [],
      ignored: "commit status 'success' is not a failure",
    });
  });

  it("deploy_failure when the status context or workflow name matches the deploy pattern", () => {
    expect(first("status", "status_deploy_error", "deploy_failure").check).toMatchObject({ name: "deploy/production", state: "error" });
    expect(first("workflow_run", "workflow_run_deploy_failure", "deploy_failure")).toMatchObject({
      branch: "main",
      check: { source: "workflow_run", name: "Deploy production" },
    });
    // With another pattern the same workflow is an ordinary CI failure.
    expect(classify("workflow_run", fixtureJson("workflow_run_deploy_failure"), { deployPattern: /^release/i }).scenarios[0]?.kind).toBe(
      "ci_failure",
    );
  });

  it("issue_assigned from issue_assign with the assignees and the repository's default branch", () => {
    expect(first("issue_assign", "issue_assign", "issue_assigned")).toMatchObject({
      assignees: ["jony"],
      defaultBranch: "main",
      issue: { number: 13, labels: ["enhancement"] },
    });
  });

  it("mention from issue comments and PR comments", () => {
    expect(first("issue_comment", "issue_comment_mention", "mention")).toMatchObject({
      sourceType: "issue_comment",
      isPull: false,
      mentioned: ["jony"],
      commenter: "gordon",
    });
    expect(first("pull_request_comment", "pull_request_comment_mention", "mention")).toMatchObject({
      sourceType: "pull_request_comment",
      isPull: true,
      mentioned: ["a_nice_user"],
      number: 7,
    });
  });

  it("review_merged only for a merged close", () => {
    expect(first("pull_request", "HookPullRequestMerged", "review_merged").mergedBy).toBe("anbraten");
    expect(kinds("pull_request", "HookPullRequestClosed")).toEqual([]);
  });
});

describe("classify: what needs no agent", () => {
  it("ignores actions and event types with nothing to do, with a reason", () => {
    expect(classify("pull_request", fixtureJson("HookPullRequestChangeTitle"), opts).ignored).toContain("'edited'");
    expect(classify("push", fixtureJson("HookPush"), opts)).toMatchObject({
      scenarios: [],
      ignored: "event type 'push' needs no agent action",
      repo: "gordon/hello-world",
    });
    expect(classify("release", fixtureJson("HookRelease"), opts).scenarios).toEqual([]);
    expect(classify("issue_comment", fixtureJson("go-scm_issue_comment_created"), opts).ignored).toBe("the comment mentions nobody");
  });

  it("does not turn Beaver's own failure notice into a mention", () => {
    const c = classify("pull_request_comment", fixtureJson("pull_request_comment_beaver_notice"), opts);
    expect(c.scenarios).toEqual([]);
    expect(c.ignored).toContain("Beaver notice");
  });

  it("rejects payloads without what their event type needs, naming the field", () => {
    const review = fixtureJson("HookPullRequestReviewDeny");
    delete (review.pull_request as Record<string, unknown>).head;
    expect(() => classify("pull_request_review_rejected", review, opts)).toThrow(PayloadError);
    const err = (() => {
      try {
        classify("status", { state: "failure", repository: { full_name: "a/b" } }, opts);
        return null;
      } catch (e) {
        return e;
      }
    })();
    expect(err).toBeInstanceOf(PayloadError);
    expect((err as PayloadError).details[0]?.path).toBe("sha");
    expect(() => classify("pull_request", [], opts)).toThrow(PayloadError);
    expect(() => classify("issue_comment", { action: "created", repository: { full_name: "not-a-repo" } }, opts)).toThrow(PayloadError);
  });

  it("throws for event types Gitea does not send", () => {
    expect(() => classify("pull_request_exploded", {}, opts)).toThrow(UnsupportedEventError);
  });
});

describe("extractMentions", () => {
  it("finds @users, lower-cased and unique, but not e-mail addresses, paths or code", () => {
    expect(extractMentions("@Jony and @jony, ping @a_nice_user. mail x@y.org, see /u/@not and `@code`")).toEqual(["jony", "a_nice_user"]);
    expect(extractMentions("(@infra-bot) @ops.")).toEqual(["infra-bot", "ops"]);
  });
});
