import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { hmacSha256Hex, sha256Hex } from "../../../src/kernel/hash.ts";
import {
  CLAIM_STALE_MS,
  intakeWebhook,
  processDelivery,
  RECEIVED_GRACE_MS,
  receivedDelivery,
  REPLAY_WINDOW_MS,
  type Recorded,
} from "../../../src/domains/toolchain/intake.ts";
import { recordDelivery } from "../../../src/domains/toolchain/delivery-store.ts";
import { loadConfigAndRevision } from "../../../src/storage/config/store.ts";
import { processWebhookDelivery, sweepWebhookDeliveries } from "../../../src/app/webhook-deliveries.ts";
import { setOutboundFetch } from "../../support/test-services.ts";
import { FakeGitea } from "../../support/fake-gitea.ts";
import { GITEA_SWAGGER, swaggerProblems } from "../../support/swagger.ts";
import { operationOf } from "../../support/swagger-check.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import {
  anotherEvent,
  deliver,
  deliverOk,
  processed,
  getTask,
  listTasks,
  toolchainWorkspace,
  GITEA_URL,
  WEBHOOK_SECRET,
  type DeliveryAnswer,
  type TaskJson,
} from "../../support/toolchain-setup.ts";

type Err = { error: { code: string; message: string; details?: unknown } };
let fake: FakeGitea;

beforeEach(() => {
  fake = new FakeGitea(GITEA_URL);
  setOutboundFetch(fake.fetch);
});
afterEach(() => setOutboundFetch(null));

async function deliveries(token: string) {
  const res = await call("GET", "/api/toolchain/deliveries", { token });
  expect(res.status).toBe(200);
  return (await json<{ deliveries: (DeliveryAnswer & { status_code: number })[] }>(res)).deliveries;
}

describe("webhook intake: signature first", () => {
  it("answers 401 and stores nothing without a valid signature", async () => {
    const ws = await toolchainWorkspace();
    const body = fixture("HookPullRequest");
    for (const sign of ["none", "wrong"] as const) {
      const res = await deliver(ws.id, "pull_request", body, { sign });
      expect(res.status).toBe(401);
      expect((await json<Err>(res)).error.code).toBe("unauthorized");
    }
    expect((await deliver(ws.id, "pull_request", body, { secret: "another-secret" })).status).toBe(401);
    expect(await deliveries(ws.read)).toEqual([]);
    expect(await listTasks(ws.read)).toEqual([]);
  });

  it("answers the same 401 for an unknown workspace and one without a toolchain section", async () => {
    const body = fixture("HookPullRequest");
    expect((await deliver("no-such-workspace", "pull_request", body)).status).toBe(401);
    const plain = await newWorkspace();
    expect((await deliver(plain.id, "pull_request", body)).status).toBe(401);
  });

  it("a rotated webhook secret and a new agent apply from the next delivery (nothing is reused across a change)", async () => {
    const ws = await toolchainWorkspace();
    const payload = JSON.parse(fixture("issue_comment_mention")) as { comment: { body: string } };
    payload.comment.body = "@newcomer please take a look";
    // Under the first revision: the secret verifies, and nobody is called newcomer.
    const before = await deliverOk(ws.id, "issue_comment", JSON.stringify(payload));
    expect(before.task_ids).toEqual([]);
    const rotated = "whsec-rotated-9876543210";
    expect((await call("PUT", "/api/secrets/GITEA_WEBHOOK_SECRET", { token: ws.admin, body: { value: rotated } })).status).toBe(200);
    const again = anotherEvent(fixture("HookPullRequest"), 1);
    expect((await deliver(ws.id, "pull_request", again)).status).toBe(401);
    expect((await deliver(ws.id, "pull_request", again, { secret: rotated })).status).toBe(202);
    const agent = { id: "newcomer", gitea_username: "newcomer", roles: ["developer"] };
    expect((await call("POST", "/api/agents", { token: ws.admin, body: agent })).status).toBe(201);
    const after = await deliverOk(ws.id, "issue_comment", anotherEvent(JSON.stringify(payload), 1), { secret: rotated });
    expect(after.task_ids).toHaveLength(1);
    expect((await listTasks(ws.read)).map((t) => t.agent_id)).toContain("newcomer");
  });

  it("accepts the GitHub-style X-Hub-Signature-256 header too, and needs no bearer token", async () => {
    const ws = await toolchainWorkspace();
    const answer = await deliverOk(ws.id, "pull_request", fixture("HookPullRequest"), { sign: "hub" });
    expect(answer.outcome).toBe("tasks_created");
  });
});

/** Gitea API calls a step names, e.g. `POST /repos/o/r/pulls/7/merge`. */
const apiCallsIn = (text: string) =>
  [...text.matchAll(/\b(GET|POST|PATCH|PUT|DELETE) (\/repos\/[^\s),]+)/g)].map((m) => ({ method: m[1]!, path: m[2]! }));

/**
 * What every stored task must carry (docs/toolchain.md, "Scenarios, action types and `must_haves`"):
 * all six must_haves fields, concrete steps naming the real repository, number and real Gitea API
 * calls, a context, and the rendered event as its description.
 */
function expectConcreteTask(t: TaskJson, where: { repo: string; number: number | null }) {
  expect(Object.keys(t.must_haves).sort()).toEqual(["action_type", "context", "event_type", "from", "source", "steps"]);
  expect(t.must_haves).toMatchObject({ event_type: t.action_type, action_type: t.action_type, from: "system", source: "webhook" });
  expect(t.must_haves.context).toMatchObject({ repo: where.repo });
  if (where.number !== null) expect(Object.values(t.must_haves.context)).toContain(where.number);
  expect(t.description).toMatch(/^Event: /);
  expect(t.description).toContain(`Repository: ${where.repo}`);
  if (where.number !== null) expect(t.description).toContain(`#${where.number}`);
  const steps = t.must_haves.steps;
  if (t.action_type === "review_merged") {
    expect(steps).toEqual([]);
    return;
  }
  expect(steps.length).toBeGreaterThanOrEqual(2);
  expect(steps.at(-1)).toContain(`toolchain_report for task ${t.id}`);
  const all = steps.join("\n");
  expect(all).toContain(where.repo);
  if (where.number !== null) expect(all).toContain(String(where.number));
  for (const call of apiCallsIn(all)) {
    expect(call.path.startsWith(`/repos/${where.repo}/`), `${call.method} ${call.path}`).toBe(true);
    expect(operationOf(GITEA_SWAGGER, { method: call.method, path: `/api/v1${call.path}` }), `${call.method} ${call.path}`).not.toBeNull();
  }
}

describe("webhook intake: scenarios become tasks for the right agent", () => {
  const cases: [event: string, fixture: string, agent: string, action: string, where: { repo: string; number: number | null }][] = [
    ["pull_request", "HookPullRequest", "nice", "review_request", { repo: "gordon/hello-world", number: 1 }],
    ["pull_request", "HookPullRequestReopened", "nice", "review_request", { repo: "test_it/test_ci_thing", number: 1 }],
    [
      "pull_request_review_request",
      "pull_request_review_requested",
      "nice",
      "review_request",
      { repo: "a_nice_user/hello_world_ci", number: 7 },
    ],
    ["pull_request_sync", "HookPullRequestUpdated", "nice", "review_updated", { repo: "Test-CI/multi-line-secrets", number: 2 }],
    [
      "pull_request_review_approved",
      "HookPullRequestReviewAck",
      "jony",
      "review_result",
      { repo: "a_nice_user/hello_world_ci", number: 7 },
    ],
    [
      "pull_request_review_rejected",
      "HookPullRequestReviewDeny",
      "jony",
      "review_result",
      { repo: "a_nice_user/hello_world_ci", number: 7 },
    ],
    [
      "pull_request_review_comment",
      "HookPullRequestReviewComment",
      "jony",
      "review_comment",
      { repo: "a_nice_user/hello_world_ci", number: 7 },
    ],
    ["workflow_job", "workflow_job_failure", "jony", "ci_failure", { repo: "a_nice_user/hello_world_ci", number: 7 }],
    ["issue_assign", "issue_assign", "jony", "issue_assigned", { repo: "a_nice_user/hello_world_ci", number: 13 }],
    ["status", "status_deploy_error", "ops", "deploy_failure", { repo: "a_nice_user/hello_world_ci", number: null }],
    ["workflow_run", "workflow_run_deploy_failure", "ops", "deploy_failure", { repo: "a_nice_user/hello_world_ci", number: null }],
    ["issue_comment", "issue_comment_mention", "jony", "mention", { repo: "a_nice_user/hello_world_ci", number: 12 }],
    ["pull_request_comment", "pull_request_comment_mention", "nice", "mention", { repo: "a_nice_user/hello_world_ci", number: 7 }],
    [
      "pull_request_review_comment",
      "pull_request_review_comment_mention",
      "gordon",
      "mention",
      { repo: "a_nice_user/hello_world_ci", number: 7 },
    ],
    ["pull_request", "pull_request_merged_by_reviewer", "jony", "review_merged", { repo: "a_nice_user/hello_world_ci", number: 7 }],
  ];
  for (const [event, name, agent, action, where] of cases) {
    it(`${event} (${name}) → ${action} for ${agent}, with concrete must_haves and the rendered event`, async () => {
      const ws = await toolchainWorkspace();
      const answer = await deliverOk(ws.id, event, fixture(name));
      expect(answer.outcome).toBe("tasks_created");
      const tasks = await listTasks(ws.read);
      const mine = tasks.find((t) => t.agent_id === agent);
      expect(mine, JSON.stringify(tasks.map((t) => [t.agent_id, t.action_type]))).toMatchObject({
        action_type: action,
        status: "pending",
        attempts: 0,
      });
      expect(answer.task_ids).toContain(mine!.id);
      const detail = await getTask(ws.read, mine!.id);
      expectConcreteTask(detail.task, where);
      expect(detail.history.map((h) => h.event)).toEqual(["created"]);
    });
  }

  it("a CI failure found through a commit status (PR from the index) is concrete too", async () => {
    const ws = await toolchainWorkspace();
    await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
    await deliverOk(ws.id, "status", fixture("status_failure"));
    const [ci] = await listTasks(ws.read, "?action_type=ci_failure");
    expectConcreteTask(ci!, { repo: "a_nice_user/hello_world_ci", number: 7 });
    expect(ci!.must_haves.steps.join("\n")).toContain("ci/woodpecker/pr/test");
  });

  it("a review that @mentions another agent gives the author a review task and the mentioned agent a mention task", async () => {
    const ws = await toolchainWorkspace();
    const answer = await deliverOk(ws.id, "pull_request_review_comment", fixture("pull_request_review_comment_mention"));
    const tasks = await listTasks(ws.read);
    expect(tasks.map((t) => `${t.agent_id}:${t.action_type}`).sort()).toEqual(["gordon:mention", "jony:review_comment"]);
    expect(answer.task_ids).toHaveLength(2);
  });

  it("a comment that mentions many agents gives each one a task (one statement per task: D1 binds at most 100 values)", async () => {
    const ws = await toolchainWorkspace();
    const names = Array.from({ length: 8 }, (_, i) => `helper${i}`);
    for (const n of names)
      expect(
        (await call("POST", "/api/agents", { token: ws.admin, body: { id: n, gitea_username: n, roles: ["developer"] } })).status,
      ).toBe(201);
    const payload = JSON.parse(fixture("issue_comment_mention")) as { comment: { body: string } };
    payload.comment.body = `${names.map((n) => `@${n}`).join(" ")} please take a look`;
    const answer = await deliverOk(ws.id, "issue_comment", JSON.stringify(payload));
    expect(answer.task_ids).toHaveLength(8);
    expect((await listTasks(ws.read)).map((t) => t.agent_id).sort()).toEqual(names);
  });

  it("records why a delivery created nothing: no agent, the agent's own action, nothing to do", async () => {
    const ws = await toolchainWorkspace();
    const own = await deliverOk(ws.id, "pull_request_review_request", fixture("HookPullRequestAddReviewRequest"));
    expect(own).toMatchObject({
      outcome: "ignored",
      task_ids: [],
      reason: "review_request: own action of agent 'nice' (no task for itself)",
    });
    const self = await deliverOk(ws.id, "pull_request", fixture("HookPullRequestMerged"));
    expect(self.reason).toBe("review_merged: PR author 'anbraten' is not an enabled agent");
    const push = await deliverOk(ws.id, "push", fixture("HookPush"));
    expect(push).toMatchObject({ outcome: "ignored", reason: "event type 'push' needs no agent action" });
    const unknown = await deliverOk(ws.id, "pull_request_exploded", "{}");
    expect(unknown).toMatchObject({ outcome: "ignored", reason: "Event type 'pull_request_exploded' is not handled by the toolchain" });
    const notice = await deliverOk(ws.id, "pull_request_comment", fixture("pull_request_comment_beaver_notice"));
    expect(notice.reason).toContain("Beaver notice");
    expect(await listTasks(ws.read)).toEqual([]);
    const recorded = await deliveries(ws.read);
    expect(recorded.map((d) => d.outcome)).toEqual(["ignored", "ignored", "ignored", "ignored", "ignored"]);
  });
});

describe("webhook intake: redeliveries and bad deliveries", () => {
  it("a redelivery answers 200 with the first outcome and creates nothing new", async () => {
    const ws = await toolchainWorkspace();
    const body = fixture("HookPullRequestReviewDeny");
    const first = await deliverOk(ws.id, "pull_request_review_rejected", body, { id: "redeliver-1" });
    const again = await deliver(ws.id, "pull_request_review_rejected", body, { id: "redeliver-1" });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({
      delivery_id: "redeliver-1",
      outcome: "tasks_created",
      task_ids: first.task_ids,
      duplicate: true,
    });
    expect(await listTasks(ws.read)).toHaveLength(1);
  });

  it("the same delivery arriving several times at once creates its tasks once", async () => {
    const ws = await toolchainWorkspace();
    const body = fixture("issue_assign");
    const answers = await Promise.all(Array.from({ length: 6 }, () => deliver(ws.id, "issue_assign", body, { id: "burst-1" })));
    const statuses = answers.map((r) => r.status).sort();
    expect(statuses.filter((s) => s === 202)).toHaveLength(1);
    expect(statuses.filter((s) => s === 200)).toHaveLength(5);
    const bodies = await Promise.all(answers.map((r) => json<DeliveryAnswer>(r)));
    expect(new Set(bodies.map((b) => b.delivery_id))).toEqual(new Set(["burst-1"]));
    const outcome = await processed(ws.id, "burst-1");
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual(outcome.task_ids);
    expect(await deliveries(ws.read)).toHaveLength(1);
  });

  it("rejects malformed deliveries with a reason after the 202 (a missing event type at once, with 400), and never half-creates a task", async () => {
    const ws = await toolchainWorkspace();
    const bad = await deliver(ws.id, "pull_request", "{not json", { id: "bad-json" });
    expect(bad.status).toBe(202);
    expect(await processed(ws.id, "bad-json")).toMatchObject({ outcome: "rejected", reason: "Body is not valid JSON", status_code: 202 });
    const noType = await deliver(ws.id, null, fixture("HookPullRequest"), { id: "no-type" });
    expect(noType.status).toBe(400);
    expect((await json<Err>(noType)).error.message).toContain("X-Gitea-Event-Type");
    const review = JSON.parse(fixture("HookPullRequestReviewDeny")) as { pull_request: Record<string, unknown> };
    delete review.pull_request.head;
    expect((await deliver(ws.id, "pull_request_review_rejected", JSON.stringify(review), { id: "no-head" })).status).toBe(202);
    expect((await processed(ws.id, "no-head")).reason).toContain("pull_request.head");
    expect((await deliver(ws.id, "pull_request", "[1,2]", { id: "array" })).status).toBe(202);
    expect((await processed(ws.id, "array")).outcome).toBe("rejected");
    // Redelivering a rejected one gives its first outcome (not a second record).
    const again = await deliver(ws.id, "pull_request", "{not json", { id: "bad-json" });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ outcome: "rejected", reason: "Body is not valid JSON", duplicate: true });
    expect(await listTasks(ws.read)).toEqual([]);
    const recorded = await deliveries(ws.read);
    expect(recorded).toHaveLength(4);
    expect(recorded.every((d) => d.outcome === "rejected")).toBe(true);
  });

  it("records every malformed payload of every handled event type as rejected (never failed) and creates nothing", async () => {
    const ws = await toolchainWorkspace();
    const events = [
      "pull_request",
      "pull_request_review_request",
      "pull_request_sync",
      "pull_request_review_approved",
      "pull_request_review_rejected",
      "pull_request_review_comment",
      "issue_assign",
      "issues",
      "issue_comment",
      "pull_request_comment",
      "status",
      "workflow_job",
      "workflow_run",
    ];
    const review = JSON.parse(fixture("HookPullRequestReviewDeny")) as Record<string, Record<string, unknown>>;
    const bodies: [what: string, body: string][] = [
      ["empty body", ""],
      ["null", "null"],
      ["a string", '"hello"'],
      ["a number", "42"],
      ["an empty object", "{}"],
      ["truncated JSON", fixture("HookPullRequestReviewDeny").slice(0, 200)],
      ["deeply nested JSON", "[".repeat(50_000) + "]".repeat(50_000)],
      ["a number too large for JSON", '{"action":"opened","number":1e400}'],
      [
        "wrong types everywhere",
        JSON.stringify({
          action: 5,
          number: "7",
          pull_request: [],
          issue: "x",
          comment: 1,
          repository: { full_name: 7 },
          sha: 1,
          state: {},
          workflow_job: null,
          workflow_run: "x",
        }),
      ],
      ["a negative PR number", JSON.stringify({ ...review, number: -7, pull_request: { ...review.pull_request, number: -7 } })],
      ["a repository without an owner", JSON.stringify({ ...review, repository: { full_name: "no-owner" } })],
    ];
    let n = 0;
    const sent: [string, string][] = [];
    for (const [e, event] of events.entries()) {
      for (const [what, body] of bodies) {
        // One body per event type: the same signed body under another event type would be a replay.
        const id = `bad-${n++}`;
        const res = await deliver(ws.id, event, anotherEvent(body, e), { id });
        expect(res.status, `${event} with ${what}: ${await res.text()}`).toBe(202);
        sent.push([id, `${event} with ${what}`]);
      }
    }
    for (const [id, what] of sent) expect((await processed(ws.id, id)).outcome, what).toBe("rejected");
    expect(await listTasks(ws.read)).toEqual([]);
    const recorded = await json<{ deliveries: { outcome: string }[] }>(
      await call("GET", "/api/toolchain/deliveries?limit=200", { token: ws.read }),
    );
    expect(recorded.deliveries.length).toBe(events.length * bodies.length);
    expect(new Set(recorded.deliveries.map((d) => d.outcome))).toEqual(new Set(["rejected"]));
  });

  it("stores odd but valid text as it is: NUL characters, lone surrogates, very long titles", async () => {
    const ws = await toolchainWorkspace();
    const issue = JSON.parse(fixture("issue_assign")) as Record<string, Record<string, unknown>>;
    issue.issue = { ...issue.issue, title: `Fix \u0000 and \ud800 in ${"x".repeat(200_000)}`, body: "NUL:\u0000 end" };
    const answer = await deliverOk(ws.id, "issue_assign", JSON.stringify(issue));
    expect(answer.outcome).toBe("tasks_created");
    const [task] = await listTasks(ws.read);
    // The title is clipped; a lone surrogate cannot be stored as UTF-8 and comes back as replacement characters.
    expect(task!.title.startsWith("Implement a_nice_user/hello_world_ci#13: Fix \u0000 and \ufffd")).toBe(true);
    expect(task!.title.endsWith("x…")).toBe(true);
    expect(task!.title.length).toBeLessThan(210);
    expect(task!.description).toContain("NUL:\u0000 end");
  });

  it("needs X-Gitea-Delivery to deduplicate (400, nothing stored) and limits the body size (413)", async () => {
    const ws = await toolchainWorkspace();
    const noId = await deliver(ws.id, "pull_request", fixture("HookPullRequest"), { id: "" });
    expect(noId.status).toBe(400);
    expect((await json<Err>(noId)).error.message).toContain("X-Gitea-Delivery");
    const huge = JSON.stringify({ action: "opened", padding: "x".repeat(1_100_000) });
    expect((await deliver(ws.id, "pull_request", huge)).status).toBe(413);
    expect(await deliveries(ws.read)).toEqual([]);
  });
});

describe('webhook intake: a signed body replayed under a new delivery id (docs/toolchain.md, "Webhook intake")', () => {
  const signed = async (eventType: string, deliveryId: string, text: string) => ({
    headers: new Headers({
      "X-Gitea-Event-Type": eventType,
      "X-Gitea-Delivery": deliveryId,
      "X-Gitea-Signature": await hmacSha256Hex(WEBHOOK_SECRET, text),
    }),
    body: new TextEncoder().encode(text),
  });

  it("answers 200 with the first outcome and creates nothing, whatever its delivery id and event type", async () => {
    const ws = await toolchainWorkspace();
    const body = fixture("issue_comment_mention");
    const first = await deliverOk(ws.id, "issue_comment", body, { id: "original-1" });
    expect(first.outcome).toBe("tasks_created");
    for (const [id, event] of [
      ["replay-1", "issue_comment"],
      ["replay-2", "issue_comment"],
      ["replay-3", "pull_request_comment"],
      ["replay-4", "issue_assign"],
    ]) {
      const res = await deliver(ws.id, event!, body, { id });
      expect(res.status, id).toBe(200);
      expect(await json(res)).toMatchObject({
        delivery_id: "original-1",
        outcome: "tasks_created",
        task_ids: first.task_ids,
        duplicate: true,
      });
    }
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual(first.task_ids);
    expect((await deliveries(ws.read)).map((d) => d.delivery_id)).toEqual(["original-1"]);
    // A different body is a different event: it is accepted and makes its own task.
    const payload = JSON.parse(body) as { comment: { id: number; body: string } };
    payload.comment = { ...payload.comment, id: payload.comment.id + 1, body: `${payload.comment.body} (and once more)` };
    const other = await deliverOk(ws.id, "issue_comment", JSON.stringify(payload), { id: "original-2" });
    expect(other).toMatchObject({ outcome: "tasks_created", duplicate: false });
    expect(await listTasks(ws.read)).toHaveLength(2);
  });

  it("a rejected or ignored body is answered once too", async () => {
    const ws = await toolchainWorkspace();
    const bad = await deliver(ws.id, "pull_request", "{not json", { id: "bad-1" });
    expect(bad.status).toBe(202);
    await processed(ws.id, "bad-1");
    const replayed = await deliver(ws.id, "pull_request", "{not json", { id: "bad-2" });
    expect(replayed.status).toBe(200);
    expect(await json(replayed)).toMatchObject({ delivery_id: "bad-1", outcome: "rejected", duplicate: true });
    // Ignored for want of an agent; adding the agent later does not let a replay create the task.
    await deliverOk(ws.id, "push", fixture("HookPush"), { id: "push-1" });
    const again = await deliver(ws.id, "push", fixture("HookPush"), { id: "push-2" });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({ delivery_id: "push-1", outcome: "ignored", duplicate: true });
    expect((await deliveries(ws.read)).map((d) => d.delivery_id).sort()).toEqual(["bad-1", "push-1"]);
  });

  it("the same body arriving at once under several new delivery ids creates its tasks once", async () => {
    const ws = await toolchainWorkspace();
    const body = fixture("issue_assign");
    const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => deliver(ws.id, "issue_assign", body, { id: `race-${i}` })));
    const bodies = await Promise.all(answers.map(async (r) => ({ status: r.status, body: await json<DeliveryAnswer>(r) })));
    expect(bodies.map((b) => b.status).sort()).toEqual([200, 200, 200, 200, 200, 202]);
    const winner = bodies.find((b) => b.status === 202)!.body;
    for (const b of bodies) expect(b.body).toMatchObject({ delivery_id: winner.delivery_id });
    const outcome = await processed(ws.id, winner.delivery_id);
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual(outcome.task_ids);
    expect(await deliveries(ws.read)).toHaveLength(1);
  });

  it("is accepted again once REPLAY_WINDOW_MS has passed since the delivery that answered it", async () => {
    const ws = await toolchainWorkspace();
    const text = fixture("issue_assign");
    const t0 = Date.now();
    const first = await intakeWebhook(env, { workspaceId: ws.id, ...(await signed("issue_assign", "old-1", text)) }, t0);
    expect(first.kind).toBe("settled");
    const inside = await intakeWebhook(
      env,
      { workspaceId: ws.id, ...(await signed("issue_assign", "old-2", text)) },
      t0 + REPLAY_WINDOW_MS - 1,
    );
    expect(inside).toMatchObject({ kind: "duplicate", delivery: { delivery_id: "old-1" } });
    const later = t0 + REPLAY_WINDOW_MS;
    const after = await intakeWebhook(env, { workspaceId: ws.id, ...(await signed("issue_assign", "new-1", text)) }, later);
    // Accepted and recorded as its own delivery (its task is dropped: the first one is still open).
    expect(after).toMatchObject({ kind: "accepted", delivery: { delivery_id: "new-1", duplicate: false } });
    // From now on the new delivery guards the body.
    const replay = await intakeWebhook(env, { workspaceId: ws.id, ...(await signed("issue_assign", "new-2", text)) }, later + 1);
    expect(replay).toMatchObject({ kind: "duplicate", delivery: { delivery_id: "new-1" } });
    expect((await deliveries(ws.read)).map((d) => d.delivery_id).sort()).toEqual(["new-1", "old-1"]);
  });
});

describe('webhook intake: processed after the answer, exactly once (docs/toolchain.md, "Webhook intake")', () => {
  let n = 1;
  // A delivery recorded `received` with its body, as intake writes one it does not settle before the answer
  // (a CI failure needs Gitea; the same work is already an open task): what the processors below start from.
  const record = async (ws: string, id: string, now: number): Promise<Recorded> => {
    // Each a distinct event (an identical body would be a replay).
    const body = anotherEvent(fixture("issue_assign"), n++);
    const delivery = receivedDelivery(id, "issue_assign", await sha256Hex(new TextEncoder().encode(body)), now);
    const at = await loadConfigAndRevision(env, ws);
    expect(await recordDelivery(env, ws, delivery, body, now - REPLAY_WINDOW_MS, at.revision)).toBe(true);
    return { delivery, body, at };
  };
  // issue_assign about another issue: other work, so the open-task index lets its task in.
  const assignment = (issue: number) => {
    const payload = JSON.parse(fixture("issue_assign")) as { issue: Record<string, unknown> };
    payload.issue = { ...payload.issue, number: issue };
    return JSON.stringify(payload);
  };
  const row = (ws: string, id: string) =>
    env.DB.prepare("SELECT outcome, body IS NOT NULL AS has_body, claim FROM webhook_deliveries WHERE workspace_id = ? AND delivery_id = ?")
      .bind(ws, id)
      .first<{ outcome: string; has_body: number; claim: string | null }>();

  it("answers 202 once the delivery is written; one that needs Gitea is classified after the answer, the outcome follows in the deliveries list", async () => {
    const ws = await toolchainWorkspace();
    // A CI failure needs its pull request (here from the PR index a review filled): never looked up before the answer.
    await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
    const res = await deliver(ws.id, "status", fixture("status_failure"), { id: "fast-1" });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ delivery_id: "fast-1", outcome: "received", task_ids: [], reason: null, duplicate: false });
    const done = await processed(ws.id, "fast-1");
    expect(done).toMatchObject({ outcome: "tasks_created", repo: "a_nice_user/hello_world_ci" });
    const ci = await listTasks(ws.read, "?action_type=ci_failure");
    expect(ci.map((t) => t.id)).toEqual(done.task_ids);
    // The body is let go once processed; the request path alone (no processing) leaves it received with its body.
    expect(await row(ws.id, "fast-1")).toEqual({ outcome: "tasks_created", has_body: 0, claim: null });
    await record(ws.id, "slow-1", Date.now());
    expect(await row(ws.id, "slow-1")).toEqual({ outcome: "received", has_body: 1, claim: null });
    expect(await listTasks(ws.read, "?action_type=ci_failure")).toHaveLength(1);
  });

  it("settles a delivery that needs no I/O in its one write: the answer carries its outcome and tasks, nothing is left to process", async () => {
    const ws = await toolchainWorkspace();
    // The workspace's first delivery in this isolate: the reading path reads the agents with the config.
    const first = await deliver(ws.id, "issue_assign", assignment(900), { id: "settled-0" });
    expect(first.status).toBe(202);
    expect(await json(first)).toMatchObject({ delivery_id: "settled-0", outcome: "tasks_created" });
    // The next one is signed with the remembered key: no read at all, the agents kept from the first.
    const res = await deliver(ws.id, "issue_assign", assignment(901), { id: "settled-1" });
    expect(res.status).toBe(202);
    const answer = await json<DeliveryAnswer>(res);
    expect(answer).toMatchObject({ delivery_id: "settled-1", outcome: "tasks_created", action: "assigned", duplicate: false });
    expect(answer.task_ids).toHaveLength(1);
    // Written as it was answered, before any processing could run: the outcome, no body, no claim, its task.
    expect(await row(ws.id, "settled-1")).toEqual({ outcome: "tasks_created", has_body: 0, claim: null });
    expect((await getTask(ws.read, answer.task_ids[0]!)).history.map((h) => h.event)).toEqual(["created"]);
    // An event Beaver does not handle is settled as ignored, with its reason, even before any agents are held.
    const other = await toolchainWorkspace();
    const ignored = await deliver(other.id, "wiki", JSON.stringify({ action: "created" }), { id: "settled-2" });
    expect(ignored.status).toBe(202);
    expect(await json(ignored)).toMatchObject({ delivery_id: "settled-2", outcome: "ignored", task_ids: [] });
    expect(await row(other.id, "settled-2")).toEqual({ outcome: "ignored", has_body: 0, claim: null });
    // A redelivery answers the settled outcome; the sweep finds nothing to do.
    const again = await deliver(ws.id, "issue_assign", assignment(901), { id: "settled-1" });
    expect(again.status).toBe(200);
    expect(await json(again)).toMatchObject({
      delivery_id: "settled-1",
      outcome: "tasks_created",
      task_ids: answer.task_ids,
      duplicate: true,
    });
    await sweepWebhookDeliveries(env, Date.now() + CLAIM_STALE_MS + RECEIVED_GRACE_MS);
    expect(await row(ws.id, "settled-1")).toEqual({ outcome: "tasks_created", has_body: 0, claim: null });
    expect((await listTasks(ws.read)).map((t) => t.id)).toContain(answer.task_ids[0]);
    expect(await listTasks(ws.read)).toHaveLength(2);
  });

  it("a settled write the open-task index refuses writes nothing and goes down the recording path: answered received, then ignored with its reason", async () => {
    const ws = await toolchainWorkspace();
    const first = await deliverOk(ws.id, "issue_assign", assignment(910));
    expect(first.outcome).toBe("tasks_created");
    // The same work again (another event about the same issue): the settled batch is refused as a whole.
    const res = await deliver(ws.id, "issue_assign", anotherEvent(assignment(910), 1), { id: "same-work-1" });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ delivery_id: "same-work-1", outcome: "received", task_ids: [] });
    const done = await processed(ws.id, "same-work-1");
    expect(done).toMatchObject({ outcome: "ignored", task_ids: [] });
    expect(done.reason).toContain("already an open task");
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual(first.task_ids);
  });

  it("a settled write whose revision moved on writes nothing, not even the tasks, and the delivery is checked again", async () => {
    const ws = await toolchainWorkspace();
    await deliverOk(ws.id, "issue_assign", assignment(920));
    // Any config or secret change moves the revision: the remembered key and agents no longer apply.
    const secretRes = await call("PUT", "/api/secrets/UNRELATED", { token: ws.admin, body: { value: "x" } });
    expect(secretRes.status).toBeLessThan(300);
    const res = await deliver(ws.id, "issue_assign", assignment(921), { id: "moved-1" });
    expect(res.status).toBe(202);
    const done = await processed(ws.id, "moved-1");
    expect(done).toMatchObject({ outcome: "tasks_created" });
    expect(await listTasks(ws.read)).toHaveLength(2);
  });

  it("the fast path, a sweep and a processor that overtakes a live claim race: one outcome, its tasks once", async () => {
    const ws = await toolchainWorkspace();
    const t0 = Date.now();
    const recorded = await record(ws.id, "race-1", t0);
    const late = t0 + CLAIM_STALE_MS + RECEIVED_GRACE_MS;
    await Promise.all([
      // The answer's own processing (no claim, from memory) and the claiming ones.
      processWebhookDelivery(env, ws.id, "race-1", t0, recorded),
      processWebhookDelivery(env, ws.id, "race-1", t0),
      processDelivery(env, ws.id, "race-1", t0),
      sweepWebhookDeliveries(env, late),
      processDelivery(env, ws.id, "race-1", late + 1),
    ]);
    const done = await processed(ws.id, "race-1");
    expect(done.outcome).toBe("tasks_created");
    expect(done.task_ids).toHaveLength(1);
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual(done.task_ids);
    // Done is done: no later processor or sweep claims it again, and a late answer's processing writes nothing.
    expect(await processDelivery(env, ws.id, "race-1", late + CLAIM_STALE_MS * 2)).toBeNull();
    expect(await processDelivery(env, ws.id, "race-1", late + CLAIM_STALE_MS * 2, recorded)).toBeNull();
    await sweepWebhookDeliveries(env, late + CLAIM_STALE_MS * 2);
    expect(await listTasks(ws.read)).toHaveLength(1);
  });

  it("the answer's own processing writes nothing once the sweep has claimed the delivery", async () => {
    const ws = await toolchainWorkspace();
    const t0 = Date.now();
    const recorded = await record(ws.id, "overtaken-1", t0);
    await env.DB.prepare(
      "UPDATE webhook_deliveries SET outcome = 'processing', claim = 'sweep', claimed_at = ? WHERE workspace_id = ? AND delivery_id = ?",
    )
      .bind(t0 + 1, ws.id, "overtaken-1")
      .run();
    expect(await processDelivery(env, ws.id, "overtaken-1", t0 + 2, recorded)).toBeNull();
    expect(await row(ws.id, "overtaken-1")).toEqual({ outcome: "processing", has_body: 1, claim: "sweep" });
    expect(await listTasks(ws.read)).toHaveLength(0);
  });

  it("the sweep processes, once, a delivery whose processing never started or crashed after the answer", async () => {
    const ws = await toolchainWorkspace();
    const t0 = Date.now();
    await record(ws.id, "never-1", t0);
    await record(ws.id, "crashed-1", t0 + 1);
    // A processor claimed it and died.
    await env.DB.prepare(
      "UPDATE webhook_deliveries SET outcome = 'processing', claim = 'dead', claimed_at = ? WHERE workspace_id = ? AND delivery_id = ?",
    )
      .bind(t0 + 2, ws.id, "crashed-1")
      .run();
    // Too early: still within the grace period and the claim's life.
    await sweepWebhookDeliveries(env, t0 + 1000);
    expect((await row(ws.id, "never-1"))?.outcome).toBe("received");
    expect((await row(ws.id, "crashed-1"))?.outcome).toBe("processing");
    await sweepWebhookDeliveries(env, t0 + RECEIVED_GRACE_MS + 1);
    expect((await row(ws.id, "never-1"))?.outcome).toBe("tasks_created");
    expect((await row(ws.id, "crashed-1"))?.outcome).toBe("processing");
    await sweepWebhookDeliveries(env, t0 + 2 + CLAIM_STALE_MS);
    const crashed = await processed(ws.id, "crashed-1");
    // Both are the same work (one issue, one agent): the second is recorded with its reason, not made twice.
    expect(crashed).toMatchObject({ outcome: "ignored", reason: "issue_assigned for jony: the same work is already an open task" });
    await sweepWebhookDeliveries(env, t0 + 10 * CLAIM_STALE_MS);
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual((await processed(ws.id, "never-1")).task_ids);
  });
});

describe("webhook intake: CI failures find their pull request", () => {
  it("through the PR index, without asking Gitea", async () => {
    const ws = await toolchainWorkspace();
    await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
    const answer = await deliverOk(ws.id, "status", fixture("status_failure"));
    expect(answer.outcome).toBe("tasks_created");
    const ci = (await listTasks(ws.read, "?action_type=ci_failure"))[0]!;
    expect(ci).toMatchObject({ agent_id: "jony", repo: "a_nice_user/hello_world_ci", number: 7 });
    expect(ci.must_haves.context).toMatchObject({ branch: "jony-patch-1", error_summary: expect.stringContaining("2 tests failing") });
    expect(fake.requests).toEqual([]);
  });

  it("through Gitea's commits/{sha}/pull when the index does not know the commit", async () => {
    const ws = await toolchainWorkspace();
    fake.addRepo("a_nice_user/hello_world_ci");
    fake.addPull("a_nice_user/hello_world_ci", {
      number: 21,
      author: "jony",
      headRef: "jony-fix",
      headSha: "5f3a9c0d1e2b4a6f8c7d9e0a1b2c3d4e5f6a7b8c",
      title: "Fix",
    });
    const answer = await deliverOk(ws.id, "status", fixture("status_failure_unindexed"));
    expect(answer.outcome).toBe("tasks_created");
    expect((await listTasks(ws.read))[0]).toMatchObject({ agent_id: "jony", action_type: "ci_failure", number: 21 });
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      "GET /api/v1/repos/a_nice_user/hello_world_ci/commits/5f3a9c0d1e2b4a6f8c7d9e0a1b2c3d4e5f6a7b8c/pull",
    ]);
    expect(fake.requests[0]!.authorization).toBe("Bearer beaver-bot-token");
    expect(swaggerProblems(fake.requests)).toEqual([]);
    // Now indexed: the next failure on that commit needs no Gitea call.
    await deliverOk(ws.id, "status", anotherEvent(fixture("status_failure_unindexed"), 1));
    expect(fake.requests).toHaveLength(1);
  });

  it("ignores it with a reason when no PR has the commit, and makes an infrastructure task when Gitea is down", async () => {
    const ws = await toolchainWorkspace();
    fake.addRepo("a_nice_user/hello_world_ci");
    const none = await deliverOk(ws.id, "status", fixture("status_failure_unindexed"));
    expect(none).toMatchObject({ outcome: "ignored", reason: "ci_failure: no pull request found for commit 5f3a9c0d1e2b" });
    fake.setDown("503");
    const down = await deliverOk(ws.id, "status", anotherEvent(fixture("status_failure_unindexed"), 1));
    expect(down.outcome).toBe("tasks_created");
    expect(down.reason).toContain("Gitea unreachable");
    const infra = (await listTasks(ws.read))[0]!;
    expect(infra).toMatchObject({ agent_id: "ops", action_type: "infrastructure_failure" });
    expect(infra.description).toContain("GET /repos/a_nice_user/hello_world_ci/commits/5f3a9c0d1e2b4a6f8c7d9e0a1b2c3d4e5f6a7b8c/pull");
    // Created by Beaver itself, not by the webhook: the same six fields, with source "system".
    expect(Object.keys(infra.must_haves).sort()).toEqual(["action_type", "context", "event_type", "from", "source", "steps"]);
    expect(infra.must_haves).toMatchObject({
      event_type: "infrastructure_failure",
      action_type: "infrastructure_failure",
      from: "system",
      source: "system",
      context: { gitea_url: GITEA_URL },
    });
    expect(infra.must_haves.steps.at(-1)).toContain(`toolchain_report for task ${infra.id}`);
    // A second outage while that task is open is written to it, with the delivery, as an observation.
    const again = await deliverOk(ws.id, "status", anotherEvent(fixture("status_failure_unindexed"), 2));
    expect(again).toMatchObject({ outcome: "ignored", task_ids: [] });
    expect(await listTasks(ws.read)).toHaveLength(1);
    expect((await getTask(ws.read, infra.id)).comments).toMatchObject([
      {
        author: "system",
        comment_type: "observation",
        body: expect.stringContaining("Gitea still unreachable: GET /repos/a_nice_user/hello_world_ci/commits/"),
      },
    ]);
    // Without an infra agent the delivery says so instead of dropping the outage silently.
    const bare = await toolchainWorkspace();
    await call("PATCH", "/api/agents/ops", { token: bare.admin, body: { enabled: false } });
    const unrouted = await deliverOk(bare.id, "status", fixture("status_failure_unindexed"));
    expect(unrouted).toMatchObject({ outcome: "ignored", task_ids: [] });
    expect(unrouted.reason).toContain("infrastructure_failure: no enabled infra agent");
  });

  it("different deliveries about one failing commit arriving at the same moment make one task", async () => {
    const ws = await toolchainWorkspace();
    // The status payload does not name its PR: Gitea's commits/{sha}/pull answers for it.
    fake.addRepo("a_nice_user/hello_world_ci");
    fake.addPull("a_nice_user/hello_world_ci", {
      number: 7,
      author: "jony",
      headRef: "jony-patch-1",
      headSha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
      title: "somepull",
    });
    // A commit status and a workflow job for the same commit, each sent three times with its own delivery id.
    const sends = ["status", "workflow_job", "status", "workflow_job", "status", "workflow_job"].map((event, i) =>
      deliver(ws.id, event, anotherEvent(fixture(event === "status" ? "status_failure" : "workflow_job_failure"), i)),
    );
    const answers = await Promise.all(sends);
    expect(answers.map((r) => r.status)).toEqual([202, 202, 202, 202, 202, 202]);
    const ids = await Promise.all(answers.map(async (r) => (await json<DeliveryAnswer>(r)).delivery_id));
    const bodies = await Promise.all(ids.map(async (id) => ({ body: await processed(ws.id, id) })));
    const created = bodies.filter((b) => b.body.outcome === "tasks_created");
    expect(created).toHaveLength(1);
    for (const b of bodies.filter((x) => x.body.outcome !== "tasks_created")) {
      expect(b.body).toMatchObject({
        outcome: "ignored",
        task_ids: [],
        reason: "ci_failure for jony: the same work is already an open task",
      });
    }
    const tasks = await listTasks(ws.read);
    expect(tasks.map((t) => t.id)).toEqual(created[0]!.body.task_ids);
    // Every delivery is recorded with the outcome it answered.
    const recorded = await deliveries(ws.read);
    expect(recorded.map((d) => d.outcome).sort()).toEqual(["ignored", "ignored", "ignored", "ignored", "ignored", "tasks_created"]);
  });

  it("several events about one failing commit make one task", async () => {
    const ws = await toolchainWorkspace();
    await deliverOk(ws.id, "workflow_job", fixture("workflow_job_failure"));
    const second = await deliverOk(ws.id, "status", fixture("status_failure"));
    expect(second).toMatchObject({ outcome: "ignored", reason: "ci_failure for jony: the same work is already an open task" });
    expect(await listTasks(ws.read)).toHaveLength(1);
  });
});

describe("deliveries and tasks are per workspace", () => {
  it("another workspace sees none of them and gets 404 for a task id", async () => {
    const ws = await toolchainWorkspace();
    const other = await toolchainWorkspace();
    const answer = await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
    expect(await deliveries(other.read)).toEqual([]);
    expect(await listTasks(other.read)).toEqual([]);
    expect((await call("GET", `/api/toolchain/tasks/${answer.task_ids[0]}`, { token: other.admin })).status).toBe(404);
    // A delivery signed for one workspace is not accepted by the other's URL with a different secret.
    expect((await deliver(other.id, "issue_assign", fixture("issue_assign"), { secret: "not-others-secret" })).status).toBe(401);
  });
});
