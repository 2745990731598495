/**
 * The console as a daily chat UI and a map of Beaver (issue 24, docs/console.md), in headless Chromium
 * against the suite's `wrangler dev`: assistant Markdown rendered while it streams and after (bold is a
 * <strong>, a fenced block a <pre><code> with a copy button), Enter sends and Shift+Enter adds a line,
 * the composer stays in view in a 50-message session, rename / archive / delete through the UI and the
 * API, the memory, schedules, mail, MCP and usage pages showing data made through the API, and a walk
 * through every page at desktop and phone width that logs no console error and no failed request,
 * passes axe-core (no serious or critical violation; axe is evaluated in the page, as its docs show for
 * any driver) and is screenshotted to test-results/screenshots/ (gitignored). The security headers of
 * the console's and the API's answers are checked too.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { BrowserContext, Page } from "playwright-core";
import { launchChromium, signIn, trackRequests, watchProblems, type Chromium } from "../support/chromium.ts";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";
import { startEverythingServer, type EverythingServer } from "../support/mcp-everything.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SHOTS = resolve(ROOT, "test-results/screenshots");
const AXE = readFileSync(resolve(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
const modelUrl = inject("modelUrl");
const rand = () => Math.random().toString(36).slice(2, 10);
const DESKTOP = { width: 1280, height: 860 };
const PHONE = { width: 390, height: 844 };

let context: BrowserContext;
let page: Page;
let browser: Chromium;
let requests: ReturnType<typeof trackRequests>;
let ws: { id: string; token: string };
let everything: EverythingServer;
let modelId: string;
/** The auxiliary model (session titles), when a test sets one. */
let auxId: string | null = null;
/** Problems the browser reported: console errors, page errors, failed requests, error statuses. */
const problems: string[] = [];
const requested: string[] = [];

/** The workspace's config: the current scripted model and the MCP server. */
async function config(): Promise<void> {
  const body = {
    model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` },
    mcp: { servers: [{ name: "ev", url: everything.url, allow_tools: ["echo", "get-sum"] }] },
    ...(auxId ? { auxiliary_model: { provider: "openai-compatible", id: auxId, base_url: `${modelUrl}/v1` } } : {}),
  };
  const res = await api("PUT", "/api/config", { token: ws.token, body });
  expect(res.status, await res.clone().text()).toBe(200);
}

async function json<T>(res: Response | Promise<Response>): Promise<T> {
  return (await (await res).json()) as T;
}

const sessionIdOf = (p: Page) => decodeURIComponent(new URL(p.url()).pathname.split("/")[2]!);

async function axe(name: string): Promise<void> {
  await page.evaluate(AXE);
  const violations = (await page.evaluate(`axe.run(document, { resultTypes: ["violations"] }).then((r) => r.violations)`)) as {
    id: string;
    impact: string;
    nodes: { target: string[] }[];
  }[];
  const bad = violations.filter((v) => v.impact === "serious" || v.impact === "critical");
  expect(bad.map((v) => `${name}: ${v.id} (${v.impact}) at ${v.nodes.map((n) => n.target.join(" ")).join(", ")}`)).toEqual([]);
}

async function shot(name: string): Promise<void> {
  await page.screenshot({ path: join(SHOTS, `${name}.png`), fullPage: true });
}

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ws = await newWorkspace();
  modelId = `echo:walk-${rand()}`;
  everything = await startEverythingServer();
  await config();
  browser = await launchChromium({ viewport: DESKTOP });
  ({ context, page } = browser);
  context.on("request", (r) => requested.push(r.url()));
  watchProblems(page, problems, { failedRequests: true });
  requests = trackRequests(page);
  await signIn(page, baseUrl(), ws.token);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  await everything?.stop();
});

describe("e2e: the console as a chat UI, every page, accessibility and headers", () => {
  it("renders Markdown while the answer streams and after; Enter sends, Shift+Enter adds a line", async () => {
    const id = `md-${rand()}`;
    const text = "Here is **bold** news.\n\n```ts\nconst answer = 42;\nconsole.log(answer);\n```\n\nThat is all for now, thanks.";
    modelId = `echo:${id}`;
    await scriptedModelClient(modelUrl).script(modelId, [{ text, chunk_delay_ms: 250 }]);
    await config();
    await page.getByRole("button", { name: "New chat" }).first().click();
    const box = page.getByLabel("Message", { exact: true });
    await box.fill("show me markdown");
    await box.press("Enter");
    // While streaming: the live answer (not yet ended) already has the <strong>, then the code block with its copy button.
    const live = page.getByTestId("live-answer");
    await live.locator("strong", { hasText: "bold" }).waitFor();
    expect(await live.getAttribute("aria-busy")).toBe("true");
    await live.locator("pre code").first().waitFor();
    expect(await live.getAttribute("aria-busy")).toBe("true");
    await live.getByRole("button", { name: "Copy" }).waitFor();
    expect(await live.textContent()).not.toContain("**bold**");
    await shot("walk-chat-streaming");
    // After the run: the same rendering from the transcript.
    const messages = page.getByRole("list", { name: "Messages" });
    await messages.getByText("That is all for now, thanks.").waitFor();
    await expect.poll(() => live.count(), { timeout: 20_000 }).toBe(0);
    const answer = messages.locator("li.msg.assistant").last();
    expect(await answer.locator("strong").textContent()).toBe("bold");
    expect(await answer.locator("pre code").textContent()).toContain("const answer = 42;");
    expect(await answer.locator(".code-block").getByRole("button", { name: "Copy" }).count()).toBe(1);
    expect(await answer.locator("pre code .hljs-keyword").count()).toBeGreaterThan(0);

    // Shift+Enter adds a line; Enter sends.
    await box.fill("first line");
    await box.press("Shift+Enter");
    await box.pressSequentially("second line");
    expect(await box.inputValue()).toBe("first line\nsecond line");
    await box.press("Enter");
    await messages.locator("li.msg.user", { hasText: "second line" }).waitFor();
    expect(await box.inputValue()).toBe("");
    await messages.getByText("echo: first line").waitFor({ timeout: 20_000 });
  });

  it("shows the auxiliary model's title as it arrives, in the header and the list", async () => {
    auxId = `title-${rand()}`;
    // The title call answers a little after the run ended, so the page has settled on the first-message title by then.
    await scriptedModelClient(modelUrl).script(auxId, [{ text: "Brewing green tea", delay_ms: 1500 }]);
    await config();
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.getByLabel("Message", { exact: true }).fill("how long should green tea steep?");
    await page.getByLabel("Message", { exact: true }).press("Enter");
    await page.getByRole("list", { name: "Messages" }).getByText("echo: how long should green tea steep?").waitFor();
    await expect.poll(() => page.getByTestId("session-title").textContent(), { timeout: 20_000 }).toBe("Brewing green tea");
    await page.getByRole("complementary", { name: "Sessions" }).getByRole("link", { name: "Brewing green tea" }).waitFor();
    auxId = null;
    await config();
  });

  it("keeps the composer in view in a 50-message session, at desktop and phone width", async () => {
    const created = await json<{ id: string }>(api("POST", "/api/sessions", { token: ws.token, body: { title: "Fifty messages" } }));
    for (let i = 1; i <= 25; i++) {
      const res = await api("POST", `/api/sessions/${created.id}/messages?wait=true`, {
        token: ws.token,
        body: { content: `message ${i}` },
      });
      expect(res.status).toBe(200);
    }
    for (const [name, viewport] of [
      ["desktop", DESKTOP],
      ["phone", PHONE],
    ] as const) {
      await page.setViewportSize(viewport);
      await page.goto(`${baseUrl()}/chat/${created.id}`);
      const messages = page.getByRole("list", { name: "Messages" });
      await messages.getByText("echo: message 25").waitFor();
      expect(await messages.locator("li.msg").count()).toBe(50);
      const composer = page.locator("form.composer");
      const rect = (await composer.boundingBox())!;
      expect(rect.y + rect.height).toBeLessThanOrEqual(viewport.height);
      expect(await page.evaluate("document.documentElement.scrollHeight - window.innerHeight")).toBeLessThanOrEqual(1);
      // Opened at its end: the last answer is in view above the composer.
      const last = (await messages.getByText("echo: message 25").boundingBox())!;
      expect(last.y + last.height).toBeLessThanOrEqual(rect.y + 1);
      await shot(`walk-chat-50-${name}`);
    }
    // On a phone the conversation comes first and the sessions are in a drawer.
    const drawer = page.getByRole("complementary", { name: "Sessions" });
    expect(await drawer.isVisible()).toBe(false);
    await page.getByRole("button", { name: "Sessions", exact: true }).click();
    await drawer.getByRole("link", { name: "Fifty messages" }).waitFor();
    await page.waitForTimeout(400); // the drawer slides in (0.2 s): let the screenshot show it open
    await shot("walk-chat-drawer-phone");
    await page.getByRole("button", { name: "Close" }).click();
    await page.setViewportSize(DESKTOP);
  });

  it("renames, archives and deletes sessions through the UI and the API", async () => {
    const list = page.getByRole("complementary", { name: "Sessions" });
    const mk = async (title: string) => (await json<{ id: string }>(api("POST", "/api/sessions", { token: ws.token, body: { title } }))).id;
    const a = await mk("Before rename");
    const b = await mk("Archive me");
    await page.goto(`${baseUrl()}/chat/${a}`);
    await page.getByRole("button", { name: "Rename" }).click();
    await page.getByLabel("Session title").fill("Renamed in the console");
    await page.getByRole("button", { name: "Save" }).click();
    await expect.poll(() => page.getByTestId("session-title").textContent()).toBe("Renamed in the console");
    await list.getByRole("link", { name: "Renamed in the console" }).waitFor();
    expect((await json<{ title: string }>(api("GET", `/api/sessions/${a}`, { token: ws.token }))).title).toBe("Renamed in the console");

    // Archive in the UI: gone from the list, shown with "Archived sessions"; unarchive through the API.
    await list.getByRole("link", { name: "Archive me" }).click();
    await page.getByRole("button", { name: "Archive", exact: true }).click();
    await page.getByRole("button", { name: "Unarchive" }).waitFor();
    await expect.poll(() => list.getByRole("link", { name: "Archive me" }).count()).toBe(0);
    await list.getByLabel("Archived sessions").check();
    await list.getByRole("link", { name: "Archive me" }).waitFor();
    await shot("walk-chat-archived");
    await list.getByLabel("Archived sessions").uncheck();
    const unarchived = await api("PATCH", `/api/sessions/${b}`, { token: ws.token, body: { archived: false } });
    expect(unarchived.status).toBe(200);
    // Renamed through the API: the open conversation and the list show it once they read again.
    expect((await api("PATCH", `/api/sessions/${b}`, { token: ws.token, body: { title: "Renamed by the API" } })).status).toBe(200);
    await page.reload();
    await list.getByRole("link", { name: "Renamed by the API" }).waitFor();

    // Delete in the UI (asks first), and through the API.
    await page.getByRole("button", { name: "Delete" }).click();
    await page.getByRole("button", { name: "Delete for good" }).click();
    await page.waitForURL(/\/chat$/);
    await expect.poll(() => list.getByRole("link", { name: "Renamed by the API" }).count()).toBe(0);
    expect((await api("GET", `/api/sessions/${b}`, { token: ws.token })).status).toBe(404);
    expect((await api("DELETE", `/api/sessions/${a}`, { token: ws.token })).status).toBe(204);
    await page.reload();
    await list.getByRole("link", { name: "Fifty messages" }).waitFor();
    expect(await list.getByRole("link", { name: "Renamed in the console" }).count()).toBe(0);
  });

  it("shows memory, schedules, mail, MCP servers and usage made through the API", async () => {
    expect((await api("POST", "/api/memory/notes/entries", { token: ws.token, body: { text: "Prefers green tea" } })).status).toBe(201);
    const schedule = await api("POST", "/api/schedules", {
      token: ws.token,
      body: { message: "Write the weekly report", cron: "0 9 * * 1", timezone: "UTC" },
    });
    expect(schedule.status, await schedule.clone().text()).toBe(201);
    for (const id of ["alice", "bob"]) {
      const res = await api("POST", "/api/agents", { token: ws.token, body: { id, gitea_username: id, roles: ["developer"] } });
      expect(res.status).toBe(201);
    }
    const mail = await api("POST", "/api/mail", {
      token: ws.token,
      body: { from_agent: "alice", to_agent: "bob", performative: "inform", subject: "Build is green", body: "All checks passed." },
    });
    expect(mail.status, await mail.clone().text()).toBe(201);

    await page.getByRole("link", { name: "Memory" }).click();
    const notes = page.getByTestId("memory-notes");
    await notes.getByText("Prefers green tea").waitFor();
    await notes.getByRole("button", { name: /^Edit entry/ }).click();
    await notes.getByLabel("Edit entry").fill("Prefers green tea, no sugar");
    await notes.getByRole("button", { name: "Save" }).click();
    await notes.getByText("Prefers green tea, no sugar").waitFor();
    await page.locator("ins", { hasText: "Prefers green tea, no sugar" }).waitFor(); // the history

    await page.getByRole("link", { name: "Schedules" }).click();
    await page.getByTestId("schedule").filter({ hasText: "Write the weekly report" }).waitFor();
    await page.getByLabel(/^Cron expression/).fill("30 8 * * 1-5");
    await expect.poll(() => page.getByTestId("cron-preview").locator("li").count()).toBe(5);
    await page.getByLabel("Message to send").fill("Stand-up notes");
    await page.getByRole("button", { name: "Add schedule" }).click();
    await page.getByTestId("schedule").filter({ hasText: "Stand-up notes" }).waitFor();
    await page.getByRole("button", { name: "Cancel schedule: Stand-up notes" }).click();
    await expect.poll(() => page.getByTestId("schedule").filter({ hasText: "Stand-up notes" }).count()).toBe(0);

    await page.getByRole("link", { name: "Mail" }).click();
    await page.getByTestId("mail").filter({ hasText: "Build is green" }).waitFor();

    await page.getByRole("link", { name: "MCP" }).click();
    const server = page.getByTestId("mcp-server").filter({ hasText: "ev" });
    await expect.poll(() => server.textContent(), { timeout: 30_000 }).toContain("connected");
    await server.getByText("get-sum", { exact: true }).waitFor();
    await page.getByRole("button", { name: "Refresh" }).click();
    await server.getByText("echo", { exact: true }).waitFor();
    // The tools were already shown before the refresh: wait for the refresh itself, or a later full
    // navigation aborts it (a link click keeps the page, so the request outlives this test otherwise).
    await requests.settled();

    await page.getByRole("link", { name: "Usage" }).click();
    await expect.poll(() => page.getByTestId("usage-total").textContent()).toMatch(/[1-9][\d,]* tokens in \d+ runs/);
    await page.getByRole("img", { name: /Tokens per day/ }).waitFor();
    await page.getByRole("link", { name: "Fifty messages" }).waitFor();
  });

  it("walks every page at desktop and phone width: no console error, no failed request, axe passes; an unknown path is not found", async () => {
    const skills = await json<{ skills: { name: string; source_kind: string }[] }>(api("GET", "/api/skills", { token: ws.token }));
    const builtin = skills.skills.find((s) => s.source_kind === "builtin")!.name;
    const pages: [string, string, (p: Page) => Promise<unknown>][] = [
      ["chat", "/chat", (p) => p.getByRole("heading", { name: "Chat" }).waitFor()],
      ["skills", "/skills", (p) => p.getByRole("heading", { name: "Skills" }).first().waitFor()],
      [
        "skill-builtin",
        `/skills/${builtin}`,
        async (p) => {
          await p.getByRole("button", { name: "SKILL.md", exact: true }).click();
          await p.getByText(`name: ${builtin}`).waitFor();
        },
      ],
      ["plugins", "/plugins", (p) => p.getByRole("heading", { name: "Plugins" }).first().waitFor()],
      ["candidates", "/skills/~candidates", (p) => p.getByRole("heading", { name: "Candidates" }).waitFor()],
      ["drafts", "/skills/~drafts", (p) => p.getByRole("search", { name: "Filter drafts" }).waitFor()],
      ["toolchain", "/toolchain", (p) => p.getByRole("heading", { name: "Toolchain" }).waitFor()],
      ["memory", "/memory", (p) => p.getByText("Prefers green tea, no sugar").first().waitFor()],
      ["schedules", "/schedules", (p) => p.getByText("Write the weekly report").waitFor()],
      ["mail", "/mail", (p) => p.getByText("Build is green").waitFor()],
      ["mcp", "/mcp-servers", (p) => p.getByText("get-sum", { exact: true }).waitFor({ timeout: 30_000 })],
      ["usage", "/usage", (p) => p.getByTestId("usage-total").waitFor()],
      ["settings", "/settings", (p) => p.getByRole("heading", { name: "Settings" }).waitFor()],
      ["reference", "/reference", (p) => p.getByRole("heading", { name: /Beaver API/ }).waitFor()],
      ["not-found", "/no/such/page", (p) => p.getByRole("heading", { name: "Page not found" }).waitFor()],
    ];
    const sessions = await json<{ sessions: { id: string; title: string }[] }>(api("GET", "/api/sessions", { token: ws.token }));
    const fifty = sessions.sessions.find((s) => s.title === "Fifty messages")!.id;
    pages.splice(1, 0, ["conversation", `/chat/${fifty}`, (p) => p.getByText("echo: message 25").waitFor()]);
    // Nothing an earlier test left in flight may be aborted by this walk's first navigation.
    await requests.settled();
    problems.length = 0;
    for (const [name, path, ready] of pages) {
      for (const [width, viewport] of [
        ["desktop", DESKTOP],
        ["phone", PHONE],
      ] as const) {
        await page.setViewportSize(viewport);
        await page.goto(`${baseUrl()}${path}`);
        await page.getByRole("navigation", { name: "Main" }).waitFor();
        await ready(page);
        await axe(`${name} (${width})`);
        expect(
          await page.evaluate("document.documentElement.scrollWidth - window.innerWidth"),
          `${name} scrolls sideways`,
        ).toBeLessThanOrEqual(1);
        await shot(`walk-${name}-${width}`);
        // A page may still be loading what it shows below the fold (the MCP page refreshes its servers'
        // tools, the candidates list answers after its heading): leaving now would abort that request.
        await requests.settled();
      }
    }
    // "New chat" asks nothing of the server until the first message (it used to GET a session that did not exist).
    await page.setViewportSize(DESKTOP);
    await page.goto(`${baseUrl()}/chat`);
    await page.getByRole("button", { name: "New chat" }).first().click();
    await page.waitForURL(/\/chat\/ses_/);
    await page.getByText("Write a message below to start this chat.").waitFor();
    const id = sessionIdOf(page);
    await page.getByRole("link", { name: "Usage" }).click();
    await page.getByTestId("usage-total").waitFor();
    expect(id).toMatch(/^ses_/);
    expect(problems).toEqual([]);
  }, 300_000);

  it("is keyboard reachable: the skip link and the main navigation take focus in order", async () => {
    await page.goto(`${baseUrl()}/usage`);
    await page.getByTestId("usage-total").waitFor();
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Skip to content");
    await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Chat");
    // Chat → Skills → Toolchain (Plugins is a tab of Skills now).
    for (let i = 0; i < 2; i++) await page.keyboard.press("Tab");
    expect(await page.evaluate("document.activeElement?.textContent")).toBe("Toolchain");
    await page.keyboard.press("Enter");
    await page.getByRole("heading", { name: "Toolchain" }).waitFor();
  });

  it("sends the security headers: a strict CSP and friends on the console, nosniff and no-store on the API", async () => {
    for (const path of ["/", "/chat/anything", "/usage"]) {
      const res = await fetch(`${baseUrl()}${path}`);
      expect(res.status).toBe(200);
      const csp = res.headers.get("Content-Security-Policy") ?? "";
      expect(csp).toContain("script-src 'self'");
      expect(csp).toContain("frame-ancestors 'none'");
      expect(csp).not.toContain("unsafe-inline");
      expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
      expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
      expect(res.headers.get("Cross-Origin-Opener-Policy")).toBe("same-origin");
      // No inline script in the page itself.
      expect(await res.text()).not.toMatch(/<script(?![^>]*\bsrc=)[^>]*>/);
    }
    const apiRes = await api("GET", "/api/sessions", { token: ws.token });
    expect(apiRes.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(apiRes.headers.get("Cache-Control")).toBe("no-store");
    // The token never travels in a URL: every request the console made carried it in a header only.
    expect(requested.length).toBeGreaterThan(50);
    expect(requested.filter((u) => u.includes(ws.token))).toEqual([]);
    expect(problems).toEqual([]);
  });
});
