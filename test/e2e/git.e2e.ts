/**
 * Real git against a real git server (docs/workspace.md, "Git"): git's own `git http-backend` over bare
 * repositories this test creates (test/support/git-server.ts), on the same origin as the fake Gitea, so
 * the workspace's Gitea token is what authenticates the clone and the push. A scripted model drives a
 * `code` session on `wrangler dev`: shallow clone, grep, edits, commit, push of a new branch; pushes to
 * the default or a protected branch, force pushes and a non-fast-forward push are readable refusals; a
 * repository with a symbolic link pointing outside is refused and leaves nothing behind; another host
 * gets no credentials.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { fakeGiteaControl } from "../support/fake-gitea.ts";
import { scriptedModelClient, type ScriptedStep } from "../support/scripted-openai.ts";
import { pushFromElsewhere, startGitServer, type GitServer } from "../support/git-server.ts";

const TOKEN = "e2e-git-token";
const modelUrl = inject("modelUrl");
const giteaUrl = inject("giteaUrl");
const models = scriptedModelClient(modelUrl);
const gitea = fakeGiteaControl(giteaUrl);

let server: GitServer;
let elsewhere: GitServer;

beforeAll(async () => {
  server = await startGitServer({ forward: giteaUrl, token: TOKEN });
  elsewhere = await startGitServer();
});
afterAll(async () => {
  await server?.stop();
  await elsewhere?.stop();
});

interface ToolResult {
  content: string;
  is_error: boolean;
}

/** A `code` chat session whose model (scripted per message) reaches the git server's origin as its Gitea. */
async function codeSession() {
  const ws = await newWorkspace();
  const model = `echo:git-${Math.random().toString(36).slice(2, 10)}`;
  expect((await api("PUT", "/api/secrets/GITEA_TOKEN", { token: ws.token, body: { value: TOKEN } })).status).toBe(200);
  const config = {
    model: { provider: "openai-compatible", id: model, base_url: `${modelUrl}/v1` },
    runtime: { max_tool_iterations: 30 },
    toolchain: { gitea_base_url: server.url, gitea_token_secret: "GITEA_TOKEN" },
  };
  expect((await api("PUT", "/api/config", { token: ws.token, body: config })).status).toBe(200);
  const id = ((await (await api("POST", "/api/sessions", { token: ws.token, body: {} })).json()) as { id: string }).id;
  let seen = 0;
  /** One message whose turn makes `calls` in order; answers the results of those calls. */
  async function turn(calls: { name: string; args: Record<string, unknown> }[]): Promise<ToolResult[]> {
    const steps: ScriptedStep[] = [...calls.map((c) => ({ tool_calls: [{ name: c.name, arguments: c.args }] })), { text: "done" }];
    await models.script(model, steps);
    const res = await api("POST", `/api/sessions/${id}/messages?wait=true`, {
      token: ws.token,
      body: { content: "work", toolset: "code" },
    });
    expect(res.status).toBe(200);
    expect(((await res.json()) as { status: string }).status).toBe("completed");
    const events = (await (await api("GET", `/api/sessions/${id}/events?limit=1000`, { token: ws.token })).json()) as {
      events: { type: string; message?: { role: string; content: string; is_error: boolean } }[];
    };
    const results = events.events.filter((e) => e.type === "message" && e.message?.role === "tool_result").map((e) => e.message!);
    const mine = results.slice(seen);
    seen = results.length;
    return mine;
  }
  const files = async () =>
    ((await (await api("GET", `/api/sessions/${id}/files`, { token: ws.token })).json()) as { files: { path: string }[] }).files.map(
      (f) => f.path,
    );
  return { turn, files };
}

const bash = (command: string) => ({ name: "bash", args: { command } });

describe("git over smart HTTP against git http-backend", () => {
  it("clones shallowly with the Gitea token, edits, commits as the agent, pushes a new branch; refuses default, protected and force pushes and reports a non-fast-forward", async () => {
    const repo = `e2e-${Math.random().toString(36).slice(2, 8)}/hello`;
    await gitea.addRepo(repo, { protectedBranches: ["release"] });
    const url = server.createRepo(repo, {
      "README.md": "# hello\n",
      "src/greet.ts": 'export function greet(name: string): string {\n  return "Hello " + name;\n}\n',
      "src/main.ts": 'import { greet } from "./greet";\nconsole.log(greet("world"));\n',
    });
    // A second commit, so the shallow clone has something to leave out.
    await pushFromElsewhere(server, repo, "main", "CHANGELOG.md", "v1\n");
    const s = await codeSession();
    const greet = "export function greet(name: string): string {\n  return `Hello, ${name}!`;\n}\n";
    const test = 'import { greet } from "../src/greet";\nif (greet("x") !== "Hello, x!") throw new Error("greet");\n';
    const first = await s.turn([
      bash(`git clone ${url}`),
      { name: "grep", args: { pattern: "Hello", path: "hello" } },
      {
        name: "edit_file",
        args: { path: "hello/src/greet.ts", old_text: '  return "Hello " + name;', new_text: "  return `Hello, ${name}!`;" },
      },
      { name: "edit_file", args: { path: "hello/src/main.ts", old_text: 'greet("world")', new_text: 'greet("Beaver")' } },
      { name: "write_file", args: { path: "hello/test/greet.test.ts", content: test } },
      bash("cd hello && git status --short && git log --oneline | wc -l"),
      bash(
        'cd hello && git checkout -b fix/7-greeting && git add -A && git commit -m "Fix the greeting" && git push origin fix/7-greeting',
      ),
      bash("cd hello && git push origin fix/7-greeting:main; echo exit=$?"),
      bash("cd hello && git push origin fix/7-greeting:release; echo exit=$?"),
      bash("cd hello && git push --force origin fix/7-greeting; echo exit=$?"),
    ]);
    const [clone, grep, , , , status, push, toMain, toRelease, forced] = first;
    expect(clone!.is_error).toBe(false);
    expect(clone!.content).toMatch(/Cloned .*hello\.git into \/workspace\/hello: branch main at [0-9a-f]{7} \(depth 1\), 4 files/);
    expect(grep!.content).toContain('hello/src/greet.ts:2:  return "Hello " + name;');
    expect(grep!.content).not.toContain(".git/");
    expect(status!.content).toContain(" M src/greet.ts\n M src/main.ts\n?? test/greet.test.ts\n1\n");
    expect(push!.is_error).toBe(false);
    expect(push!.content).toMatch(/\[fix\/7-greeting [0-9a-f]{7}\] Fix the greeting\n 3 files changed/);
    expect(push!.content).toContain("* [new branch]      fix/7-greeting -> fix/7-greeting");
    expect(toMain!.content).toContain("refusing to push to 'main', the repository's default branch");
    expect(toMain!.content).toContain("exit=1");
    expect(toRelease!.content).toContain("refusing to push to 'release': the branch is protected");
    expect(forced!.content).toContain("force pushes are not allowed by this workspace's policy");

    // The bare repository holds the agent's commit: author, message, exact contents, its parent the clone's head.
    const log = server.git(repo, "log", "-1", "--format=%an <%ae>%n%s%n%P", "fix/7-greeting");
    const mainHead = server.git(repo, "rev-parse", "main").trim();
    expect(log).toBe(`beaver <beaver@users.noreply.beaver>\nFix the greeting\n${mainHead}\n`);
    expect(server.git(repo, "show", "fix/7-greeting:src/greet.ts")).toBe(greet);
    expect(server.git(repo, "show", "fix/7-greeting:src/main.ts")).toBe(
      'import { greet } from "./greet";\nconsole.log(greet("Beaver"));\n',
    );
    expect(server.git(repo, "show", "fix/7-greeting:test/greet.test.ts")).toBe(test);
    expect(server.git(repo, "rev-parse", "main").trim()).toBe(mainHead);
    expect(() => server.git(repo, "rev-parse", "--verify", "-q", "refs/heads/release")).toThrow();
    // Every git request carried the workspace's Gitea token (git's Basic credentials); the model never saw it.
    const mine = server.requests.filter((r) => r.path.includes(repo));
    expect(mine.length).toBeGreaterThan(2);
    expect(mine.every((r) => r.password === TOKEN)).toBe(true);
    expect(JSON.stringify(first)).not.toContain(TOKEN);

    // Someone else pushes to the branch meanwhile: the agent's next push is a readable non-fast-forward.
    await pushFromElsewhere(server, repo, "fix/7-greeting", "OTHER.md", "theirs\n");
    const [rejected] = await s.turn([
      bash('cd hello && echo more >> README.md && git commit -qam "More" && git push origin fix/7-greeting; echo exit=$?'),
    ]);
    expect(rejected!.content).toContain("! [rejected]        fix/7-greeting -> fix/7-greeting (non-fast-forward)");
    expect(rejected!.content).toContain("exit=1");
    expect(server.git(repo, "log", "-1", "--format=%s", "fix/7-greeting")).toBe("meanwhile\n");
  });

  it("refuses a repository whose symbolic link points outside, leaving nothing; another host gets no credentials", async () => {
    const repo = `e2e-${Math.random().toString(36).slice(2, 8)}/links`;
    const bad = server.createRepo(repo, { "a.txt": "a\n" }, { symlinks: { "docs/passwd": "../../../etc/passwd" } });
    const other = elsewhere.createRepo("someone/ok", { "ok.txt": "ok\n" }, { symlinks: { "same.txt": "ok.txt" } });
    // An annotated tag: a clone of it asks for the tag object as advertised and checks out what it points at.
    elsewhere.git("someone/ok", "-c", "user.name=Tagger", "-c", "user.email=tagger@example.test", "tag", "-a", "v1", "-m", "one", "HEAD");
    const s = await codeSession();
    const [refused, listing, cloned, link, tagged] = await s.turn([
      bash(`git clone ${bad}; echo exit=$?`),
      bash("ls -A; echo listed"),
      bash(`git clone ${other} ok`),
      bash("cat ok/same.txt"),
      bash(`git clone --branch v1 ${other} tagged && cat tagged/ok.txt`),
    ]);
    expect(refused!.content).toContain("symbolic link 'links/docs/passwd' points outside the repository (to '../../../etc/passwd')");
    expect(refused!.content).toContain("exit=128");
    expect(listing!.content).toBe("exit code: 0\nstdout:\nlisted\n");
    expect(cloned!.is_error).toBe(false);
    // A link inside the repository is checked out as a file holding its target (git's core.symlinks=false).
    expect(link!.content).toContain("ok.txt");
    expect(tagged!.content).toMatch(/detached HEAD at [0-9a-f]{7} \(depth 1\), 2 files\n/);
    expect(tagged!.content).toContain("\nok\n");
    expect((await s.files()).filter((p) => !p.includes("/.git/"))).toEqual([
      "ok/ok.txt",
      "ok/same.txt",
      "tagged/ok.txt",
      "tagged/same.txt",
    ]);
    expect(elsewhere.requests.length).toBeGreaterThan(0);
    expect(elsewhere.requests.every((r) => r.password === null)).toBe(true);
  });
});
