import { describe, expect, it } from "vitest";
import { decideFailure, type FailureCause } from "../../../src/domains/toolchain/failure-routing.ts";
import { ToolchainConfigSchema } from "../../../src/domains/toolchain/config.ts";
import { noticeMarker, noticeTaskId } from "../../../src/domains/toolchain/markers.ts";
import type { ToolchainTask } from "../../../src/domains/toolchain/task-model.ts";
import { byId } from "../../support/toolchain-cast.ts";

const config = ToolchainConfigSchema.parse({});
const task = (over: Partial<ToolchainTask> = {}): ToolchainTask => ({
  id: "tct_1",
  workspaceId: "ws",
  deliveryId: "d1",
  agentId: "jony",
  title: "CI failed on a/b#7",
  description: "",
  eventType: "ci_failure",
  actionType: "ci_failure",
  mustHaves: { event_type: "ci_failure", action_type: "ci_failure", steps: ["x"], context: {}, from: "system", source: "webhook" },
  repo: "a/b",
  number: 7,
  dedupeKey: null,
  status: "working",
  attempts: 1,
  businessFailures: 0,
  reminderSent: false,
  notBefore: 0,
  deadlineAt: null,
  sessionId: null,
  runId: null,
  failureKind: null,
  lastError: null,
  originTaskId: null,
  createdAt: 0,
  updatedAt: 0,
  completedAt: null,
  ...over,
});
const decide = (t: ToolchainTask, cause: FailureCause, supervisor = byId("boss")) =>
  decideFailure({ task: t, cause, config, assignee: byId("jony"), supervisor });
const business: FailureCause = { kind: "business", reason: "verification failed" };

describe("failure routing (docs/toolchain.md)", () => {
  it("business failure: a PR comment @mentioning the assignee, and a retry", () => {
    const d = decide(task(), business);
    expect(d).toMatchObject({ kind: "business", retry: true, issue: null, infraTask: null });
    expect(d.comment).toMatchObject({ repo: "a/b", number: 7 });
    expect(d.comment!.body).toMatch(/^@jony /);
    expect(d.comment!.body).toContain("attempt 2 of 3");
    expect(noticeTaskId(d.comment!.body, "business-failure")).toBe("tct_1");
  });

  it("a third business failure (or the last attempt) escalates to a supervisor issue", () => {
    const third = decide(task({ attempts: 2, businessFailures: 2 }), business);
    expect(third).toMatchObject({ kind: "system", retry: false });
    expect(third.issue).toMatchObject({ repo: "a/b", assignee: "boss" });
    expect(third.issue!.body).toContain(noticeMarker("system-failure", "tct_1"));
    expect(third.comment!.body).toContain("escalated");
    expect(decide(task({ attempts: 3, businessFailures: 0 }), business)).toMatchObject({ kind: "system", retry: false });
  });

  it("system failure: an issue assigned to the supervisor's Gitea user", () => {
    const d = decide(task(), { kind: "system", reason: "the run crashed: boom" });
    expect(d).toMatchObject({ kind: "system", retry: false, comment: null, infraTask: null, notRouted: null });
    expect(d.issue!.title).toContain("tct_1");
    expect(d.issue!.body).toContain("the run crashed: boom");
  });

  it("infrastructure failure: an infrastructure task, and a retry while attempts are left", () => {
    const cause: FailureCause = { kind: "infrastructure", reason: "timed out", operation: "POST /repos/a/b/pulls/7/merge" };
    expect(decide(task(), cause)).toMatchObject({
      kind: "infrastructure",
      retry: true,
      infraTask: { operation: "POST /repos/a/b/pulls/7/merge" },
      comment: null,
      issue: null,
    });
    // The last attempt ended by an outage: attempts used up is a system failure too (supervisor issue), and the outage is still reported.
    const last = decide(task({ attempts: 3 }), cause);
    expect(last).toMatchObject({
      kind: "system",
      retry: false,
      infraTask: { operation: "POST /repos/a/b/pulls/7/merge" },
      issue: { repo: "a/b", assignee: "boss" },
    });
    expect(last.reason).toBe("3 of 3 attempts used, the last ended by an outage: timed out");
  });

  it("no route recurses", () => {
    const infra = task({ actionType: "infrastructure_failure", repo: null, number: null });
    expect(decide(infra, { kind: "system", reason: "crash" })).toMatchObject({
      issue: null,
      notRouted: "infrastructure tasks are never routed again",
    });
    expect(decide(infra, { kind: "infrastructure", reason: "down", operation: "x" })).toMatchObject({ infraTask: null, retry: false });
    // The supervisor's task about task X failing does not open another issue.
    const escalation = task({ actionType: "issue_assigned", originTaskId: "tct_0", agentId: "boss" });
    expect(decide(escalation, { kind: "system", reason: "crash" })).toMatchObject({
      issue: null,
      notRouted: "this task is already the escalation of task tct_0",
    });
  });

  it("says why a route could not be taken", () => {
    expect(decide(task(), { kind: "system", reason: "x" }, null as never).notRouted).toBe("no enabled supervisor agent");
    expect(decide(task({ repo: null, number: null }), { kind: "system", reason: "x" }).notRouted).toBe(
      "the task has no repository to open an issue in",
    );
    expect(decide(task({ number: null }), business)).toMatchObject({
      retry: true,
      comment: null,
      notRouted: "no pull request or issue to comment on",
    });
  });
});
