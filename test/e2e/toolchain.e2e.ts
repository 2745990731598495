/**
 * The Gitea toolchain against a real `wrangler dev`: signed webhooks over HTTP become tasks, agent
 * runs go to the scripted OpenAI-compatible server, Gitea tools and failure routes call the fake
 * Gitea over HTTP — and every request Beaver sent to Gitea is checked against Gitea's own API
 * description (swagger.v1.22.json): method, path, parameters and body fields.
 */
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { outcomeAfter } from "./deliveries.ts";
import { fakeGiteaControl, type RecordedRequest } from "../support/fake-gitea.ts";
import { scriptedModelClient, type ScriptedStep } from "../support/scripted-openai.ts";
import { checkAgainstSwagger, mergeSwagger, operationOf, type SwaggerDoc } from "../support/swagger-check.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const readSwagger = (path: string) => JSON.parse(readFileSync(resolve(ROOT, path), "utf8")) as SwaggerDoc;
// Gitea 1.22's description plus the newer Actions operations (as test/support/swagger.ts): the fake Gitea is
// shared by every e2e file, so the check below also sees toolchain-code.e2e.ts's CI-log reads when it ran first.
const SWAGGER = mergeSwagger(
  readSwagger("test/fixtures/upstream/gitea/swagger.v1.22.json"),
  readSwagger("test/fixtures/gitea/swagger.actions.json"),
);
const SECRET = "e2e-webhook-secret";
const giteaUrl = inject("giteaUrl");
const modelUrl = inject("modelUrl");
const gitea = fakeGiteaControl(giteaUrl);
const models = scriptedModelClient(modelUrl);
const rand = () => randomBytes(4).toString("hex");

function payload(name: string, repo: string): string {
  const upstream = resolve(ROOT, "test/fixtures/upstream/gitea/webhooks", `${name}.json`);
  const own = resolve(ROOT, "test/fixtures/gitea", `${name}.json`);
  let text: string;
  try {
    text = readFileSync(own, "utf8");
  } catch {
    text = readFileSync(upstream, "utf8");
  }
  const body = JSON.parse(text) as { repository: { full_name: string } };
  body.repository.full_name = repo;
  return JSON.stringify(body);
}

async function deliver(ws: string, eventType: string, body: string, opts: { id?: string; sign?: boolean } = {}) {
  const headers: Record<string, string> = {
    "Content-Type": "application/json",
    "X-Gitea-Event-Type": eventType,
    "X-Gitea-Delivery": opts.id ?? `e2e-${rand()}`,
  };
  if (opts.sign !== false) headers["X-Gitea-Signature"] = createHmac("sha256", SECRET).update(body).digest("hex");
  // The exact bytes that were signed (the api() helper would re-serialise a body).
  return fetch(`${inject("baseUrl")}/webhooks/gitea/${ws}`, { method: "POST", headers, body });
}

interface Setup {
  id: string;
  token: string;
  repo: string;
  model: (agent: string) => string;
}

const AGENTS = [
  { id: "jony", gitea_username: "jony", roles: ["developer"] },
  { id: "nice", gitea_username: "a_nice_user", roles: ["reviewer"] },
  { id: "ops", gitea_username: "infra-bot", roles: ["infra"] },
  { id: "boss", gitea_username: "boss", roles: ["supervisor"] },
];

/** A workspace targeted by the fake Gitea, each agent with its own scripted model id. */
async function setup(toolchain: Record<string, unknown> = {}, workspace: Record<string, unknown> = {}): Promise<Setup> {
  const ws = await newWorkspace();
  const repo = `e2e-${rand()}/hello_world_ci`;
  const tag = rand();
  const model = (agent: string) => `echo:tc-${tag}-${agent}`;
  for (const [name, value] of [
    ["GITEA_WEBHOOK_SECRET", SECRET],
    ["GITEA_TOKEN", "e2e-bot-token"],
  ]) {
    expect((await api("PUT", `/api/secrets/${name}`, { token: ws.token, body: { value } })).status).toBe(200);
  }
  const config = {
    ...workspace,
    toolchain: {
      gitea_base_url: giteaUrl,
      webhook_secret: "GITEA_WEBHOOK_SECRET",
      gitea_token_secret: "GITEA_TOKEN",
      retry: { backoff_ms: 0 },
      ...toolchain,
    },
  };
  expect((await api("PUT", "/api/config", { token: ws.token, body: config })).status).toBe(200);
  for (const a of AGENTS) {
    const res = await api("POST", "/api/agents", {
      token: ws.token,
      body: { ...a, model: { provider: "openai-compatible", id: model(a.id), base_url: `${modelUrl}/v1` } },
    });
    expect(res.status).toBe(201);
  }
  await gitea.addRepo(repo, { files: { "main.go": "package main\n" } });
  await gitea.addPull(repo, {
    number: 7,
    author: "jony",
    headRef: "jony-patch-1",
    headSha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
    title: "somepull",
  });
  await gitea.addToken("e2e-bot-token", "beaver-bot");
  return { id: ws.id, token: ws.token, repo, model };
}

interface Task {
  id: string;
  status: string;
  agent_id: string;
  action_type: string;
  failure_kind: string | null;
  attempts: number;
}

async function task(s: Setup, id: string): Promise<{ task: Task; history: { event: string }[]; comments: { comment_type: string }[] }> {
  const res = await api("GET", `/api/toolchain/tasks/${id}`, { token: s.token });
  expect(res.status).toBe(200);
  return (await res.json()) as { task: Task; history: { event: string }[]; comments: { comment_type: string }[] };
}

async function until<T>(what: string, read: () => Promise<T>, ok: (v: T) => boolean, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await read();
    if (ok(v)) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(v)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const forRepo = (requests: RecordedRequest[], repo: string) => requests.filter((r) => r.path.includes(`/repos/${repo}/`));
const problems = (requests: RecordedRequest[]) => requests.flatMap((r) => checkAgainstSwagger(SWAGGER, r));

afterAll(async () => {
  // Every request any test made Beaver send is a documented Gitea API call.
  const { requests } = await gitea.state();
  expect(requests.length).toBeGreaterThan(0);
  expect(problems(requests)).toEqual([]);
});

describe("e2e: webhook intake over HTTP", () => {
  it("accepts signed deliveries only, answers redeliveries with the first outcome, and lists them", async () => {
    const s = await setup({ concurrency: { dispatch_on_intake: false } });
    const body = payload("HookPullRequestReviewDeny", s.repo);
    expect((await deliver(s.id, "pull_request_review_rejected", body, { sign: false })).status).toBe(401);
    const first = await deliver(s.id, "pull_request_review_rejected", body, { id: "e2e-once" });
    expect(first.status).toBe(202);
    const firstBody = await outcomeAfter(s.token, first);
    expect(firstBody.outcome).toBe("tasks_created");
    const again = await deliver(s.id, "pull_request_review_rejected", body, { id: "e2e-once" });
    expect(again.status).toBe(200);
    expect(await again.json()).toMatchObject({ duplicate: true, task_ids: firstBody.task_ids });
    const oops = await deliver(s.id, "pull_request", "{oops");
    expect(oops.status).toBe(202);
    expect(await outcomeAfter(s.token, oops)).toMatchObject({ outcome: "rejected", reason: "Body is not valid JSON" });
    const list = (await (await api("GET", "/api/toolchain/deliveries", { token: s.token })).json()) as {
      deliveries: { outcome: string }[];
    };
    expect(list.deliveries.map((d) => d.outcome).sort()).toEqual(["rejected", "tasks_created"]);
  });
});

describe("e2e: agent runs through the scripted model server and the fake Gitea", () => {
  it("a reporting agent merges the approved PR and the task is done", async () => {
    const s = await setup();
    const steps: ScriptedStep[] = [
      { tool_calls: [{ name: "gitea_get_pull", arguments: { repo: s.repo, number: 7 } }] },
      { tool_calls: [{ name: "gitea_merge_pull", arguments: { repo: s.repo, number: 7, method: "squash" } }] },
      { tool_calls: [{ name: "toolchain_report", arguments: { summary: `Merged ${s.repo}#7 (squash) after the approval.` } }] },
      { text: "Done." },
    ];
    await models.script(s.model("jony"), steps);
    const res = await deliver(s.id, "pull_request_review_approved", payload("HookPullRequestReviewAck", s.repo));
    expect(res.status).toBe(202);
    const { task_ids } = await outcomeAfter(s.token, res);
    const done = await until(
      "the task to be done",
      () => task(s, task_ids[0]!),
      (t) => t.task.status !== "pending" && t.task.status !== "working",
    );
    expect(done.task).toMatchObject({ status: "done", agent_id: "jony", attempts: 1 });
    expect(done.comments.map((c) => c.comment_type)).toEqual(["action_report"]);
    const state = await gitea.state();
    expect(state.merges).toContainEqual({ repo: s.repo, number: 7, method: "squash" });
    const mine = forRepo(state.requests, s.repo);
    expect(mine.map((r) => `${r.method} ${r.path.replace(`/repos/${s.repo}`, "/repos/{repo}")}`)).toEqual([
      "GET /api/v1/repos/{repo}/pulls/7",
      "POST /api/v1/repos/{repo}/pulls/7/merge",
    ]);
    expect(mine.every((r) => r.authorization === "Bearer e2e-bot-token")).toBe(true);
    expect(problems(mine)).toEqual([]);
    // The model was given the steps with the real repo and API call.
    const sent = await models.requests(s.model("jony"));
    expect(JSON.stringify(sent[0]?.body.messages)).toContain(`POST /repos/${s.repo}/pulls/7/merge`);
  });

  it("an agent using every Gitea tool, and a CI failure resolved through Gitea: each request is a documented Gitea API call", async () => {
    // Thirteen tool calls in one run: more than a chat turn may take (runtime.max_tool_iterations
    // is set to 8 here), within what a task run may take (toolchain.max_tool_iterations, 40).
    const s = await setup({}, { runtime: { max_tool_iterations: 8 } });
    const call = (name: string, args: Record<string, unknown>): ScriptedStep => ({ tool_calls: [{ name, arguments: args }] });
    await models.script(s.model("nice"), [
      call("gitea_get_pull", { repo: s.repo, number: 7 }),
      call("gitea_get_pull_diff", { repo: s.repo, number: 7 }),
      call("gitea_list_pull_files", { repo: s.repo, number: 7 }),
      call("gitea_read_file", { repo: s.repo, path: "main.go", ref: "jony-patch-1" }),
      call("gitea_submit_review", { repo: s.repo, number: 7, event: "REQUEST_CHANGES", body: "Please add a test." }),
      call("gitea_comment", { repo: s.repo, number: 7, body: "@jony see my review" }),
      call("gitea_create_branch", { repo: s.repo, name: "fix/7-test", from: "jony-patch-1" }),
      call("gitea_change_files", {
        repo: s.repo,
        branch: "fix/7-test",
        message: "Add a test",
        files: [
          { operation: "update", path: "main.go", content: "package main\n\nfunc main() {}\n" },
          { operation: "create", path: "main_test.go", content: "package main\n" },
        ],
      }),
      call("gitea_create_pull", { repo: s.repo, title: "Add a test", head: "fix/7-test", base: "main", body: "For #7" }),
      call("gitea_create_issue", { repo: s.repo, title: "Flaky CI", body: "Seen while reviewing #7", assignees: ["infra-bot"] }),
      call("gitea_merge_pull", { repo: s.repo, number: 7, method: "rebase", delete_branch: false }),
      call("toolchain_output", { content: "review notes", type: "markdown" }),
      call("toolchain_report", { summary: `Reviewed ${s.repo}#7, asked for a test, opened a PR with it.` }),
      { text: "Done." },
    ]);
    const res = await deliver(s.id, "pull_request_review_request", payload("pull_request_review_requested", s.repo));
    expect(res.status).toBe(202);
    const { task_ids } = await outcomeAfter(s.token, res);
    const done = await until(
      "the review task to be done",
      () => task(s, task_ids[0]!),
      (t) => t.task.status === "done" || t.task.status === "failed",
    );
    expect(done.task.status, JSON.stringify(done.history)).toBe("done");

    // A failed commit status on a commit the PR index does not know: Beaver asks Gitea for its PR.
    const status = JSON.parse(payload("status_failure_unindexed", s.repo)) as { sha: string };
    await gitea.addPull(s.repo, { number: 30, author: "jony", headRef: "jony-other", headSha: status.sha, title: "Other" });
    const ci = await deliver(s.id, "status", JSON.stringify(status));
    expect(await outcomeAfter(s.token, ci)).toMatchObject({ outcome: "tasks_created" });

    const mine = forRepo((await gitea.state()).requests, s.repo);
    const operations = new Set(mine.map((r) => operationOf(SWAGGER, r)));
    expect([...operations].sort()).toEqual(
      [
        "GET /repos/{owner}/{repo}/pulls/{index}",
        "GET /repos/{owner}/{repo}/pulls/{index}.{diffType}",
        "GET /repos/{owner}/{repo}/pulls/{index}/files",
        "GET /repos/{owner}/{repo}/contents/{filepath}",
        "POST /repos/{owner}/{repo}/pulls/{index}/reviews",
        "POST /repos/{owner}/{repo}/issues/{index}/comments",
        "POST /repos/{owner}/{repo}/branches",
        "POST /repos/{owner}/{repo}/contents",
        "POST /repos/{owner}/{repo}/pulls",
        "POST /repos/{owner}/{repo}/issues",
        "POST /repos/{owner}/{repo}/pulls/{index}/merge",
        "GET /repos/{owner}/{repo}/commits/{sha}/pull",
      ].sort(),
    );
    expect(problems(mine)).toEqual([]);
  });

  it("an agent that ignores the steps gets PR comments and retries, then the supervisor gets an issue", async () => {
    const s = await setup();
    const res = await deliver(s.id, "pull_request_review_rejected", payload("HookPullRequestReviewDeny", s.repo));
    const { task_ids } = await outcomeAfter(s.token, res);
    const id = task_ids[0]!;
    await until(
      "the first attempt to fail",
      () => task(s, id),
      (t) => t.task.attempts === 1 && t.task.status === "pending",
    );
    for (let i = 0; i < 2; i++) expect((await api("POST", "/api/toolchain/dispatch", { token: s.token })).status).toBe(200);
    const failed = await until(
      "the task to fail",
      () => task(s, id),
      (t) => t.task.status === "failed",
    );
    expect(failed.task).toMatchObject({ failure_kind: "system", attempts: 3 });
    const state = await gitea.state();
    const comments = state.comments.filter((c) => c.repo === s.repo);
    expect(comments).toHaveLength(3);
    expect(comments.every((c) => c.body.startsWith("@jony ") && c.number === 7 && c.author === "beaver-bot")).toBe(true);
    expect(state.issues.filter((i) => i.repo === s.repo)).toMatchObject([{ assignees: ["boss"] }]);
    expect(problems(forRepo(state.requests, s.repo))).toEqual([]);
  });

  it("while Gitea is down, the failure becomes an infrastructure task for infra, created without Gitea", async () => {
    const s = await setup();
    await models.script(s.model("jony"), [
      { tool_calls: [{ name: "gitea_merge_pull", arguments: { repo: s.repo, number: 7 } }] },
      { text: "Gitea does not answer." },
    ]);
    await gitea.setDown("503");
    try {
      const res = await deliver(s.id, "pull_request_review_approved", payload("HookPullRequestReviewAck", s.repo));
      const { task_ids } = await outcomeAfter(s.token, res);
      const after = await until(
        "the infrastructure failure",
        () => task(s, task_ids[0]!),
        (t) => t.task.failure_kind === "infrastructure",
      );
      expect(after.history.map((h) => h.event)).toContain("routed_infrastructure");
    } finally {
      await gitea.setDown(false);
    }
    const infra = (await (await api("GET", "/api/toolchain/tasks?action_type=infrastructure_failure", { token: s.token })).json()) as {
      tasks: Task[];
    };
    expect(infra.tasks.map((t) => t.agent_id)).toEqual(["ops"]);
    const mine = forRepo((await gitea.state()).requests, s.repo);
    expect(mine.map((r) => r.method + " " + r.path.split(s.repo)[1])).toEqual(["POST /pulls/7/merge"]);
  });

  it("a crashing model run fails as a system failure and opens a supervisor issue", async () => {
    const s = await setup();
    // `down:` ids make the scripted server answer HTTP 500 to every call.
    expect(
      (
        await api("PATCH", "/api/agents/jony", {
          token: s.token,
          body: { model: { provider: "openai-compatible", id: `down:${rand()}`, base_url: `${modelUrl}/v1` } },
        })
      ).status,
    ).toBe(200);
    const res = await deliver(s.id, "issue_assign", payload("issue_assign", s.repo));
    const { task_ids } = await outcomeAfter(s.token, res);
    const failed = await until(
      "the crash to be routed",
      () => task(s, task_ids[0]!),
      (t) => t.history.some((h) => h.event === "routed_supervisor_issue"),
    );
    expect(failed.task).toMatchObject({ status: "failed", failure_kind: "system" });
    const issues = (await gitea.state()).issues.filter((i) => i.repo === s.repo);
    expect(issues).toHaveLength(1);
    expect(issues[0]!.assignees).toEqual(["boss"]);
    expect(issues[0]!.body).toContain(`<!-- beaver:system-failure task=${task_ids[0]} -->`);
  });
});
