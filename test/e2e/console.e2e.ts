/**
 * The web console in a real headless Chromium (Debian's /usr/bin/chromium driven by playwright-core;
 * no browser download) against the suite's `wrangler dev` (docs/console.md): sign in, chat with the
 * scripted model and see the streamed answer and its tool call, rewind and switch back, upload a
 * skill and roll it back, enable a plugin and see a candidate after a sync, see a toolchain task after
 * a signed webhook, review a skill draft (diff, reports, a live evaluation, approve), approve and deny
 * tool calls in the chat; every page is screenshotted to test-results/screenshots/, and no request may go
 * to any host but the wrangler dev one.
 */
import { createHmac, randomBytes } from "node:crypto";
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium, type Chromium } from "../support/chromium.ts";
import { packTar } from "modern-tar";
import { outcomeAfter } from "./deliveries.ts";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { fakeGiteaControl } from "../support/fake-gitea.ts";
import { scriptedModelClient, type RecordedRequest } from "../support/scripted-openai.ts";
import { SKILL as EVAL_SKILL, draftOn } from "../support/evaluation-draft.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SHOTS = resolve(ROOT, "test-results/screenshots");
const SECRET = "e2e-console-webhook-secret";
const modelUrl = inject("modelUrl");
const giteaUrl = inject("giteaUrl");
const rand = () => randomBytes(4).toString("hex");

const skillMd = (name: string, d: string, body = "") => `---\nname: ${name}\ndescription: ${d}\n---\n\n# ${name}\n${body}`;

async function tarGz(files: Record<string, string>): Promise<Buffer> {
  const tar = await packTar(
    Object.entries(files).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).byteLength, mode: 0o644 }, body })),
  );
  return Buffer.from(await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

const pluginPackage = (version: string, body: string) =>
  tarGz({
    "beaver.plugin.json": JSON.stringify({
      schema_version: 1,
      id: "console-kit",
      name: "Console kit",
      version,
      skills: [{ name: "console-drawer", path: "skills/console-drawer" }],
    }),
    "skills/console-drawer/SKILL.md": skillMd("console-drawer", "Draws for the console test.", body),
  });

let browser: Chromium;
let context: BrowserContext;
let page: Page;
let ws: { id: string; token: string };
const requested: string[] = [];

/** Signs the console in as another workspace's token (the tab keeps it in sessionStorage). */
async function useToken(token: string, path: string): Promise<void> {
  await page.evaluate((t) => sessionStorage.setItem("beaver.token", t), token);
  await page.goto(`${baseUrl()}${path}`);
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}

/** Opens the conversation's folded "Branches and runs" (the runs table and the branch switches). */
async function openSessionDetails(): Promise<void> {
  const details = page.locator("details.runs-details");
  await details.waitFor();
  if (!(await details.evaluate((d) => (d as { open?: boolean }).open === true))) await details.locator("summary").click();
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ws = await newWorkspace();
  // The scripted model's `tools-1` rule: one `echo` tool call, then a final text (test/support/scripted-openai.ts).
  const config = {
    model: { provider: "openai-compatible", id: `tools-1:console-${rand()}`, base_url: `${modelUrl}/v1` },
    toolchain: {
      gitea_base_url: giteaUrl,
      webhook_secret: "GITEA_WEBHOOK_SECRET",
      gitea_token_secret: "GITEA_TOKEN",
      concurrency: { dispatch_on_intake: false },
    },
  };
  for (const [name, value] of [
    ["GITEA_WEBHOOK_SECRET", SECRET],
    ["GITEA_TOKEN", "e2e-console-bot-token"],
  ]) {
    expect((await api("PUT", `/api/secrets/${name}`, { token: ws.token, body: { value } })).status).toBe(200);
  }
  const put = await api("PUT", "/api/config", { token: ws.token, body: config });
  expect(put.status, await put.clone().text()).toBe(200);
  const agent = await api("POST", "/api/agents", {
    token: ws.token,
    body: { id: "nice", gitea_username: "a_nice_user", roles: ["reviewer"] },
  });
  expect(agent.status).toBe(201);
  const dev = await api("POST", "/api/agents", { token: ws.token, body: { id: "jony", gitea_username: "jony", roles: ["developer"] } });
  expect(dev.status).toBe(201);

  browser = await launchChromium();
  ({ context, page } = browser);
  context.on("request", (req) => requested.push(req.url()));
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("e2e: the web console in Chromium", () => {
  it("signs in with a token", async () => {
    await page.goto(`${baseUrl()}/`);
    await page.getByLabel("API token").fill("not-a-token");
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("alert").waitFor();
    await page.getByLabel("API token").fill(ws.token);
    await page.getByRole("button", { name: "Sign in" }).click();
    await page.getByRole("navigation", { name: "Main" }).waitFor();
    expect(await page.evaluate(() => sessionStorage.getItem("beaver.token"))).toBe(ws.token);
    await shot("01-signed-in");
  });

  it("chats with the scripted model: the streamed answer, its tool call and the model; then rewinds and switches back", async () => {
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("hello from the console");
    await page.getByRole("button", { name: "Send" }).click();
    const messages = page.getByRole("list", { name: "Messages" });
    const answer = messages.getByText("done after 1 tool calls", { exact: true });
    await answer.waitFor();
    const tool = messages.getByTestId("tool-call").first();
    await expect.poll(() => tool.textContent()).toContain("echo");
    expect(await tool.textContent()).toContain("call 1 of 1");
    await expect.poll(() => page.getByTestId("model").first().textContent()).toContain("tools-1");
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    expect(sessionId).toMatch(/^ses_/);
    // The run is in the session, as the API reads it.
    const runs = (await (await api("GET", `/api/sessions/${sessionId}/runs`, { token: ws.token })).json()) as {
      runs: { status: string }[];
    };
    expect(runs.runs.map((r) => r.status)).toEqual(["completed"]);
    // Once the run ended the conversation comes from the transcript: the answer stays visible.
    await openSessionDetails();
    await page.getByRole("table").getByText("completed").waitFor();
    await answer.waitFor();
    await shot("02-chat");

    // Rewind to the user message: the answer leaves the active path; its branch can be switched back to.
    await page.getByRole("button", { name: "Rewind here (to this user message)" }).click();
    await page.getByRole("button", { name: "Switch to this branch" }).waitFor();
    await expect.poll(() => answer.count()).toBe(0);
    await shot("03-rewound");
    await page.getByRole("button", { name: "Switch to this branch" }).click();
    await answer.waitFor();
    const tree = (await (await api("GET", `/api/sessions/${sessionId}/tree`, { token: ws.token })).json()) as {
      leaves: { active: boolean }[];
    };
    expect(tree.leaves.filter((l) => l.active)).toHaveLength(1);

    // Search finds the session by its text.
    await page.getByLabel("Search sessions").fill("console");
    await page.getByRole("button", { name: "Search", exact: true }).click();
    await page.getByRole("complementary", { name: "Sessions" }).getByRole("link", { name: "hello from the console" }).waitFor();
  });

  it("uploads a skill twice, diffs the versions and rolls back", async () => {
    await page.getByRole("link", { name: "Skills" }).click();
    const upload = async (body: string) => {
      await page.getByLabel("Name", { exact: true }).fill("console-notes");
      await page.getByLabel("Archive (.tar.gz or .zip with SKILL.md)").setInputFiles({
        name: "console-notes.tar.gz",
        mimeType: "application/gzip",
        buffer: await tarGz({ "console-notes/SKILL.md": skillMd("console-notes", "Notes for the console test.", body) }),
      });
      await page.getByRole("button", { name: "Upload as next version" }).click();
    };
    await upload("first body\n");
    await expect.poll(() => page.getByTestId("current-version").textContent()).toBe("v0001");
    await upload("second body\n");
    await expect.poll(() => page.getByTestId("current-version").textContent()).toBe("v0002");
    await page.getByLabel("Diff from").selectOption("v0001");
    await page.getByLabel("to", { exact: true }).selectOption("v0002");
    await page.getByText("+ second body").waitFor();
    await page.getByText("- first body").waitFor();
    await shot("04-skills");
    await page.getByRole("button", { name: "Roll back to v0001" }).click();
    await expect.poll(() => page.getByTestId("current-version").textContent()).toBe("v0001");
    const skill = (await (await api("GET", "/api/skills/console-notes", { token: ws.token })).json()) as { current_version: string };
    expect(skill.current_version).toBe("v0001");
  });

  it("enables an uploaded plugin and sees a candidate after a sync of its next version", async () => {
    await page.getByRole("link", { name: "Plugins" }).click();
    const uploadPackage = async (version: string, body: string) => {
      await page
        .getByLabel("Plugin package (.tar.gz or .zip)")
        .setInputFiles({ name: `console-kit-${version}.tar.gz`, mimeType: "application/gzip", buffer: await pluginPackage(version, body) });
      await page.getByRole("button", { name: "Upload package" }).click();
    };
    await uploadPackage("1.0.0", "one\n");
    await page.getByRole("button", { name: "Enable console-kit" }).click();
    await page.getByRole("button", { name: "Pause updates" }).waitFor();
    await uploadPackage("2.0.0", "two\n");
    await page.getByText("discovered 2.0.0").waitFor();
    await page.getByRole("button", { name: "Sync now" }).click();
    const candidates = page.getByTestId("candidates-console-drawer");
    const badge = page.getByTestId("plugin-console-kit").getByText("candidate", { exact: true });
    await badge.waitFor();
    await candidates.getByTestId("candidate").first().waitFor();
    expect(await candidates.getByTestId("merge-mode").first().textContent()).toMatch(/\w+/);
    await shot("05-plugins");
    const api_ = (await (await api("GET", "/api/skills/console-drawer/candidates", { token: ws.token })).json()) as {
      candidates: unknown[];
    };
    expect(api_.candidates).toHaveLength(1);
  });

  it("shows a toolchain task created by a signed webhook, with its steps and history", async () => {
    const gitea = fakeGiteaControl(giteaUrl);
    const repo = `console-${rand()}/hello_world_ci`;
    await gitea.addRepo(repo, { files: { "main.go": "package main\n" } });
    await gitea.addPull(repo, {
      number: 7,
      author: "jony",
      headRef: "jony-patch-1",
      headSha: "07977177c2cd7d46bad37b8472a9d50e7acb9d1f",
      title: "somepull",
    });
    await gitea.addToken("e2e-console-bot-token", "beaver-bot");
    const payload = JSON.parse(
      readFileSync(resolve(ROOT, "test/fixtures/upstream/gitea/webhooks/HookPullRequestReviewDeny.json"), "utf8"),
    ) as {
      repository: { full_name: string };
    };
    payload.repository.full_name = repo;
    const body = JSON.stringify(payload);

    await page.getByRole("link", { name: "Toolchain" }).click();
    await page.getByRole("heading", { name: "Toolchain" }).waitFor();
    expect(await page.getByTestId("task-card").count()).toBe(0);
    const res = await fetch(`${baseUrl()}/webhooks/gitea/${ws.id}`, {
      method: "POST",
      headers: {
        "Content-Type": "application/json",
        "X-Gitea-Event-Type": "pull_request_review_rejected",
        "X-Gitea-Delivery": `console-${rand()}`,
        "X-Gitea-Signature": createHmac("sha256", SECRET).update(body).digest("hex"),
      },
      body,
    });
    expect(res.status).toBe(202);
    // Processed after the answer: the board shows the task once the delivery's outcome is written.
    expect((await outcomeAfter(ws.token, res)).outcome).toBe("tasks_created");
    await page.getByRole("button", { name: "Refresh" }).click();
    const card = page.getByTestId("task-card").first();
    await card.waitFor();
    await shot("06-toolchain-board");
    await card.getByRole("link").click();
    await page.getByRole("heading", { name: "Steps" }).waitFor();
    await page.getByRole("heading", { name: "History" }).waitFor();
    await shot("07-toolchain-task");
    await page.getByRole("link", { name: "← Task board" }).click();
    await page.getByRole("tab", { name: "Deliveries" }).click();
    await page.getByText("pull_request_review_rejected").first().waitFor();
    await page.getByRole("tab", { name: "Agents" }).click();
    await page.getByRole("cell", { name: "a_nice_user" }).waitFor();
    await shot("08-toolchain-agents");
  });

  it("settings: a config error names its field; a new token is shown once; the API reference renders the document", async () => {
    await page.getByRole("link", { name: "Settings" }).click();
    const editor = page.getByLabel("Configuration (JSON; unknown keys are refused with their path)");
    await expect.poll(async () => (await editor.inputValue()).includes("runtime")).toBe(true);
    await editor.fill(JSON.stringify({ runtime: { nonsense: 1 } }));
    await page.getByRole("button", { name: "Save configuration" }).click();
    await expect.poll(() => page.getByRole("alert").first().textContent()).toContain("nonsense");
    await page.getByLabel("Token name").fill("console-made");
    await page.getByRole("button", { name: "Create token" }).click();
    const secret = await page.getByTestId("new-token").textContent();
    expect(secret?.trim().length).toBeGreaterThan(20);
    await page.getByRole("cell", { name: "GITEA_TOKEN", exact: true }).waitFor(); // secrets by name only
    expect(await page.content()).not.toContain("e2e-console-bot-token");
    await shot("09-settings");
    await page.getByRole("link", { name: "API" }).click();
    await page.getByRole("heading", { name: /Beaver API/ }).waitFor();
    await page.getByText("/api/ui/chat").first().waitFor();
    await shot("10-api-reference");
  });

  it("a reload during a run resumes its stream: the answer goes on in the live message", async () => {
    // Each model step answers after 2.5 s (the scripted server's `@<ms>` delay), so the run is still open after the reload.
    const config = (await (await api("GET", "/api/config", { token: ws.token })).json()) as Record<string, unknown>;
    const slow = { ...config, model: { provider: "openai-compatible", id: `tools-1@2500:console-${rand()}`, base_url: `${modelUrl}/v1` } };
    expect((await api("PUT", "/api/config", { token: ws.token, body: slow })).status).toBe(200);
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("resume me");
    await page.getByRole("button", { name: "Send" }).click();
    await page.waitForURL(/\/chat\/ses_/);
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    await expect
      .poll(
        async () =>
          ((await (await api("GET", `/api/sessions/${sessionId}`, { token: ws.token })).json()) as { active_run_id: string | null })
            .active_run_id,
        {
          timeout: 10_000,
        },
      )
      .not.toBeNull();
    await page.reload();
    // Only a streamed message is `live-answer` (the transcript renders finished runs): this one came through GET /api/ui/chat/:id/stream.
    const live = page.getByRole("list", { name: "Messages" }).getByTestId("live-answer");
    await live.getByTestId("tool-call").waitFor({ timeout: 20_000 });
    await shot("12-resumed-stream");
    await page.getByRole("list", { name: "Messages" }).getByText("done after 1 tool calls", { exact: true }).waitFor({ timeout: 20_000 });
    expect(requested.some((u) => new URL(u).pathname === `/api/ui/chat/${sessionId}/stream`)).toBe(true);
  });

  it("shows the model's thinking, streamed and after the run", async () => {
    const id = `console-think-${rand()}`;
    await scriptedModelClient(modelUrl).script(id, [{ reasoning: "Weighing the options first.", text: "Here is my considered answer." }]);
    const config = (await (await api("GET", "/api/config", { token: ws.token })).json()) as Record<string, unknown>;
    expect(
      (
        await api("PUT", "/api/config", {
          token: ws.token,
          body: { ...config, model: { provider: "openai-compatible", id, base_url: `${modelUrl}/v1` } },
        })
      ).status,
    ).toBe(200);
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("think first");
    await page.getByRole("button", { name: "Send" }).click();
    const messages = page.getByRole("list", { name: "Messages" });
    await messages.getByText("Here is my considered answer.", { exact: true }).waitFor();
    await openSessionDetails();
    await page.getByRole("table").getByText("completed").waitFor();
    const thinking = messages.locator("details.thinking");
    await thinking.getByText("thinking").click();
    await thinking.getByText("Weighing the options first.").waitFor();
    await shot("14-thinking");
  });

  it("steers a running run and cancels it", async () => {
    const config = (await (await api("GET", "/api/config", { token: ws.token })).json()) as Record<string, unknown>;
    const slow = { ...config, model: { provider: "openai-compatible", id: `tools-1@4000:console-${rand()}`, base_url: `${modelUrl}/v1` } };
    expect((await api("PUT", "/api/config", { token: ws.token, body: slow })).status).toBe(200);
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("a long job");
    await page.getByRole("button", { name: "Send" }).click();
    await page.waitForURL(/\/chat\/ses_/);
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    // A steer joins a running run (a steer with none running starts its own): wait until the model is being asked.
    const runStatuses = async () =>
      (
        (await (await api("GET", `/api/sessions/${sessionId}/runs`, { token: ws.token })).json()) as { runs: { status: string }[] }
      ).runs.map((r) => r.status);
    await expect.poll(runStatuses, { timeout: 10_000 }).toEqual(["running"]);
    await page.getByLabel("Steer the running run").fill("also this, please");
    await page.getByRole("button", { name: "Steer" }).click();
    await page.getByRole("status").filter({ hasText: "Steer sent" }).waitFor();
    await page.getByRole("button", { name: "Stop" }).click();
    await openSessionDetails();
    const runs = page.getByRole("table").filter({ hasText: "status" });
    await runs.getByText("cancelled").waitFor({ timeout: 20_000 });
    // The steer was acknowledged and is in the log (written when the run ended), shown as a steer.
    const steer = page.getByRole("list", { name: "Messages" }).locator("li", { hasText: "also this, please" });
    await steer.waitFor();
    expect(await steer.textContent()).toContain("steer");
    expect(await runStatuses()).toEqual(["cancelled"]);
    await shot("13-steered-and-cancelled");
  });

  it("reviews a plugin update's draft: its diff and reports, an evaluation followed live to its verdict, then approve publishes it", async () => {
    // Its own workspace on the scripted `echo` model (each call slowed by 200 ms), with a fast-forward
    // draft of `greeter` carrying evals/cases.jsonl with 3 cases (test/support/evaluation-draft.ts).
    const other = await newWorkspace();
    const draftId = await draftOn(baseUrl(), other.token, modelUrl, `echo@200:console-eval-${rand()}`, 3);
    await useToken(other.token, "/skills/~drafts");
    const drafts = page.getByRole("region", { name: "Drafts" });
    await drafts.getByLabel("Skill").fill(EVAL_SKILL);
    await drafts.getByLabel("Status").selectOption("pending_review");
    await drafts.getByRole("button", { name: "Filter" }).click();
    await drafts.getByRole("link", { name: draftId }).click();

    const review = page.getByRole("region", { name: "Draft", exact: true });
    await review.getByRole("heading", { name: `Draft of ${EVAL_SKILL}` }).waitFor();
    const diff = review.getByRole("region", { name: "Diff against the current version" });
    await expect.poll(() => diff.textContent()).toContain("+CANDIDATE: say hello and use the name.");
    expect(await diff.textContent()).toContain("-BASELINE: say hello.");
    expect(await diff.textContent()).toContain("evals/cases.jsonl (added)");
    expect(await review.getByRole("region", { name: "Preservation report" }).textContent()).toContain("No preservation report");
    expect(await review.getByRole("region", { name: "Safety report" }).textContent()).toMatch(/Safety report\s*pass/);
    // No evaluation yet: the approval offers to skip it, and says a reason is needed.
    const decision = review.getByRole("region", { name: "Decision", exact: true });
    expect(await decision.textContent()).toContain("No evaluation yet");
    await decision.getByLabel("Skip the evaluation").check();
    await decision.getByLabel("Reason for skipping the evaluation (required)").waitFor();
    expect(await decision.getByRole("button", { name: "Approve without evaluation" }).isDisabled()).toBe(true);
    await decision.getByLabel("Skip the evaluation").uncheck();
    await shot("15-draft-review");

    const evaluation = review.getByRole("region", { name: "Evaluation", exact: true });
    // Every text the progress line ever shows, recorded in the page as it renders.
    // (A script string: this file is typed for Node, without the DOM's names.)
    await page.evaluate(`{
      const seen = (window.progressSeen = []);
      new MutationObserver(() => {
        const text = document.querySelector("[data-testid=evaluation-progress]")?.textContent;
        if (text && seen.at(-1) !== text) seen.push(text);
      }).observe(document.body, { subtree: true, childList: true, characterData: true });
    }`);
    await evaluation.getByLabel("Concurrency").fill("1");
    await evaluation.getByRole("button", { name: "Start evaluation" }).click();
    await evaluation.getByRole("button", { name: "Cancel evaluation" }).waitFor();
    const progress = evaluation.getByTestId("evaluation-progress");
    await expect.poll(() => progress.textContent(), { timeout: 60_000 }).toContain("3 of 3 cases finished");
    await expect.poll(() => evaluation.getByTestId("evaluation-report").textContent()).toContain("Verdict: passed");
    expect(await evaluation.getByTestId("evaluation-report").textContent()).toContain("mean score baseline 6 · candidate 8");
    // The progress came live from the SSE route (read with the bearer token): one case at a time.
    const seen = ((await page.evaluate("window.progressSeen")) as string[]).join("\n");
    expect(seen).toContain("1 of 3 cases finished");
    expect(seen).toContain("2 of 3 cases finished");
    expect(requested.some((u) => u.endsWith(`/api/drafts/${draftId}/evaluation/stream`))).toBe(true);
    const served = (await (await api("GET", `/api/drafts/${draftId}/evaluation`, { token: other.token })).json()) as { status: string };
    expect(served.status).toBe("passed");
    await shot("16-draft-evaluated");

    await decision.getByRole("button", { name: "Approve and publish" }).click();
    await expect.poll(() => decision.getByRole("status").textContent()).toMatch(new RegExp(`Published ${EVAL_SKILL} as v\\d+`));
    const published = (await (await api("GET", `/api/drafts/${draftId}`, { token: other.token })).json()) as {
      status: string;
      published_version: string;
    };
    expect(published.status).toBe("published");
    expect(await decision.getByRole("status").textContent()).toContain(published.published_version);
    const skill = (await (await api("GET", `/api/skills/${EVAL_SKILL}`, { token: other.token })).json()) as { current_version: string };
    expect(skill.current_version).toBe(published.published_version);
    expect(published.published_version).toBe("v0002");
    await shot("17-draft-published");
  });

  it("chat: a tool call that needs approval is shown with its arguments; Approve lets the run finish", async () => {
    const other = await newWorkspace();
    const put = await api("PUT", "/api/config", {
      token: other.token,
      body: {
        model: { provider: "openai-compatible", id: `tools-1:console-approval-${rand()}`, base_url: `${modelUrl}/v1` },
        tool_policy: [{ match: "echo", action: "require_approval" }],
      },
    });
    expect(put.status, await put.clone().text()).toBe(200);
    await useToken(other.token, "/chat");
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("please echo something");
    await page.getByRole("button", { name: "Send" }).click();

    const approval = page.getByTestId("approval");
    await approval.waitFor();
    expect(await approval.textContent()).toContain("echo");
    expect(await approval.textContent()).toContain("call 1 of 1");
    // The prompt is shown once (live), not again from the transcript read for the approval.
    expect(await page.getByRole("list", { name: "Messages" }).getByText("please echo something", { exact: true }).count()).toBe(1);
    const sessionId = decodeURIComponent(new URL(page.url()).pathname.split("/")[2]!);
    // The run waits: no answer yet, and the API says it is running.
    const before = (await (await api("GET", `/api/sessions/${sessionId}/runs`, { token: other.token })).json()) as {
      runs: { status: string }[];
    };
    expect(before.runs.map((r) => r.status)).toEqual(["running"]);
    await shot("18-chat-approval");

    await approval.getByRole("button", { name: "Approve" }).click();
    await page.getByRole("list", { name: "Messages" }).getByText("done after 1 tool calls", { exact: true }).waitFor();
    await expect.poll(() => page.getByTestId("approval-decision").first().textContent()).toBe("Approved");
    await expect
      .poll(async () =>
        (
          (await (await api("GET", `/api/sessions/${sessionId}/runs`, { token: other.token })).json()) as { runs: { status: string }[] }
        ).runs.map((r) => r.status),
      )
      .toEqual(["completed"]);
    // The log holds the request and the person's decision.
    const transcript = (await (await api("GET", `/api/sessions/${sessionId}/transcript`, { token: other.token })).json()) as {
      items: { type: string; details?: { decision?: string; decided_by?: string } }[];
    };
    expect(transcript.items.find((i) => i.type === "tool_approval_decided")?.details).toMatchObject({
      decision: "approve",
      decided_by: "person",
    });
    await shot("19-chat-approved");

    // A second run in the same session (its event stream already open): Deny, and the run still ends.
    await page.getByLabel("Message", { exact: true }).fill("echo once more");
    await page.getByRole("button", { name: "Send" }).click();
    const pending = page.getByTestId("approval").filter({ has: page.getByRole("button", { name: "Deny" }) });
    await pending.waitFor();
    await pending.getByRole("button", { name: "Deny" }).click();
    await expect.poll(() => page.getByTestId("approval-decision").allTextContents()).toEqual(["Approved", "Denied"]);
    await expect
      .poll(async () =>
        (
          (await (await api("GET", `/api/sessions/${sessionId}/runs`, { token: other.token })).json()) as { runs: { status: string }[] }
        ).runs.map((r) => r.status),
      )
      .toEqual(["completed", "completed"]);
    const after = (await (await api("GET", `/api/sessions/${sessionId}/transcript`, { token: other.token })).json()) as {
      items: { type: string; kind: string; is_error?: boolean; details?: { decision?: string } }[];
    };
    expect(after.items.filter((i) => i.type === "tool_approval_decided").map((i) => i.details?.decision)).toEqual(["approve", "deny"]);
    // The denied call did not run: its result is the approval_denied error the model read.
    expect(after.items.filter((i) => i.kind === "tool_result").map((i) => i.is_error)).toEqual([false, true]);
    await shot("20-chat-denied");
    await useToken(ws.token, "/chat");
  });

  it("learning closes the loop (issue 23): ten runs, five rated down → improvement candidate → draft evaluated on their inputs at concurrency 3 → approve → v0002 in the next receipt; a new-skill candidate; the Candidates and Drafts tabs; a thumb click", async () => {
    const other = await newWorkspace();
    const r = rand();
    // Each main-model call takes 150 ms, so parallel evaluation cases overlap in the request log.
    const main = `echo@150:loop-${r}`;
    const aux = `echo:loop-aux-${r}`;
    const models = scriptedModelClient(modelUrl);
    const model = (id: string) => ({ provider: "openai-compatible", id, base_url: `${modelUrl}/v1` });
    const put = await api("PUT", "/api/config", { token: other.token, body: { model: model(main), auxiliary_model: model(aux) } });
    expect(put.status, await put.clone().text()).toBe(200);
    const notes = skillMd("loop-notes", "Takes meeting notes. Use when asked for meeting notes.", "\n1. List decisions.\n");
    const skill = await api("PUT", "/api/skills/loop-notes", {
      token: other.token,
      body: { files: [{ path: "SKILL.md", content: notes }] },
    });
    expect(skill.status).toBe(200);
    const session = async () =>
      ((await (await api("POST", "/api/sessions", { token: other.token, body: {} })).json()) as { id: string }).id;
    const send = async (sid: string, content: string, skills?: string[]) => {
      const res = await api("POST", `/api/sessions/${sid}/messages?wait=true`, {
        token: other.token,
        body: { content, ...(skills ? { skills } : {}) },
      });
      const run = (await res.json()) as { run_id: string; status: string };
      expect(run.status).toBe("completed");
      return run.run_id;
    };
    /** The run's receipt (derived on read when the cron has not reached it: docs/learning.md, "Run receipts"). */
    const receipt = async (sid: string, run: string) => {
      let res = await api("GET", `/api/sessions/${sid}/runs/${run}/receipt`, { token: other.token });
      for (let i = 0; i < 50 && res.status === 409; i++) {
        await new Promise((ok) => setTimeout(ok, 100));
        res = await api("GET", `/api/sessions/${sid}/runs/${run}/receipt`, { token: other.token });
      }
      expect(res.status).toBe(200);
      return (await res.json()) as { skills: { name: string; version: string }[] };
    };
    const pass = async () => {
      const res = await api("POST", "/api/candidates/run", { token: other.token });
      expect(res.status, await res.clone().text()).toBe(200);
      return (await res.json()) as {
        candidates: string[];
        drafts: { draftId: string; status: string; evaluation: Record<string, unknown> }[];
      };
    };

    const sid = await session();
    const runs: string[] = [];
    for (let i = 0; i < 10; i++) runs.push(await send(sid, `notes for meeting ${i}`, ["loop-notes"]));
    for (const run of runs) expect((await receipt(sid, run)).skills).toMatchObject([{ name: "loop-notes", version: "v0001" }]);
    const down = runs.filter((_, i) => i % 2 === 1);
    for (const run of down) {
      const res = await api("POST", `/api/sessions/${sid}/runs/${run}/feedback`, {
        token: other.token,
        body: { rating: "down", comment: "no date" },
      });
      expect(res.status).toBe(200);
    }

    // The evidence pass (the cron's job, run now through its admin route): the auxiliary model writes the draft.
    const improved = notes.replace("1. List decisions.", "1. Put the meeting date first.\n2. List decisions.");
    await models.script(aux, [
      { text: JSON.stringify({ found: true, name: "loop-notes", skill_md: improved, rationale: "Down-rated runs had no date." }) },
    ]);
    const first = await pass();
    expect(first.candidates).toHaveLength(1);
    expect(first.drafts).toMatchObject([{ status: "pending_review", evaluation: { concurrency: 3, cases: 5 } }]);
    const draftId = first.drafts[0]!.draftId;
    const listed = (await (await api("GET", "/api/candidates?kind=skill_improvement", { token: other.token })).json()) as {
      candidates: { evidence: { runs: string[] }; evidence_runs: { session_id: string }[]; draft_id: string }[];
    };
    expect(listed.candidates).toMatchObject([{ draft_id: draftId }]);
    expect(listed.candidates[0]!.evidence.runs).toEqual([...down].sort());
    expect(listed.candidates[0]!.evidence_runs.every((e) => e.session_id === sid)).toBe(true);

    const evalStarted = Date.now();
    let evaluation: { status: string; concurrency: number; report: { cases: { prompt: string }[] } | null } | undefined;
    await expect
      .poll(
        async () =>
          (evaluation = (await (
            await api("GET", `/api/drafts/${draftId}/evaluation`, { token: other.token })
          ).json()) as typeof evaluation)!.status,
        { timeout: 60_000, interval: 200 },
      )
      .toBe("passed");
    expect(evaluation!.concurrency).toBe(3);
    expect(evaluation!.report!.cases.map((c) => c.prompt).sort()).toEqual([1, 3, 5, 7, 9].map((i) => `notes for meeting ${i}`));
    // The replays ran in parallel: some of the main model's requests during the evaluation overlapped.
    const replays = (await models.requests(main)).filter((q: RecordedRequest) => q.received_at >= evalStarted && q.answered_at);
    const overlap = Math.max(
      ...replays.map((a) => replays.filter((b) => b.received_at <= a.received_at && b.answered_at! > a.received_at).length),
    );
    expect(overlap).toBeGreaterThan(1);

    const approved = await api("POST", `/api/drafts/${draftId}/approve`, { token: other.token, body: {} });
    expect(approved.status, await approved.clone().text()).toBe(200);
    expect(await approved.json()).toMatchObject({ version: "v0002" });
    const next = await send(sid, "notes for the retro", ["loop-notes"]);
    expect((await receipt(sid, next)).skills).toMatchObject([{ name: "loop-notes", version: "v0002" }]);

    // Repeated similar successful runs that activated no skill: a new-skill candidate.
    const other2 = await session();
    const similar: string[] = [];
    for (const team of ["alpha", "beta", "gamma"])
      similar.push(await send(other2, `Convert the sprint velocity chart of team ${team} into a table`));
    for (const run of similar) expect((await receipt(other2, run)).skills).toEqual([]);
    const table = skillMd("velocity-table", "Turns sprint velocity charts into tables.", "\n1. One row per sprint.\n");
    await models.script(aux, [
      { text: JSON.stringify({ found: true, name: "velocity-table", skill_md: table, rationale: "Three runs did this." }) },
    ]);
    const second = await pass();
    expect(second.candidates).toHaveLength(1);
    const fresh = (await (await api("GET", "/api/candidates?kind=new_skill", { token: other.token })).json()) as {
      candidates: { evidence: { runs: string[] } }[];
    };
    expect(fresh.candidates[0]!.evidence.runs).toEqual([...similar].sort());

    // The console: the Candidates tab lists both kinds, the Drafts tab the improvement's draft with its evidence runs.
    await useToken(other.token, "/skills/~candidates");
    const rows = page.getByRole("region", { name: "Candidates" }).getByTestId("candidate-row");
    await rows.filter({ hasText: "new_skill" }).waitFor();
    await rows.filter({ hasText: "skill_improvement" }).getByText("5 runs").click();
    await rows.filter({ hasText: "skill_improvement" }).getByRole("link", { name: down[0]! }).waitFor();
    await shot("21-candidates");
    await page.getByRole("navigation", { name: "Skills sections" }).getByRole("link", { name: "Drafts" }).click();
    await page.getByRole("region", { name: "Drafts" }).getByRole("link", { name: draftId }).click();
    const evidence = page.getByRole("region", { name: "Evidence runs" });
    await evidence.getByRole("link", { name: down[0]! }).waitFor();
    expect(await evidence.getByRole("link").count()).toBe(5);
    await shot("22-draft-evidence");

    // The chat shows the current ratings, and a thumb click is stored.
    await page.goto(`${baseUrl()}/chat/${sid}`);
    const thumbs = page.getByRole("list", { name: "Messages" }).getByTestId("thumbs");
    await thumbs.nth(10).waitFor({ timeout: 30_000 });
    expect(await thumbs.count()).toBe(11);
    await expect.poll(() => page.locator('[data-testid=thumbs][data-rating="down"]').count(), { timeout: 10_000 }).toBe(5);
    await thumbs.first().getByRole("button", { name: "Good answer" }).click();
    await expect
      .poll(() => thumbs.first().getByRole("button", { name: "Good answer" }).getAttribute("aria-pressed"), { timeout: 10_000 })
      .toBe("true");
    const ratings = (await (await api("GET", `/api/sessions/${sid}/feedback`, { token: other.token })).json()) as {
      feedback: { run_id: string; rating: string }[];
    };
    expect(ratings.feedback).toContainEqual({ run_id: runs[0], rating: "up", comment: null });
    await shot("23-thumbs");
    await useToken(ws.token, "/chat");
  }, 180_000);

  it("is usable at phone width, and no request ever left for another host", async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole("link", { name: "Chat" }).click();
    await page.getByRole("button", { name: "New chat" }).filter({ visible: true }).first().waitFor();
    const overflow = (await page.evaluate("document.documentElement.scrollWidth - window.innerWidth")) as number;
    expect(overflow).toBeLessThanOrEqual(1);
    await shot("11-phone-chat");

    const own = new URL(baseUrl()).host;
    const foreign = requested.filter((u) => !u.startsWith("data:") && new URL(u).host !== own);
    expect(requested.length).toBeGreaterThan(10);
    expect(foreign).toEqual([]);
  });
});
