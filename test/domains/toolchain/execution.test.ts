/**
 * Toolchain tasks run end to end inside workerd: a webhook creates the task, the dispatcher runs it
 * in its own SessionDO with the agent's (mock) model and the toolchain tools, the Gitea tools talk
 * to the fake Gitea, and verification and failure routing decide what happens next.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env as workerEnv } from "cloudflare:workers";
import { runScheduled } from "../../../src/edge/scheduled.ts";
import { call } from "../../support/api.ts";
import { setOutboundFetch, testEnv } from "../../support/test-services.ts";
import { dispatchWorkspace } from "../../../src/domains/toolchain/dispatcher.ts";
import { transition } from "../../../src/domains/toolchain/task-store.ts";
import { FakeGitea } from "../../support/fake-gitea.ts";
import { swaggerProblems } from "../../support/swagger.ts";
import { ScriptedModel, doEvents, registerModel, text, toolCalls, until } from "../../support/sessions.ts";
import { sessionIdOf } from "../../../src/domains/tasks/agent-run.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import { deliverOk, getTask, listTasks, toolchainWorkspace, GITEA_URL } from "../../support/toolchain-setup.ts";

/** The Worker environment with the fake Gitea as its outbound fetch (test/support/test-services.ts). */
const env = testEnv(workerEnv);

const REPO = "a_nice_user/hello_world_ci";
let fake: FakeGitea;

beforeEach(() => {
  fake = new FakeGitea(GITEA_URL);
  fake.addToken("beaver-bot-token", "beaver-bot");
  fake.addRepo(REPO, { files: { "main.go": "package main\n" } });
  fake.addPull(REPO, {
    number: 7,
    author: "jony",
    headRef: "jony-patch-1",
    headSha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
    title: "somepull",
  });
  setOutboundFetch(fake.fetch);
});
afterEach(() => setOutboundFetch(null));

/** Give an agent its own scripted model (the run's model override). */
async function useModel(ws: { admin: string }, agentId: string, scripted: ScriptedModel): Promise<void> {
  const id = registerModel(scripted);
  const res = await call("PATCH", `/api/agents/${agentId}`, {
    token: ws.admin,
    body: { model: { provider: "openai-compatible", id, base_url: "http://scripted.test/v1" } },
  });
  expect(res.status).toBe(200);
}

const events = (d: Awaited<ReturnType<typeof getTask>>) => d.history.map((h) => h.event);

/** The PR author's agent doing what an approval asks: merge the PR, then report it. */
const mergeAndReport = () =>
  new ScriptedModel([
    toolCalls({ id: "c1", name: "gitea_merge_pull", args: { repo: REPO, number: 7 } }),
    toolCalls({ id: "c2", name: "toolchain_report", args: { summary: "Merged a_nice_user/hello_world_ci#7 after the approval." } }),
    text("Done."),
  ]);

describe("a reporting agent: the task is done", () => {
  it("merges the approved PR through Gitea, reports, and is verified", async () => {
    const ws = await toolchainWorkspace();
    const jony = mergeAndReport();
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"));

    const summary = await dispatchWorkspace(env, ws.id);
    expect(summary.started).toBe(1);
    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task).toMatchObject({ status: "done", attempts: 1, failure_kind: null });
    expect(events(d)).toEqual(["created", "claimed", "run_started", "reported", "verified"]);
    expect(d.history.at(-1)!.detail).toMatchObject({ reason: "has_action_report" });
    expect(d.comments).toMatchObject([{ author: "jony", comment_type: "action_report" }]);
    // The model saw the steps and the rules; the merge really happened, as a real Gitea API call.
    expect(jony.promptText(0)).toContain(`POST /repos/${REPO}/pulls/7/merge`);
    expect(jony.promptText(0)).toContain("Red Flags");
    // The run has the report and Gitea tools, and no way to send mail.
    const offered = (jony.calls[0]?.tools ?? []).map((t) => t.name);
    expect(offered).toEqual(
      expect.arrayContaining(["toolchain_report", "toolchain_output", "toolchain_comment", "gitea_merge_pull", "gitea_create_pull"]),
    );
    expect(offered).not.toContain("mail_reply");
    expect(fake.merges).toEqual([{ repo: REPO, number: 7, method: "merge" }]);
    expect(swaggerProblems(fake.requests)).toEqual([]);
    expect(fake.requests.every((r) => r.authorization === "Bearer beaver-bot-token")).toBe(true);
  });

  it("runs with toolchain.max_tool_iterations, not the chat limit", async () => {
    const ws = await toolchainWorkspace();
    const config = (await (await call("GET", "/api/config", { token: ws.admin })).json()) as Record<string, unknown>;
    const put = await call("PUT", "/api/config", { token: ws.admin, body: { ...config, runtime: { max_tool_iterations: 1 } } });
    expect(put.status).toBe(200);
    const jony = mergeAndReport();
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"));
    await dispatchWorkspace(env, ws.id);
    expect((await getTask(ws.read, task_ids[0]!)).task.status).toBe("done");
  });

  it("activates the agent's pinned skills for its task runs", async () => {
    const ws = await toolchainWorkspace();
    const skill = "---\nname: merge-etiquette\ndescription: House rules for merge commit messages.\n---\n\nMARKER-MERGE-ETIQUETTE\n";
    const put = await call("PUT", "/api/skills/merge-etiquette", {
      token: ws.admin,
      body: { files: [{ path: "SKILL.md", content: skill }] },
    });
    expect(put.status).toBe(200);
    const pin = await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { skills: ["merge-etiquette"] } });
    expect(pin.status).toBe(200);
    const jony = mergeAndReport();
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"));
    await dispatchWorkspace(env, ws.id);
    expect((await getTask(ws.read, task_ids[0]!)).task.status).toBe("done");

    // A skill message before the task's message, not the system prompt (docs/agent-loop.md, "Skill messages").
    const system = jony.calls[0]?.prompt[0];
    expect(system?.role === "system" ? system.content : "").not.toContain("MARKER-MERGE-ETIQUETTE");
    const users = (jony.calls[0]?.prompt ?? []).filter((m) => m.role === "user");
    expect(JSON.stringify(users[0])).toContain("MARKER-MERGE-ETIQUETTE");
    const events = await doEvents(sessionIdOf(task_ids[0]!), ws.id);
    const activation = events.find((e) => e.type === "skill_activation_snapshotted");
    expect(activation && activation.type === "skill_activation_snapshotted" ? activation.skills : []).toEqual([
      expect.objectContaining({ name: "merge-etiquette", version: "v0001", reason: "pinned" }),
    ]);
  });

  it("acts in Gitea with the agent's own token when it has one", async () => {
    const ws = await toolchainWorkspace();
    await call("PUT", "/api/secrets/JONY_TOKEN", { token: ws.admin, body: { value: "jony-token" } });
    await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { gitea_token_secret: "JONY_TOKEN" } });
    fake.addToken("jony-token", "jony");
    await useModel(
      ws,
      "jony",
      new ScriptedModel([
        toolCalls({ id: "c1", name: "gitea_comment", args: { repo: REPO, number: 7, body: "Fixed." } }),
        toolCalls({ id: "c2", name: "toolchain_report", args: { summary: "Answered the review." } }),
        text("ok"),
      ]),
    );
    await deliverOk(ws.id, "pull_request_review_comment", fixture("HookPullRequestReviewComment"));
    await dispatchWorkspace(env, ws.id);
    expect(fake.comments).toEqual([{ repo: REPO, number: 7, body: "Fixed.", author: "jony" }]);
  });

  it("a merge notice completes without a report", async () => {
    const ws = await toolchainWorkspace();
    const jony = new ScriptedModel([text("Good to know.")]);
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "pull_request", fixture("pull_request_merged_by_reviewer"));
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task.status).toBe("done");
    expect(d.history.at(-1)!.detail).toMatchObject({ reason: "auto_pass" });
    expect(jony.promptText(0)).toContain("needs no action");
  });
});

describe("an agent that ignores the steps: business failure", () => {
  it("comments on the PR @mentioning the assignee, retries, and escalates to the supervisor after three", async () => {
    const ws = await toolchainWorkspace();
    const jony = new ScriptedModel([text("Noted, thanks for the review.")]);
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
    const id = task_ids[0]!;

    await dispatchWorkspace(env, ws.id);
    let d = await getTask(ws.read, id);
    expect(d.task).toMatchObject({ status: "pending", attempts: 1, business_failures: 1, failure_kind: "business" });
    expect(events(d)).toEqual(["created", "claimed", "run_started", "retry_scheduled", "routed_comment"]);
    expect(fake.comments).toHaveLength(1);
    expect(fake.comments[0]).toMatchObject({ repo: REPO, number: 7, author: "beaver-bot" });
    expect(fake.comments[0]!.body).toMatch(/^@jony Beaver task tct_/);
    expect(fake.comments[0]!.body).toContain("attempt 2 of 3");

    await dispatchWorkspace(env, ws.id);
    expect(JSON.stringify(jony.calls.at(-1)?.prompt)).toContain("attempt 2 of 3");
    await dispatchWorkspace(env, ws.id);
    d = await getTask(ws.read, id);
    expect(d.task).toMatchObject({ status: "failed", attempts: 3, business_failures: 3, failure_kind: "system" });
    expect(events(d).filter((e) => e === "retry_scheduled")).toHaveLength(2);
    expect(events(d).slice(-3)).toEqual(["failed", "routed_comment", "routed_supervisor_issue"]);
    expect(fake.comments).toHaveLength(3);
    expect(fake.comments[2]!.body).toContain("escalated");
    expect(fake.issues).toHaveLength(1);
    expect(fake.issues[0]).toMatchObject({ repo: REPO, assignees: ["boss"] });
    expect(fake.issues[0]!.body).toContain(`<!-- beaver:system-failure task=${id} -->`);
    expect(swaggerProblems(fake.requests)).toEqual([]);

    // Gitea sends Beaver's own notices back as webhooks: the @jony comments and the new issue make no task.
    for (const posted of fake.comments) {
      const back = JSON.parse(fixture("pull_request_comment_beaver_notice")) as Record<string, Record<string, unknown>>;
      back.comment = { ...back.comment, body: posted.body, user: { login: "beaver-bot", username: "beaver-bot" } };
      back.sender = { login: "beaver-bot", username: "beaver-bot" };
      expect(await deliverOk(ws.id, "pull_request_comment", JSON.stringify(back))).toMatchObject({ outcome: "ignored", task_ids: [] });
    }
    const opened = JSON.parse(fixture("issue_assign")) as Record<string, Record<string, unknown>>;
    opened.action = "opened" as never;
    opened.issue = { ...opened.issue, number: fake.issues[0]!.number, title: fake.issues[0]!.title, body: fake.issues[0]!.body };
    expect(await deliverOk(ws.id, "issues", JSON.stringify(opened))).toMatchObject({ outcome: "ignored", task_ids: [] });
    expect((await listTasks(ws.read)).map((t) => t.id)).toEqual([id]);
  });
});

describe("an agent working while Gitea is down: infrastructure failure", () => {
  it("records the outage, creates an infrastructure task for infra directly, and retries later", async () => {
    const ws = await toolchainWorkspace();
    fake.setDown("503");
    await useModel(
      ws,
      "jony",
      new ScriptedModel([
        toolCalls({ id: "c1", name: "gitea_merge_pull", args: { repo: REPO, number: 7 } }),
        text("Gitea is not answering, I could not merge."),
      ]),
    );
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"));
    await dispatchWorkspace(env, ws.id);

    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task).toMatchObject({ status: "pending", failure_kind: "infrastructure", business_failures: 0 });
    expect(events(d)).toEqual(["created", "claimed", "run_started", "gitea_unreachable", "retry_scheduled", "routed_infrastructure"]);
    const infra = await listTasks(ws.read, "?action_type=infrastructure_failure");
    expect(infra).toHaveLength(1);
    expect(infra[0]).toMatchObject({ agent_id: "ops", status: "pending", origin_task_id: task_ids[0] });
    expect(infra[0]!.description).toContain(`POST /repos/${REPO}/pulls/7/merge`);
    // Nothing was sent to Gitea about the failure (it is down): only the agent's merge attempt.
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([`POST /api/v1/repos/${REPO}/pulls/7/merge`]);
    expect(fake.comments).toEqual([]);
  });

  it("folds a second outage into the open infrastructure task, and that task never routes again", async () => {
    const ws = await toolchainWorkspace({ concurrency: { max_working: 1, dispatch_on_intake: false } });
    fake.setDown("network");
    await useModel(ws, "ops", new ScriptedModel([{ fail: 500 }]));
    await useModel(
      ws,
      "jony",
      new ScriptedModel([toolCalls({ id: "c1", name: "gitea_get_pull_diff", args: { repo: REPO, number: 7 } }), text("no diff")]),
    );
    await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
    await dispatchWorkspace(env, ws.id); // jony fails → infrastructure task
    // Attempt 2: jony just answers (a business failure), and the failure comment cannot reach Gitea:
    // that route falls back to the infrastructure route, which adds to the open task.
    await dispatchWorkspace(env, ws.id);
    const jonyTask = (await listTasks(ws.read, "?agent_id=jony"))[0]!;
    const jonyEvents = events(await getTask(ws.read, jonyTask.id));
    expect(jonyEvents.slice(-3)).toEqual(["retry_scheduled", "route_failed", "routed_infrastructure"]);
    const infra = await listTasks(ws.read, "?action_type=infrastructure_failure");
    expect(infra).toHaveLength(1);
    let detail = await getTask(ws.read, infra[0]!.id);
    expect(detail.comments).toMatchObject([
      {
        author: "system",
        comment_type: "observation",
        body: expect.stringMatching(/^Gitea still unreachable: POST \/repos\/a_nice_user\/hello_world_ci\/issues\/7\/comments/),
      },
    ]);

    await dispatchWorkspace(env, ws.id); // ops's run crashes: failed, but no route is taken
    detail = await getTask(ws.read, infra[0]!.id);
    expect(detail.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(detail.history.find((h) => h.event === "route_skipped")?.detail).toMatchObject({
      reason: "infrastructure tasks are never routed again",
    });
    expect(fake.issues).toEqual([]);
    expect(await listTasks(ws.read, "?action_type=infrastructure_failure")).toHaveLength(1);
  });
});

describe("an outage through every attempt: a system failure as well", () => {
  it("fails the task as a system failure, tries the supervisor issue, and reports the outage once", async () => {
    const ws = await toolchainWorkspace({ retry: { max_attempts: 1, backoff_ms: 0 } });
    fake.setDown("503");
    await useModel(
      ws,
      "jony",
      new ScriptedModel([toolCalls({ id: "c1", name: "gitea_merge_pull", args: { repo: REPO, number: 7 } }), text("Gitea is down.")]),
    );
    const [id] = (await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, id!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(d.task.last_error).toContain("1 of 1 attempts used, the last ended by an outage");
    expect(events(d).slice(-3)).toEqual(["failed", "route_failed", "routed_infrastructure"]);
    expect(d.history.find((h) => h.event === "route_failed")?.detail).toMatchObject({ route: "issue", kind: "infrastructure" });
    const infra = await listTasks(ws.read, "?action_type=infrastructure_failure");
    expect(infra).toHaveLength(1);
    expect((await getTask(ws.read, infra[0]!.id)).comments).toEqual([]);
    expect(fake.requests.map((r) => `${r.method} ${r.path}`)).toEqual([
      `POST /api/v1/repos/${REPO}/pulls/7/merge`,
      `POST /api/v1/repos/${REPO}/issues`,
    ]);
  });
});

describe("two tasks failing on the same Gitea outage at the same moment", () => {
  it("make one infrastructure task; the later failure is added to it, and both show the route", async () => {
    const ws = await toolchainWorkspace({ concurrency: { max_working: 2, dispatch_on_intake: false } });
    fake.setDown("503");
    await useModel(
      ws,
      "jony",
      new ScriptedModel([toolCalls({ id: "c1", name: "gitea_merge_pull", args: { repo: REPO, number: 7 } }), text("Gitea is down.")]),
    );
    await useModel(
      ws,
      "nice",
      new ScriptedModel([toolCalls({ id: "c1", name: "gitea_get_pull_diff", args: { repo: REPO, number: 7 } }), text("Gitea is down.")]),
    );
    const a = (await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"))).task_ids[0]!;
    const b = (await deliverOk(ws.id, "pull_request_review_request", fixture("pull_request_review_requested"))).task_ids[0]!;
    expect((await dispatchWorkspace(env, ws.id)).started).toBe(2);

    const infra = await listTasks(ws.read, "?action_type=infrastructure_failure");
    expect(infra).toHaveLength(1);
    const routed = await Promise.all(
      [a, b].map(async (id) => (await getTask(ws.read, id)).history.find((h) => h.event === "routed_infrastructure")?.detail),
    );
    expect(routed.map((d) => d?.infra_task_id)).toEqual([infra[0]!.id, infra[0]!.id]);
    expect(routed.filter((d) => d?.added_to_open_task === true)).toHaveLength(1);
    expect((await getTask(ws.read, infra[0]!.id)).comments).toMatchObject([{ author: "system", comment_type: "observation" }]);
  });
});

describe("a crashing agent: system failure", () => {
  it("opens a Gitea issue for the supervisor, whose own failure is not escalated again", async () => {
    const ws = await toolchainWorkspace();
    await useModel(ws, "jony", new ScriptedModel([{ fail: 500 }]));
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"));
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(d.task.last_error).toContain("crashed");
    expect(events(d).slice(-2)).toEqual(["failed", "routed_supervisor_issue"]);
    expect(fake.issues).toHaveLength(1);
    const issue = fake.issues[0]!;
    expect(issue).toMatchObject({ repo: REPO, assignees: ["boss"] });

    // Gitea announces the new issue's assignment: the supervisor gets it as a task...
    const payload = JSON.parse(fixture("issue_assign")) as Record<string, Record<string, unknown>>;
    payload.issue = {
      ...payload.issue,
      number: issue.number,
      title: issue.title,
      body: issue.body,
      assignee: { login: "boss", username: "boss" },
      assignees: [{ login: "boss", username: "boss" }],
    };
    payload.sender = { login: "beaver-bot", username: "beaver-bot" };
    const { task_ids: sup } = await deliverOk(ws.id, "issue_assign", JSON.stringify(payload));
    const supTask = await getTask(ws.read, sup[0]!);
    expect(supTask.task).toMatchObject({ agent_id: "boss", action_type: "issue_assigned", origin_task_id: task_ids[0] });

    // ...and if the supervisor's run crashes too, no second issue is opened.
    await useModel(ws, "boss", new ScriptedModel([{ fail: 500 }]));
    await dispatchWorkspace(env, ws.id);
    const after = await getTask(ws.read, sup[0]!);
    expect(after.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(after.history.find((h) => h.event === "route_skipped")?.detail).toMatchObject({
      reason: `this task is already the escalation of task ${task_ids[0]}`,
    });
    expect(fake.issues).toHaveLength(1);
    expect(swaggerProblems(fake.requests)).toEqual([]);
  });

  it("a disabled agent's task fails as a system failure without a run", async () => {
    const ws = await toolchainWorkspace();
    await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { enabled: false } });
    // Routed while enabled, disabled before dispatch.
    await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { enabled: true } });
    const { task_ids } = await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
    await call("PATCH", "/api/agents/jony", { token: ws.admin, body: { enabled: false } });
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system", last_error: "agent 'jony' is missing or disabled" });
    expect(fake.issues[0]).toMatchObject({ assignees: ["boss"] });
  });
});

describe("a failure whose route cannot be taken still shows in the history, with the reason", () => {
  it("no supervisor: the crash is failed and the skipped issue is recorded", async () => {
    const ws = await toolchainWorkspace();
    await call("PATCH", "/api/agents/boss", { token: ws.admin, body: { enabled: false } });
    await useModel(ws, "jony", new ScriptedModel([{ fail: 500 }]));
    const [id] = (await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, id!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(d.history.slice(-2)).toMatchObject([
      { event: "failed", to_status: "failed" },
      { event: "route_skipped", detail: { reason: "no enabled supervisor agent" } },
    ]);
    expect(fake.requests).toEqual([]);
  });

  it("no Gitea configured: the notice that cannot be posted is recorded", async () => {
    const ws = await toolchainWorkspace({ gitea_base_url: undefined });
    await useModel(ws, "jony", new ScriptedModel([{ fail: 500 }]));
    const [id] = (await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    expect(events(await getTask(ws.read, id!)).slice(-2)).toEqual(["failed", "route_skipped"]);
    expect((await getTask(ws.read, id!)).history.at(-1)!.detail).toMatchObject({ reason: "no toolchain.gitea_base_url configured" });
  });

  it("no PR or issue to comment on: the business failure is retried and the skipped comment recorded", async () => {
    const ws = await toolchainWorkspace();
    await useModel(ws, "ops", new ScriptedModel([text("Looked at it.")]));
    const [id] = (await deliverOk(ws.id, "status", fixture("status_deploy_error"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, id!);
    expect(d.task).toMatchObject({ status: "pending", failure_kind: "business" });
    expect(d.history.slice(-2)).toMatchObject([
      { event: "retry_scheduled" },
      { event: "route_skipped", detail: { reason: "no pull request or issue to comment on" } },
    ]);
  });

  it("no infra agent: the outage is retried and the skipped infrastructure task recorded", async () => {
    const ws = await toolchainWorkspace();
    await call("PATCH", "/api/agents/ops", { token: ws.admin, body: { enabled: false } });
    fake.setDown("503");
    await useModel(
      ws,
      "jony",
      new ScriptedModel([toolCalls({ id: "c1", name: "gitea_merge_pull", args: { repo: REPO, number: 7 } }), text("Gitea is down.")]),
    );
    const [id] = (await deliverOk(ws.id, "pull_request_review_approved", fixture("HookPullRequestReviewAck"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    const d = await getTask(ws.read, id!);
    expect(d.task).toMatchObject({ status: "pending", failure_kind: "infrastructure" });
    expect(d.history.slice(-2)).toMatchObject([
      { event: "retry_scheduled" },
      { event: "route_skipped", detail: { route: "infrastructure", reason: "no enabled infra agent" } },
    ]);
    expect(await listTasks(ws.read, "?action_type=infrastructure_failure")).toEqual([]);
  });
});

describe("no report within the window: one reminder, then a system failure", () => {
  it("reminds once, then fails and escalates", async () => {
    const ws = await toolchainWorkspace({ timeouts: { run_wait_ms: 1_000, report_window_ms: 1_000 } });
    const jony = new ScriptedModel([{ hang: true }]);
    await useModel(ws, "jony", jony);
    const { task_ids } = await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
    await dispatchWorkspace(env, ws.id);
    expect((await getTask(ws.read, task_ids[0]!)).task.status).toBe("working");

    expect((await dispatchWorkspace(env, ws.id, Date.now() + 5_000)).reminded).toBe(1);
    let d = await getTask(ws.read, task_ids[0]!);
    expect(events(d).slice(-2)).toEqual(["reminder_sent", "run_started"]);
    expect(d.task.status).toBe("working");

    await dispatchWorkspace(env, ws.id, Date.now() + 10_000);
    d = await getTask(ws.read, task_ids[0]!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(d.task.last_error).toContain("even after a reminder");
    expect(fake.issues).toHaveLength(1);
  });

  it("a run whose state cannot be read is not a task stuck forever: the window still applies", async () => {
    const ws = await toolchainWorkspace({ timeouts: { run_wait_ms: 1_000, report_window_ms: 1_000 } });
    await useModel(ws, "jony", new ScriptedModel([{ hang: true }]));
    const [id] = (await deliverOk(ws.id, "issue_assign", fixture("issue_assign"))).task_ids;
    await dispatchWorkspace(env, ws.id);
    // The task points at a run in a session that does not exist (lost, or never created).
    await transition(env, ws.id, id!, {
      from: ["working"],
      to: "working",
      set: { session_id: "task:lost", run_id: "run_lost" },
      event: "test_lost_run",
    });
    expect((await dispatchWorkspace(env, ws.id, Date.now() + 5_000)).reminded).toBe(1);
    // The reminder runs in the task's own session again, and the task points there.
    expect((await getTask(ws.read, id!)).history.at(-1)).toMatchObject({
      event: "run_started",
      detail: { session_id: `task:${id}`, reminder: true },
    });
    await dispatchWorkspace(env, ws.id, Date.now() + 10_000);
    const d = await getTask(ws.read, id!);
    expect(d.task).toMatchObject({ status: "failed", failure_kind: "system" });
    expect(events(d).filter((e) => e === "run_unreadable")).toHaveLength(1);
    expect(fake.issues).toHaveLength(1);
  });

  it("a report that arrives late still completes the task", async () => {
    const ws = await toolchainWorkspace({ timeouts: { run_wait_ms: 1_000, report_window_ms: 1_000 } });
    await useModel(ws, "jony", new ScriptedModel([{ hang: true }]));
    const { task_ids } = await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
    await dispatchWorkspace(env, ws.id);
    await call("POST", `/api/toolchain/tasks/${task_ids[0]}/comments`, {
      token: ws.member,
      body: { author: "jony", comment_type: "action_report", body: "Opened PR #14 for the health endpoint." },
    });
    await dispatchWorkspace(env, ws.id, Date.now() + 5_000);
    const d = await getTask(ws.read, task_ids[0]!);
    expect(d.task.status).toBe("done");
    expect(d.history.at(-1)!.detail).toMatchObject({ reason: "has_action_report", late: true });
  });
});

describe("dispatch triggers", () => {
  it("runs a task right after intake when the workspace dispatches on intake", async () => {
    const ws = await toolchainWorkspace({ concurrency: { dispatch_on_intake: true } });
    await useModel(
      ws,
      "nice",
      new ScriptedModel([
        toolCalls({ id: "c1", name: "gitea_submit_review", args: { repo: REPO, number: 7, event: "APPROVED", body: "LGTM" } }),
        toolCalls({ id: "c2", name: "toolchain_report", args: { summary: "Approved #7." } }),
        text("ok"),
      ]),
    );
    const { task_ids } = await deliverOk(ws.id, "pull_request_review_request", fixture("pull_request_review_requested"));
    await until(async () => (await getTask(ws.read, task_ids[0]!)).task.status === "done", 10_000, "the task to be done");
    expect(fake.reviews).toMatchObject([{ repo: REPO, number: 7, event: "APPROVED" }]);
  });

  it("the cron tick dispatches every workspace with work, bounded by its concurrency", async () => {
    const ws = await toolchainWorkspace({ concurrency: { max_working: 1, dispatch_on_intake: false } });
    await useModel(
      ws,
      "jony",
      new ScriptedModel([toolCalls({ id: "c1", name: "toolchain_report", args: { summary: "Handled." } }), text("ok")]),
    );
    await useModel(
      ws,
      "ops",
      new ScriptedModel([toolCalls({ id: "c1", name: "toolchain_report", args: { summary: "Redeployed." } }), text("ok")]),
    );
    await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
    await deliverOk(ws.id, "status", fixture("status_deploy_error"));
    const tick = () => runScheduled(env, Date.now());
    await tick();
    expect((await listTasks(ws.read, "?status=done")).length).toBe(1);
    await tick();
    expect((await listTasks(ws.read, "?status=done")).length).toBe(2);
  });
});
