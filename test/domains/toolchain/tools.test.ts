/** The toolchain and Gitea tools called directly, as the agent loop calls them, on real stored tasks. */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env as workerEnv } from "cloudflare:workers";
import { call } from "../../support/api.ts";
import { setOutboundFetch, testEnv } from "../../support/test-services.ts";
import { transition } from "../../../src/domains/toolchain/task-store.ts";
import { toolchainCodeTools } from "../../../src/domains/toolchain/tools.ts";
import type { ToolContext, ToolResult } from "../../../src/runtime/tools/spec.ts";
import { FakeGitea } from "../../support/fake-gitea.ts";
import { swaggerProblems } from "../../support/swagger.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import { deliverOk, getTask, toolchainWorkspace, GITEA_URL } from "../../support/toolchain-setup.ts";

/** The Worker environment with the fake Gitea as its outbound fetch (test/support/test-services.ts). */
const env = testEnv(workerEnv);

const REPO = "a_nice_user/hello_world_ci";
let fake: FakeGitea;
beforeEach(() => {
  fake = new FakeGitea(GITEA_URL);
  fake.addRepo(REPO, { files: { "docs/guide.md": "Grüße — old text\n" } });
  fake.addPull(REPO, { number: 7, author: "jony", headRef: "jony-patch-1", title: "somepull" });
  setOutboundFetch(fake.fetch);
});
afterEach(() => setOutboundFetch(null));

const tool = (name: string) => toolchainCodeTools().find((t) => t.name === name)!;

async function workingTask(toolchain: Record<string, unknown> = {}) {
  const ws = await toolchainWorkspace(toolchain);
  const { task_ids } = await deliverOk(ws.id, "pull_request_review_rejected", fixture("HookPullRequestReviewDeny"));
  const id = task_ids[0]!;
  await transition(env, ws.id, id, { from: ["pending"], to: "working", set: { session_id: `task:${id}`, attempts: 1 }, event: "claimed" });
  const ctx = (over: Partial<ToolContext> = {}): ToolContext => ({
    env,
    workspaceId: ws.id,
    sessionId: `task:${id}`,
    runId: "run_test",
    toolCallId: "call_1",
    signal: new AbortController().signal,
    data: { task_id: id, agent_id: "jony" },
    emitUpdate: () => undefined,
    ...over,
  });
  return { ws, id, ctx };
}

const run = (name: string, args: unknown, ctx: ToolContext): Promise<ToolResult> => tool(name).execute(tool(name).input.parse(args), ctx);

describe("reporting tools", () => {
  it("record the report, outputs and notes on the task, as the agent", async () => {
    const { ws, id, ctx } = await workingTask();
    expect((await run("toolchain_comment", { body: "Looking at the review now", comment_type: "observation" }, ctx())).ok).toBe(true);
    expect((await run("toolchain_output", { content: "diff --git …", type: "diff" }, ctx())).ok).toBe(true);
    expect((await run("toolchain_report", { summary: "Changed the greeting as asked." }, ctx())).ok).toBe(true);
    const d = await getTask(ws.read, id);
    expect(d.comments.map((c) => [c.author, c.comment_type])).toEqual([
      ["jony", "observation"],
      ["jony", "action_report"],
    ]);
    expect(d.outputs).toMatchObject([{ type: "diff" }]);
    expect(d.history.at(-1)).toMatchObject({ event: "reported", detail: { run_id: "run_test" } });
    // A note cannot pretend to be the report.
    expect(() => tool("toolchain_comment").input.parse({ body: "x", comment_type: "action_report" })).toThrow();
  });

  it("refuse runs of other sessions, runs without a task, and tasks that are no longer working", async () => {
    const { ws, id, ctx } = await workingTask();
    expect((await run("toolchain_report", { summary: "x" }, ctx({ sessionId: "ses_someone_else" }))).error?.code).toBe("not_task_session");
    expect((await run("toolchain_report", { summary: "x" }, ctx({ data: {} }))).error?.code).toBe("no_task");
    expect((await run("toolchain_report", { summary: "x" }, ctx({ data: { task_id: "tct_nope" } }))).error?.code).toBe("no_task");
    const other = await toolchainWorkspace();
    expect((await run("toolchain_report", { summary: "x" }, ctx({ workspaceId: other.id }))).error?.code).toBe("no_task");
    await call("POST", `/api/toolchain/tasks/${id}/cancel`, { token: ws.member });
    expect((await run("toolchain_report", { summary: "x" }, ctx())).error?.code).toBe("task_not_working");
    expect((await getTask(ws.read, id)).comments).toEqual([]);
  });
});

describe("Gitea tools", () => {
  it("read and change files: plain text in, base64 and the current blob sha to Gitea", async () => {
    const { ctx } = await workingTask();
    const read = await run("gitea_read_file", { repo: REPO, path: "docs/guide.md", ref: "jony-patch-1" }, ctx());
    expect(read).toMatchObject({ ok: true, content: "Grüße — old text\n" });
    const change = await run(
      "gitea_change_files",
      {
        repo: REPO,
        branch: "jony-patch-1",
        message: "Update the guide",
        files: [
          { operation: "update", path: "docs/guide.md", content: "Grüße — new text\n" },
          { operation: "create", path: "docs/new.md", content: "new" },
        ],
      },
      ctx(),
    );
    expect(change.ok, change.content).toBe(true);
    expect(fake.file(REPO, "jony-patch-1", "docs/guide.md")).toBe("Grüße — new text\n");
    const post = fake.requests.find((r) => r.method === "POST")!;
    expect(post.body).toMatchObject({
      branch: "jony-patch-1",
      files: [
        { operation: "update", path: "docs/guide.md", sha: expect.any(String) },
        { operation: "create", path: "docs/new.md" },
      ],
    });
    expect(swaggerProblems(fake.requests)).toEqual([]);
    expect((await run("gitea_get_pull_diff", { repo: REPO, number: 7 }, ctx())).content).toContain("+new from PR 7");
    expect(JSON.parse((await run("gitea_list_pull_files", { repo: REPO, number: 7 }, ctx())).content)).toEqual([
      { filename: "README.md", status: "modified", additions: 1, deletions: 1 },
    ]);
  });

  it("report Gitea's business errors to the model, and record outages on the task", async () => {
    const { ws, id, ctx } = await workingTask();
    const missing = await run("gitea_get_pull", { repo: REPO, number: 99 }, ctx());
    expect(missing).toMatchObject({ ok: false, error: { code: "gitea_error" } });
    expect(missing.content).toContain("404");
    fake.setDown("503");
    const down = await run("gitea_comment", { repo: REPO, number: 7, body: "hi" }, ctx());
    expect(down).toMatchObject({ ok: false, error: { code: "gitea_unreachable" } });
    const h = (await getTask(ws.read, id)).history.at(-1)!;
    expect(h).toMatchObject({
      event: "gitea_unreachable",
      detail: { run_id: "run_test", operation: `POST /repos/${REPO}/issues/7/comments` },
    });
    expect(() => tool("gitea_comment").input.parse({ repo: "not a repo", number: 7, body: "x" })).toThrow();
  });

  it("do nothing in Gitea for a task that is no longer working (a run still in flight after a cancel)", async () => {
    const { ws, id, ctx } = await workingTask();
    await call("POST", `/api/toolchain/tasks/${id}/cancel`, { token: ws.member });
    for (const [name, args] of [
      ["gitea_merge_pull", { repo: REPO, number: 7 }],
      ["gitea_comment", { repo: REPO, number: 7, body: "late" }],
      ["gitea_get_pull", { repo: REPO, number: 7 }],
    ] as const) {
      expect((await run(name, args, ctx())).error?.code, name).toBe("task_not_working");
    }
    expect(fake.requests).toEqual([]);
    expect(fake.pull(REPO, 7)?.merged).toBe(false);
  });

  it("say so when the workspace has no Gitea configured", async () => {
    const { ctx } = await workingTask({ gitea_base_url: undefined });
    expect((await run("gitea_get_pull", { repo: REPO, number: 7 }, ctx())).error?.code).toBe("gitea_not_configured");
    expect(fake.requests).toEqual([]);
  });
});

describe("gitea_ci_logs", () => {
  const SHA = "5f3a9c0d1e2b4a6f8c7d9e0a1b2c3d4e5f6a7b8c";
  // A 40 KB log: the failing test and a token printed by a careless step are at its end, where the tail is.
  const longLog = (last: string) =>
    `${Array.from({ length: 800 }, (_, i) => `2024-05-02T09:00:00Z step output line ${i} ${"x".repeat(30)}`).join("\n")}\n${last}\n`;
  const token = `ghp_${"A1b2C3d4E5".repeat(4)}`;

  it("reads the failed job named by the check's link: the log's tail only, bounded and redacted, through documented calls", async () => {
    const { ctx } = await workingTask();
    fake.addRun(REPO, { runNumber: 3, headSha: "0".repeat(40), jobs: [{ name: "test", conclusion: "success", log: "old run\n" }] });
    const run7 = fake.addRun(REPO, {
      runNumber: 7,
      headSha: SHA,
      jobs: [
        { name: "lint", conclusion: "success", log: "lint ok\n" },
        { name: "test", conclusion: "failure", log: longLog(`FAIL test/routes.test.ts > rejects /broken\nexport GITEA_TOKEN=${token}`) },
      ],
    });
    const byLink = await run("gitea_ci_logs", { repo: REPO, target_url: run7.jobs[1]!.html_url, sha: SHA }, ctx());
    expect(byLink.ok, byLink.content).toBe(true);
    expect(byLink.content).toContain(`run #7 (id ${run7.id}, failure, commit ${SHA.slice(0, 12)})`);
    expect(byLink.content).toContain('job "test"');
    expect(byLink.content).toContain("FAIL test/routes.test.ts > rejects /broken");
    expect(byLink.content).toContain("GITEA_TOKEN=[redacted]");
    expect(byLink.content).not.toContain(token);
    expect(byLink.content).not.toContain("step output line 0 "); // the head of the log is left out…
    expect(byLink.content).toMatch(/the last \d+ of \d+ bytes/);
    expect(new TextEncoder().encode(byLink.content).byteLength).toBeLessThan(16 * 1024 + 300); // …within ci_log_tail_bytes
    // Without a job in the link (or with the commit only) the failed jobs are read, never the passing ones.
    const bySha = await run("gitea_ci_logs", { repo: REPO, sha: SHA }, ctx());
    expect(bySha.content).toContain("FAIL test/routes.test.ts");
    expect(bySha.content).not.toContain("lint ok");
    const byRun = await run("gitea_ci_logs", { repo: REPO, target_url: run7.html_url }, ctx());
    expect(byRun.content).toContain('job "test"');
    expect(byRun.content).not.toContain('job "lint"');
    expect(swaggerProblems(fake.requests)).toEqual([]);
    expect(fake.requests.find((r) => r.path.endsWith("/actions/runs"))?.query).toMatchObject({ head_sha: SHA });
  });

  it("answers readable tool errors: an older Gitea without the Actions API, no such run, no failed job, a link that is not a run", async () => {
    const { ctx } = await workingTask();
    fake.addRun(REPO, { runNumber: 2, headSha: SHA, jobs: [{ name: "test", conclusion: "success", log: "ok\n" }] });
    expect(await run("gitea_ci_logs", { repo: REPO, sha: SHA }, ctx())).toMatchObject({
      ok: false,
      error: { code: "ci_run_not_found" },
    });
    const noJob = await run("gitea_ci_logs", { repo: REPO, target_url: `https://gitea.test/${REPO}/actions/runs/2` }, ctx());
    expect(noJob).toMatchObject({ ok: false, error: { code: "ci_job_not_found" } });
    expect(noJob.content).toContain('"test" success');
    expect((await run("gitea_ci_logs", { repo: REPO, target_url: `https://gitea.test/${REPO}/actions/runs/9` }, ctx())).error?.code).toBe(
      "ci_run_not_found",
    );
    expect((await run("gitea_ci_logs", { repo: REPO, target_url: "https://ci.example.org/build/5" }, ctx())).error?.code).toBe(
      "invalid_input",
    );
    expect(
      (await run("gitea_ci_logs", { repo: REPO, target_url: "https://gitea.test/other/repo/actions/runs/2" }, ctx())).error?.code,
    ).toBe("invalid_input");
    expect((await run("gitea_ci_logs", { repo: REPO }, ctx())).error?.code).toBe("invalid_input");
    fake.setActionsApi(false);
    for (const args of [{ sha: SHA }, { job_id: 1234 }]) {
      const old = await run("gitea_ci_logs", { repo: REPO, ...args }, ctx());
      expect(old).toMatchObject({ ok: false, error: { code: "gitea_no_actions_api" } });
      expect(old.content).toContain("no Actions log API");
    }
  });
});
