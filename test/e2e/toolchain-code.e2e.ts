/**
 * The toolchain's code scenarios end to end (docs/toolchain.md, "Code scenarios"; issue 21's Done-when):
 * signed Gitea webhooks on `wrangler dev` become tasks whose runs get the workspace, the shell and git;
 * the scripted agent clones from a real git server (`git http-backend`, test/support/git-server.ts, on
 * the same origin as the fake Gitea), greps, edits, commits and pushes; the task is verified against
 * the branch head it pushed; `git log` in the bare repository shows the commit, its author and the
 * exact file contents. Every Gitea API request is checked against Gitea's swagger.
 */
import { createHmac, randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { outcomeAfter } from "./deliveries.ts";
import { api, newWorkspace } from "./client.ts";
import { fakeGiteaControl } from "../support/fake-gitea.ts";
import { scriptedModelClient, type ScriptedStep } from "../support/scripted-openai.ts";
import { checkAgainstSwagger, mergeSwagger, type SwaggerDoc } from "../support/swagger-check.ts";
import { pushFromElsewhere, startGitServer, type GitServer } from "../support/git-server.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const readDoc = (path: string) => JSON.parse(readFileSync(resolve(ROOT, path), "utf8")) as SwaggerDoc;
// Gitea 1.22's description plus the newer Actions operations gitea_ci_logs calls (test/fixtures/gitea/README.md).
const SWAGGER = mergeSwagger(
  readDoc("test/fixtures/upstream/gitea/swagger.v1.22.json"),
  readDoc("test/fixtures/gitea/swagger.actions.json"),
);
const SECRET = "e2e-code-webhook-secret";
const TOKEN = "e2e-code-bot-token";
const modelUrl = inject("modelUrl");
const giteaUrl = inject("giteaUrl");
const gitea = fakeGiteaControl(giteaUrl);
const models = scriptedModelClient(modelUrl);
const rand = () => randomBytes(4).toString("hex");

let server: GitServer;
beforeAll(async () => {
  server = await startGitServer({ forward: giteaUrl, token: TOKEN });
});
afterAll(async () => {
  await server?.stop();
});

const FILES = {
  "README.md": "# hello\n",
  "src/routes.ts": 'export const routes = ["/"];\n',
  "src/server.ts":
    'import { routes } from "./routes";\nexport function handle(path: string): number {\n  return routes.includes(path) ? 200 : 404;\n}\n',
};

async function setup() {
  const ws = await newWorkspace();
  const repo = `e2e-${rand()}/hello_world_ci`;
  const model = `echo:code-${rand()}`;
  for (const [name, value] of [
    ["GITEA_WEBHOOK_SECRET", SECRET],
    ["GITEA_TOKEN", TOKEN],
  ]) {
    expect((await api("PUT", `/api/secrets/${name}`, { token: ws.token, body: { value } })).status).toBe(200);
  }
  const config = {
    toolchain: {
      gitea_base_url: server.url,
      webhook_secret: "GITEA_WEBHOOK_SECRET",
      gitea_token_secret: "GITEA_TOKEN",
      retry: { backoff_ms: 0 },
      git: { author_email: "{agent}@agents.example.org" },
    },
  };
  expect((await api("PUT", "/api/config", { token: ws.token, body: config })).status).toBe(200);
  const agent = {
    id: "jony",
    gitea_username: "jony",
    roles: ["developer"],
    model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` },
  };
  expect((await api("POST", "/api/agents", { token: ws.token, body: agent })).status).toBe(201);
  await gitea.addRepo(repo, { files: FILES });
  await gitea.addToken(TOKEN, "beaver-bot");
  server.createRepo(repo, FILES);
  return { ws, repo, model };
}

function payload(name: string, repo: string, patch: (b: Record<string, unknown>) => void = () => undefined): string {
  const body = JSON.parse(readFileSync(resolve(ROOT, "test/fixtures/gitea", `${name}.json`), "utf8")) as Record<string, unknown> & {
    repository: { full_name: string };
  };
  body.repository.full_name = repo;
  patch(body);
  return JSON.stringify(body);
}

async function deliver(ws: { id: string; token: string }, eventType: string, body: string): Promise<string[]> {
  const res = await fetch(`${inject("baseUrl")}/webhooks/gitea/${ws.id}`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Gitea-Event-Type": eventType,
      "X-Gitea-Delivery": `e2e-${rand()}`,
      "X-Gitea-Signature": createHmac("sha256", SECRET).update(body).digest("hex"),
    },
    body,
  });
  expect(res.status).toBe(202);
  // Processed after the answer: its tasks exist once its outcome is written.
  return (await outcomeAfter(ws.token, res)).task_ids;
}

interface TaskDetail {
  task: { id: string; status: string; action_type: string };
  history: { event: string; detail: Record<string, unknown> }[];
}

async function finished(token: string, id: string): Promise<TaskDetail> {
  const deadline = Date.now() + 60_000;
  for (;;) {
    const t = (await (await api("GET", `/api/toolchain/tasks/${id}`, { token })).json()) as TaskDetail;
    if (t.task.status === "done" || t.task.status === "failed") return t;
    if (Date.now() > deadline) throw new Error(`task ${id} still ${t.task.status}: ${JSON.stringify(t.history)}`);
    await new Promise((r) => setTimeout(r, 250));
  }
}

const call = (name: string, args: Record<string, unknown>): ScriptedStep => ({ tool_calls: [{ name, arguments: args }] });

async function toolResults(token: string, taskId: string): Promise<string[]> {
  const res = await api("GET", `/api/sessions/${encodeURIComponent(`task:${taskId}`)}/events?limit=1000`, { token });
  const events = ((await res.json()) as { events: { type: string; message?: { role: string; content: string } }[] }).events;
  return events.filter((e) => e.type === "message" && e.message?.role === "tool_result").map((e) => e.message!.content);
}

describe("code scenarios against a real git server", () => {
  it("issue_assigned: the agent clones, greps, edits two files, adds a test, commits and pushes fix/<n>-<brief>, opens the PR; the task is verified", async () => {
    const s = await setup();
    const branch = "fix/13-add-a-health-endpoint";
    const routes = 'export const routes = ["/", "/health"];\n';
    const serverTs =
      'import { routes } from "./routes";\nexport function handle(path: string): number {\n  if (path === "/health") return 204;\n  return routes.includes(path) ? 200 : 404;\n}\n';
    const test = 'import { handle } from "../src/server";\nif (handle("/health") !== 204) throw new Error("health");\n';
    await models.script(s.model, [
      call("bash", { command: `git clone ${s.repo} && cd hello_world_ci && git checkout -b ${branch}` }),
      call("grep", { pattern: "routes", path: "hello_world_ci/src" }),
      call("edit_file", { path: "hello_world_ci/src/routes.ts", old_text: '["/"]', new_text: '["/", "/health"]' }),
      call("edit_file", {
        path: "hello_world_ci/src/server.ts",
        old_text: "  return routes",
        new_text: '  if (path === "/health") return 204;\n  return routes',
      }),
      call("write_file", { path: "hello_world_ci/test/health.test.ts", content: test }),
      call("bash", {
        command: `cd hello_world_ci && git add -A && git commit -m "Add a health endpoint (#13)" && git push origin ${branch}`,
      }),
      call("gitea_create_pull", { repo: s.repo, title: "Add a health endpoint", head: branch, base: "main", body: "Closes #13" }),
      call("toolchain_report", { summary: `Implemented #13 on ${branch} with a test; opened the pull request.` }),
      { text: "Done." },
    ]);
    const [taskId] = await deliver(s.ws, "issue_assign", payload("issue_assign", s.repo));
    const done = await finished(s.ws.token, taskId!);
    const results = await toolResults(s.ws.token, taskId!);
    expect(done.task.status, JSON.stringify({ history: done.history, results })).toBe("done");
    expect(done.task.action_type).toBe("issue_assigned");
    // The run had the workspace tools; the clone came from the configured Gitea with its token.
    expect(results[0]).toContain(`Cloned ${server.url}/${s.repo}.git into /workspace/hello_world_ci`);
    expect(results[1]).toContain("hello_world_ci/src/server.ts:1:import { routes }");
    const pushed = done.history.find((h) => h.event === "git_pushed");
    expect(pushed?.detail).toMatchObject({ repo: s.repo, branch });
    expect(done.history.find((h) => h.event === "verified")?.detail).toMatchObject({ reason: "has_action_report" });

    // The bare repository: the agent's commit on the branch, its author, the exact contents.
    expect(server.git(s.repo, "log", "-1", "--format=%an <%ae>%n%s", branch)).toBe(
      "jony <jony@agents.example.org>\nAdd a health endpoint (#13)\n",
    );
    expect(server.git(s.repo, "rev-parse", branch).trim()).toBe(pushed?.detail.commit);
    expect(server.git(s.repo, "show", `${branch}:src/routes.ts`)).toBe(routes);
    expect(server.git(s.repo, "show", `${branch}:src/server.ts`)).toBe(serverTs);
    expect(server.git(s.repo, "show", `${branch}:test/health.test.ts`)).toBe(test);
    expect(server.git(s.repo, "show", `${branch}:README.md`)).toBe(FILES["README.md"]);
    expect(server.git(s.repo, "diff", "--name-only", "main", branch).trim().split("\n")).toEqual([
      "src/routes.ts",
      "src/server.ts",
      "test/health.test.ts",
    ]);
    // The PR was opened from the pushed branch; every Gitea API call is a documented one.
    const state = await gitea.state();
    const mine = state.requests.filter((r) => r.path.includes(`/repos/${s.repo}/`));
    expect(mine.find((r) => r.method === "POST" && r.path.endsWith("/pulls"))?.body).toMatchObject({ head: branch, base: "main" });
    expect(mine.flatMap((r) => checkAgainstSwagger(SWAGGER, r))).toEqual([]);
    expect(server.requests.filter((r) => r.path.includes(s.repo)).every((r) => r.password === TOKEN)).toBe(true);
  });

  it("ci_failure: the agent reads the failed job's log, fixes the failing test on the pull request's branch and pushes; the task is verified", async () => {
    const s = await setup();
    const headRef = "jony-patch-1";
    await pushFromElsewhere(server, s.repo, "main", "src/routes.ts", 'export const routes = ["/", "/broken"];\n', headRef);
    const headSha = server.git(s.repo, "rev-parse", headRef).trim();
    await gitea.addPull(s.repo, { number: 30, author: "jony", headRef, headSha, title: "Routes" });
    // Gitea Actions ran on the head: the `test` job failed, and its log (not the status) names the failing test.
    const run = await gitea.addRun(s.repo, {
      runNumber: 12,
      headSha,
      jobs: [
        { name: "lint", conclusion: "success", log: "eslint: no problems\n" },
        {
          name: "test",
          conclusion: "failure",
          log: "Run npm test\n ✓ test/server.test.ts (2)\n FAIL test/routes.test.ts > routes > has no broken route\nAssertionError: expected [ '/', '/broken' ] not to include '/broken'\n",
        },
      ],
    });
    await models.script(s.model, [
      call("gitea_ci_logs", { repo: s.repo, sha: headSha, target_url: run.jobs[1]!.html_url }),
      call("bash", { command: `git clone --branch ${headRef} ${s.repo} && cd hello_world_ci && git log --oneline -1` }),
      call("grep", { pattern: "broken", path: "hello_world_ci" }),
      call("edit_file", { path: "hello_world_ci/src/routes.ts", old_text: '"/broken"', new_text: '"/fixed"' }),
      call("bash", { command: `cd hello_world_ci && git commit -am "Fix the broken route" && git push origin ${headRef}` }),
      call("toolchain_report", { summary: "test/routes.test.ts failed on the /broken route; fixed it on the PR branch and pushed." }),
      { text: "Done." },
    ]);
    const [taskId] = await deliver(
      s.ws,
      "status",
      payload("status_failure_unindexed", s.repo, (b) => {
        b.sha = headSha;
        b.target_url = run.jobs[1]!.html_url;
      }),
    );
    const done = await finished(s.ws.token, taskId!);
    const results = await toolResults(s.ws.token, taskId!);
    expect(done.task.status, JSON.stringify({ history: done.history, results })).toBe("done");
    expect(done.task.action_type).toBe("ci_failure");
    // The task's steps tell the agent to read the log; the log it read names the failing test, not the passing job.
    expect(JSON.stringify(done.task)).toContain("gitea_ci_logs");
    expect(results[0]).toContain(`run #12 (id ${run.id}, failure`);
    expect(results[0]).toContain("FAIL test/routes.test.ts > routes > has no broken route");
    expect(results[0]).not.toContain("eslint");
    expect(server.git(s.repo, "log", "-1", "--format=%an%n%s%n%P", headRef)).toBe(`jony\nFix the broken route\n${headSha}\n`);
    expect(server.git(s.repo, "show", `${headRef}:src/routes.ts`)).toBe('export const routes = ["/", "/fixed"];\n');
    const mine = (await gitea.state()).requests.filter((r) => r.path.includes(`/repos/${s.repo}/actions/`));
    expect(mine.map((r) => r.path.replace(`/api/v1/repos/${s.repo}`, ""))).toEqual([
      "/actions/runs",
      `/actions/runs/${run.id}/jobs`,
      `/actions/jobs/${run.jobs[1]!.id}/logs`,
    ]);
    expect(mine.flatMap((r) => checkAgainstSwagger(SWAGGER, r))).toEqual([]);
  });

  it("a report over a push whose branch head someone else replaced before verification fails it", async () => {
    const s = await setup();
    const branch = "fix/13-add-a-health-endpoint";
    await models.script(s.model, [
      call("bash", { command: `git clone ${s.repo} && cd hello_world_ci && git checkout -b ${branch}` }),
      call("write_file", { path: "hello_world_ci/health.txt", content: "ok\n" }),
      call("bash", { command: `cd hello_world_ci && git add -A && git commit -qm "Health" && git push origin ${branch}` }),
      call("toolchain_report", { summary: `Pushed ${branch} with the health endpoint and opened nothing yet.` }),
      // The run ends a few seconds later: time for someone else's push to replace the branch head.
      { text: "Done.", delay_ms: 4_000 },
    ]);
    const [taskId] = await deliver(s.ws, "issue_assign", payload("issue_assign", s.repo));
    const deadline = Date.now() + 30_000;
    while (!server.git(s.repo, "branch", "--list", branch).trim()) {
      if (Date.now() > deadline) throw new Error("the agent never pushed");
      await new Promise((r) => setTimeout(r, 100));
    }
    await pushFromElsewhere(server, s.repo, branch, "other.txt", "theirs\n");
    const deadline2 = Date.now() + 40_000;
    let t: TaskDetail;
    for (;;) {
      t = (await (await api("GET", `/api/toolchain/tasks/${taskId}`, { token: s.ws.token })).json()) as TaskDetail;
      if (t.history.some((h) => h.event === "retry_scheduled" || h.event === "failed")) break;
      if (Date.now() > deadline2) throw new Error(JSON.stringify(t.history));
      await new Promise((r) => setTimeout(r, 250));
    }
    const failure = t.history.find((h) => h.event === "retry_scheduled" || h.event === "failed")!;
    expect(failure.detail).toMatchObject({ cause: "business" });
    expect(String(failure.detail.reason)).toMatch(
      new RegExp(`the head of ${s.repo} ${branch} is [0-9a-f]{12}, not a commit this task pushed`),
    );
    expect(t.history.some((h) => h.event === "verified")).toBe(false);
  });
});
