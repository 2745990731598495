import { describe, expect, it } from "vitest";
import { classify, type Scenario } from "../../../src/domains/toolchain/scenarios.ts";
import { infraAgentOf, routeScenario, supervisorOf } from "../../../src/domains/toolchain/routing.ts";
import { fixtureJson } from "../../support/toolchain-fixtures.ts";
import { CAST, byId } from "../../support/toolchain-cast.ts";

const opts = { deployPattern: /^deploy/i };
function route(eventType: string, name: string, i = 0, agents = CAST, routing = {}) {
  const c = classify(eventType, fixtureJson(name), opts);
  const s = c.scenarios[i] as Scenario;
  return routeScenario(s, { agents, routing, actor: c.actor });
}
const ids = (r: ReturnType<typeof route>) => r.agents.map((a) => a.id);

describe("routing: who gets each scenario", () => {
  it("reviewers for review requests (never the PR author), the requested one when named", () => {
    // gordon opened his own PR: the reviewers are every reviewer agent except gordon.
    expect(ids(route("pull_request", "HookPullRequest"))).toEqual(["nice"]);
    expect(ids(route("pull_request_review_request", "pull_request_review_requested"))).toEqual(["nice"]);
    expect(ids(route("pull_request_sync", "HookPullRequestUpdated"))).toEqual(["nice", "gordon"]);
  });

  it("the PR author's agent for review results, review comments, CI failures and merges", () => {
    expect(ids(route("pull_request_review_approved", "HookPullRequestReviewAck"))).toEqual(["jony"]);
    expect(ids(route("pull_request_review_rejected", "HookPullRequestReviewDeny"))).toEqual(["jony"]);
    expect(ids(route("pull_request_review_comment", "HookPullRequestReviewComment"))).toEqual(["jony"]);
    expect(ids(route("workflow_job", "workflow_job_failure"))).toEqual(["jony"]);
    expect(ids(route("pull_request", "pull_request_merged_by_reviewer"))).toEqual(["jony"]);
  });

  it("the assignee for issues, infra for deployments, the mentioned agent for mentions", () => {
    expect(ids(route("issue_assign", "issue_assign"))).toEqual(["jony"]);
    expect(ids(route("status", "status_deploy_error"))).toEqual(["ops"]);
    expect(ids(route("issue_comment", "issue_comment_mention"))).toEqual(["jony"]);
    expect(ids(route("pull_request_review_comment", "pull_request_review_comment_mention", 1))).toEqual(["gordon"]);
  });

  it("supervisor and infra agents by role, or as the routing config names them", () => {
    expect(supervisorOf(CAST, {})?.id).toBe("boss");
    expect(infraAgentOf(CAST, {})?.id).toBe("ops");
    expect(supervisorOf(CAST, { system_failure: ["gordon"] })?.id).toBe("gordon");
    expect(
      supervisorOf(
        CAST.filter((a) => a.id !== "boss"),
        {},
      ),
    ).toBeNull();
  });

  it("a routing override replaces the default rule", () => {
    expect(ids(route("pull_request_review_approved", "HookPullRequestReviewAck", 0, CAST, { review_result: ["gordon"] }))).toEqual([
      "gordon",
    ]);
    expect(route("status", "status_deploy_error", 0, CAST, { deploy_failure: ["ghost"] }).ignored).toContain("names no enabled agent");
  });

  it("never routes an agent's own action to itself (no loops)", () => {
    // a_nice_user asked a_nice_user for a review; anbraten merged his own PR.
    expect(route("pull_request_review_request", "HookPullRequestAddReviewRequest").ignored).toBe(
      "own action of agent 'nice' (no task for itself)",
    );
    const anbraten = [...CAST, { ...byId("jony"), id: "anb", giteaUsername: "anbraten" }];
    expect(route("pull_request", "HookPullRequestMerged", 0, anbraten).ignored).toContain("own action of agent 'anb'");
    // A CI failure is not "own action" even when the author's push triggered it.
    const selfPush = classify("workflow_job", fixtureJson("workflow_job_failure"), opts);
    expect(selfPush.actor).toBe("jony");
    expect(ids(routeScenario(selfPush.scenarios[0]!, { agents: CAST, routing: {}, actor: "jony" }))).toEqual(["jony"]);
  });

  it("records why nobody gets it: unknown author, no PR for a commit, disabled agents", () => {
    expect(route("pull_request", "HookPullRequestReopened").agents.map((a) => a.id)).toEqual(["nice", "gordon"]);
    expect(
      route(
        "pull_request_review_approved",
        "HookPullRequestReviewAck",
        0,
        CAST.filter((a) => a.id !== "jony"),
      ).ignored,
    ).toBe("PR author 'jony' is not an enabled agent");
    expect(route("status", "status_failure").ignored).toBe("no pull request found for commit 07977177c2cd");
    const disabled = CAST.map((a) => (a.id === "ops" ? { ...a, enabled: false } : a));
    expect(route("status", "status_deploy_error", 0, disabled).ignored).toBe("no enabled agent with the infra role");
  });
});
