// `git` in the workspace shell through real runs (docs/workspace.md, "Git"): a scripted model runs
// git commands with `bash` on the `code` tool set; isomorphic-git reads and writes the repository in
// the SessionDO's SQLite and R2 like any other workspace file. Clone and push need a git server and are
// covered end to end against `git http-backend` (test/e2e/git.e2e.ts).
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { ScriptedModel, doEvents, scriptedWorkspace, text, toolCalls, toolResults, type ScriptStep } from "../../support/sessions.ts";
import { call, json } from "../../support/api.ts";

/** Runs each command as one `bash` call in a new `code` session; returns the results' text. */
async function shell(commands: string[]) {
  const steps: ScriptStep[] = [...commands.map((command, i) => toolCalls({ id: `c${i}`, name: "bash", args: { command } })), text("done")];
  const model = new ScriptedModel((i) => steps[Math.min(i, steps.length - 1)]!);
  const ws = await scriptedWorkspace(model);
  const id = (await createSession(env, { workspaceId: ws.id })).id;
  const { run_id } = await submitRun(env, id, { workspace_id: ws.id, content: "work", toolset: "code", max_tool_iterations: 50 });
  expect((await waitForRun(env, id, run_id, 30_000)).status).toBe("completed");
  const results = toolResults(await doEvents(id, ws.id));
  return { ws, id, out: results.map((r) => r.content) };
}

describe("git in the workspace shell", () => {
  it("init, status, add, commit (authored as the agent), log, diff, checkout -b, branch", async () => {
    const { out, ws, id } = await shell([
      "git init && printf 'one\\ntwo\\nthree\\n' > a.txt && mkdir -p src && echo 'x' > src/b.ts && git status --short",
      "git add . && git status",
      "git commit -m 'first commit'",
      "sed -i 's/two/TWO/' a.txt && rm src/b.ts && echo new > c.txt && git status --short && git diff",
      "git add -A && git diff --cached --stat && git commit -m 'second' -m 'body line'",
      "git log --oneline && git log -n 1",
      "git checkout -b fix/7-typo && git branch && git rev-parse --abbrev-ref HEAD",
      "git status; git commit -m nothing; echo exit=$?",
      "cd src 2>/dev/null || mkdir -p d && cd d && git rev-parse --show-toplevel",
      "git push origin main; echo exit=$?",
      "git frobnicate; echo exit=$?",
    ]);
    const [init, status, commit1, diff, commit2, log, branch, clean, sub, push, unknown] = out;
    expect(init).toContain("Initialized empty Git repository in /workspace/.git/");
    expect(init).toContain("?? a.txt\n?? src/b.ts");
    expect(status).toContain("Changes to be committed:");
    expect(status).toMatch(/new file: +a\.txt/);
    expect(commit1).toMatch(/\[main [0-9a-f]{7}\] first commit\n 2 files changed/);
    expect(diff).toContain(" M a.txt\n D src/b.ts\n?? c.txt");
    expect(diff).toContain("diff --git a/a.txt b/a.txt\n");
    expect(diff).toContain("--- a/a.txt\n+++ b/a.txt\n@@ -1,3 +1,3 @@\n one\n-two\n+TWO\n three");
    expect(diff).toContain("deleted file mode 100644\n--- a/src/b.ts\n+++ /dev/null\n@@ -1,1 +0,0 @@\n-x");
    expect(diff).not.toContain("c.txt |");
    expect(commit2).toContain(" 3 files changed, 2 insertions(+), 2 deletions(-)");
    expect(commit2).toMatch(/\[main [0-9a-f]{7}\] second/);
    expect(log).toMatch(/[0-9a-f]{7} second\n[0-9a-f]{7} first commit\n/);
    // Authored as the agent: `beaver` outside a task, the default e-mail of toolchain.git.author_email.
    expect(log).toContain("Author: beaver <beaver@users.noreply.beaver>");
    expect(log).toMatch(/Date: {3}(Mon|Tue|Wed|Thu|Fri|Sat|Sun) [A-Z][a-z]{2} \d{1,2} \d\d:\d\d:\d\d \d{4} \+0000\n\n {4}second/);
    expect(log).toContain("    second\n    \n    body line".replace("    \n", "\n"));
    expect(branch).toContain("* fix/7-typo\n  main");
    expect(branch).toContain("fix/7-typo\n");
    expect(clean).toContain("On branch fix/7-typo\nnothing to commit, working tree clean");
    expect(clean).toContain("exit=1");
    expect(sub).toContain("/workspace\n");
    expect(push).toContain("fatal: 'origin' does not appear to be a git repository");
    expect(unknown).toContain("git: 'frobnicate' is not a git command available here");

    // The repository is workspace files: .git is stored with the tree, the commit is readable through the files API.
    const files = await json<{ files: { path: string }[] }>(await call("GET", `/api/sessions/${id}/files`, { token: ws.read }));
    const paths = files.files.map((f) => f.path);
    expect(paths).toContain(".git/HEAD");
    expect(paths).toContain("a.txt");
    expect(paths).not.toContain("src/b.ts");
  });

  it("commits only what was added; a failing command still leaves git's files consistent", async () => {
    const { out } = await shell([
      "git init -b trunk && echo a > a.txt && echo b > b.txt && git add a.txt && git commit -m 'only a' && git status --short",
      "git log --oneline | wc -l; git show HEAD; echo exit=$?",
      "git diff HEAD; echo exit=$?",
    ]);
    expect(out[0]).toMatch(/\[trunk [0-9a-f]{7}\] only a\n 1 file changed/);
    expect(out[0]).toContain("?? b.txt");
    expect(out[1]).toContain("1\n");
    expect(out[1]).toContain("git: 'show' is not a git command available here");
    expect(out[2]).toContain("revisions are not supported");
  });

  it("answers outside a repository and outside the workspace with git's fatal lines", async () => {
    const { out } = await shell(["git status; echo exit=$?", "cd / && git status; echo exit=$?", "git commit -m x; echo exit=$?"]);
    expect(out[0]).toContain("fatal: not a git repository (or any of the parent directories): .git");
    expect(out[0]).toContain("exit=128");
    expect(out[1]).toContain("git works only inside /workspace");
    expect(out[2]).toContain("not a git repository");
  });
});
