import { describe, expect, it } from "vitest";
import { classify } from "../../../src/domains/toolchain/scenarios.ts";
import { routeScenario } from "../../../src/domains/toolchain/routing.ts";
import { draftTask, briefOf, mentionIntent } from "../../../src/domains/toolchain/task-drafts.ts";
import { toolchainRunContent, toolchainSystemPrompt } from "../../../src/domains/toolchain/prompt-sections.ts";
import { ACTION_HINTS, RED_FLAGS } from "../../../src/domains/toolchain/prompt-texts.ts";
import { fill } from "../../../src/domains/tasks/handler.ts";
import { fixtureJson } from "../../support/toolchain-fixtures.ts";
import { CAST } from "../../support/toolchain-cast.ts";

/** One delivery per scenario, with what its steps and context must name. */
const CASES = [
  {
    name: "HookPullRequest",
    event: "pull_request",
    action: "review_request",
    mustSay: [
      "gordon/hello-world#1",
      "GET /repos/gordon/hello-world/pulls/1.diff",
      "POST /repos/gordon/hello-world/pulls/1/reviews",
      "feature/changes",
    ],
  },
  {
    name: "HookPullRequestUpdated",
    event: "pull_request_sync",
    action: "review_updated",
    mustSay: ["Test-CI/multi-line-secrets", "pulls/2.diff", "788ed8d0"],
  },
  {
    name: "HookPullRequestReviewAck",
    event: "pull_request_review_approved",
    action: "review_result",
    mustSay: ["POST /repos/a_nice_user/hello_world_ci/pulls/7/merge", "gitea_merge_pull", "APPROVED", "juhu thats a great idea"],
  },
  {
    name: "HookPullRequestReviewDeny",
    event: "pull_request_review_rejected",
    action: "review_result",
    // Code scenarios change code with git in the workspace (docs/toolchain.md, "Code scenarios").
    mustSay: [
      "REQUEST_CHANGES",
      "I decided otherwhies :O",
      "git clone --branch jony-patch-1 a_nice_user/hello_world_ci",
      "git push origin jony-patch-1",
    ],
  },
  {
    name: "HookPullRequestReviewComment",
    event: "pull_request_review_comment",
    action: "review_comment",
    mustSay: ["and somethimes you have to comment", "POST /repos/a_nice_user/hello_world_ci/issues/7/comments"],
  },
  {
    name: "workflow_job_failure",
    event: "workflow_job",
    action: "ci_failure",
    mustSay: ["unit-tests", "go test ./...", "a_nice_user/hello_world_ci#7", "jony-patch-1", "07977177c2cd7d46bad37b8472a9d50e7acb9d1f"],
  },
  {
    name: "issue_assign",
    event: "issue_assign",
    action: "issue_assigned",
    mustSay: [
      "fix/13-add-a-health-endpoint",
      "POST /repos/a_nice_user/hello_world_ci/pulls",
      "git clone a_nice_user/hello_world_ci",
      "git checkout -b fix/13-add-a-health-endpoint",
      "git push origin fix/13-add-a-health-endpoint",
      "Expose GET /health",
      "enhancement",
    ],
  },
  {
    name: "status_deploy_error",
    event: "status",
    action: "deploy_failure",
    mustSay: ["deploy/production", "health check timed out", "https://deploy.example.org/runs/31"],
  },
  {
    name: "issue_comment_mention",
    event: "issue_comment",
    action: "mention",
    mustSay: ["@jony do you know why the build got slow?", "a_nice_user/hello_world_ci#12", "gordon asked you a question"],
  },
  {
    name: "pull_request_merged_by_reviewer",
    event: "pull_request",
    action: "review_merged",
    mustSay: ["Merged by: a_nice_user", "a_nice_user/hello_world_ci"],
  },
] as const;

function draftFor(c: (typeof CASES)[number]) {
  const classified = classify(c.event, fixtureJson(c.name), { deployPattern: /^deploy/i });
  const s = classified.scenarios[0]!;
  const route = routeScenario(s, { agents: CAST, routing: {}, actor: classified.actor });
  expect(route.ignored).toBeNull();
  return draftTask("tct_test123", s, route.agents[0]!);
}

describe("task drafts and prompts, scenario by scenario", () => {
  for (const c of CASES) {
    it(`${c.action} (${c.name}): must_haves, steps and the three prompt sections`, () => {
      const d = draftFor(c);
      expect(d.mustHaves).toMatchObject({ event_type: c.action, action_type: c.action, from: "system", source: "webhook" });
      const prompt = toolchainSystemPrompt({
        id: d.id,
        title: d.title,
        description: d.description,
        actionType: d.actionType,
        mustHaves: d.mustHaves,
      });
      expect(prompt).toContain(ACTION_HINTS[c.action]!);
      expect(prompt).toContain(d.description);
      for (const text of c.mustSay) expect(`${prompt}\n${JSON.stringify(d.mustHaves.context)}`).toContain(text);
      d.mustHaves.steps.forEach((step, i) => expect(prompt).toContain(`${i + 1}. ${step}`));
      if (c.action === "review_merged") {
        expect(d.mustHaves.steps).toEqual([]);
        expect(prompt).not.toContain("Red Flags");
        expect(toolchainRunContent(d, { kind: "start" })).toContain("needs no action");
      } else {
        expect(d.mustHaves.steps.length).toBeGreaterThanOrEqual(2);
        expect(d.mustHaves.steps.at(-1)).toContain("toolchain_report for task tct_test123");
        expect(prompt).toContain("## Hard rules (mandatory)");
        for (const [thought] of RED_FLAGS) expect(prompt).toContain(thought);
        expect(prompt).toContain("## How to report");
        // The report section: the report tool, and no manual status changes.
        const report = prompt.slice(prompt.indexOf("## How to report"));
        expect(report).toContain("toolchain_report");
        expect(report).toContain("never set the task's status yourself");
        expect(toolchainRunContent(d, { kind: "start" })).toContain("Finish with toolchain_report");
      }
    });
  }

  it("the context carries the per-scenario fields of docs/toolchain.md", () => {
    expect(draftFor(CASES[2]).mustHaves.context).toMatchObject({
      pr_number: 7,
      repo: "a_nice_user/hello_world_ci",
      pr_title: "somepull",
      result: "APPROVED",
      reviewer: "a_nice_user",
    });
    expect(draftFor(CASES[0]).mustHaves.context).toMatchObject({ pr_number: 1, pr_author: "gordon", branch: "feature/changes" });
    expect(draftFor(CASES[5]).mustHaves.context).toMatchObject({
      pr_number: 7,
      branch: "jony-patch-1",
      error_summary: expect.stringContaining("unit-tests"),
    });
    expect(draftFor(CASES[6]).mustHaves.context).toMatchObject({
      issue_number: 13,
      issue_title: "Add a health endpoint",
      labels: ["enhancement"],
      brief: "add-a-health-endpoint",
    });
    expect(draftFor(CASES[7]).mustHaves.context).toMatchObject({
      commit_sha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
      reason: expect.stringContaining("health check"),
    });
    expect(draftFor(CASES[8]).mustHaves.context).toMatchObject({
      source_type: "issue_comment",
      commenter: "gordon",
      intent_hint: "question",
    });
    expect(draftFor(CASES[9]).mustHaves.context).toMatchObject({ merged_by: "a_nice_user", pr_author: "jony" });
  });

  it("dedupe keys make one piece of work of repeated events", () => {
    expect(draftFor(CASES[5]).dedupeKey).toBe("ci_failure:a_nice_user/hello_world_ci#7@07977177c2cd7d46bad37b8472a9d50e7acb9d1f:jony");
    expect(draftFor(CASES[0]).dedupeKey).toBe("review:gordon/hello-world#1@0d1a26e67d8f5eaf1f6ba5c57fc3c7d91ac0fd1c:nice");
    expect(draftFor(CASES[2]).dedupeKey).toBeNull();
  });

  it("retry and reminder runs say why", () => {
    const d = draftFor(CASES[2]);
    expect(toolchainRunContent(d, { kind: "retry", attempt: 2, maxAttempts: 3, reason: "no report" })).toContain("attempt 2 of 3");
    expect(toolchainRunContent(d, { kind: "reminder" })).toContain("still has no report");
  });
});

describe("small text helpers", () => {
  it("briefOf makes branch-safe slugs", () => {
    expect(briefOf("Add a /health endpoint!!")).toBe("add-a-health-endpoint");
    expect(briefOf("???")).toBe("work");
    expect(briefOf("x".repeat(80)).length).toBe(30);
  });
  it("mentionIntent reads the text's intent", () => {
    expect(mentionIntent("@a please review this")).toBe("review");
    expect(mentionIntent("@a the build is broken")).toBe("fix");
    expect(mentionIntent("@a what time is it?")).toBe("question");
    expect(mentionIntent("@a take over")).toBe("request");
  });
  it("fill refuses a template value that is missing", () => {
    expect(fill("{a}-{b}", { a: 1, b: "x" })).toBe("1-x");
    expect(() => fill("{a}-{b}", { a: 1 })).toThrow("Missing template value 'b'");
  });
});
