/**
 * The session view's Files panel (docs/workspace.md, "Console") in headless Chromium (Debian's
 * /usr/bin/chromium driven by playwright-core) against the suite's `wrangler dev`: a run on the `code`
 * tool set writes a note, "clones" (a `bash` command that starts with `git clone`; with no reachable
 * remote its fallback writes the files, so the call records its tree like a real clone), then edits,
 * adds and deletes files. The panel shows the tree with each file's status against the clone's tree
 * (the default base), a file's diff and its numbered content, a binary file as such, a large file cut
 * at 256 KiB with a working download; another event as the shown tree and as the base; keyboard use;
 * axe-core with no serious or critical violation at desktop and phone width; no console error.
 */
import { mkdirSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Page } from "playwright-core";
import { launchChromium, signIn, watchProblems, type Chromium } from "../support/chromium.ts";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient, type ScriptedStep } from "../support/scripted-openai.ts";

const ROOT = resolve(import.meta.dirname, "../..");
const SHOTS = resolve(ROOT, "test-results/screenshots");
const AXE = readFileSync(resolve(ROOT, "node_modules/axe-core/axe.min.js"), "utf8");
const modelUrl = inject("modelUrl");
const PHONE = { width: 390, height: 844 };

let page: Page;
let browser: Chromium;
let ws: { id: string; token: string };
const problems: string[] = [];

const APP = Array.from({ length: 12 }, (_, i) => `export const line${i + 1} = ${i + 1};`).join("\n") + "\n";
const CLONE =
  "git clone https://git.example/acme/demo.git . 2>/dev/null || { mkdir -p src && " +
  `printf '%s\\n' ${APP.trim()
    .split("\n")
    .map((l) => `'${l}'`)
    .join(" ")} > src/app.ts && echo '# demo' > README.md && seq 1 60000 > big.txt; }`;

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

beforeAll(async () => {
  mkdirSync(SHOTS, { recursive: true });
  ws = await newWorkspace();
  browser = await launchChromium({ acceptDownloads: true });
  page = browser.page;
  watchProblems(page, problems);
  await signIn(page, baseUrl(), ws.token);
}, 120_000);

afterAll(async () => {
  await browser?.close();
});

describe("e2e: the console's Files panel", () => {
  it("shows the tree against the clone's tree, a diff, numbered content, binary and large files; keyboard, axe, phone width", async () => {
    const modelId = `script:files-${Math.random().toString(36).slice(2, 8)}`;
    const call = (name: string, args: Record<string, unknown>): ScriptedStep => ({ tool_calls: [{ name, arguments: args }] });
    await scriptedModelClient(modelUrl).script(modelId, [
      call("write_file", { path: "notes.txt", content: "before the clone\n" }),
      call("bash", { command: CLONE }),
      call("edit_file", { path: "src/app.ts", old_text: "line3 = 3;", new_text: "line3 = 33;" }),
      call("write_file", { path: "src/new.ts", content: "export const fresh = true;\n" }),
      call("write_file", { path: "logo.bin", content: "PNG\u0000\u0001\u0002" }),
      call("bash", { command: "rm README.md" }),
      { text: "Changed the code." },
    ]);
    const cfg = await api("PUT", "/api/config", {
      token: ws.token,
      body: { model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` } },
    });
    expect(cfg.status).toBe(200);
    const session = (await (await api("POST", "/api/sessions", { token: ws.token, body: {} })).json()) as { id: string };
    const run = await api("POST", `/api/sessions/${session.id}/messages?wait=true`, {
      token: ws.token,
      body: { content: "change the code", toolset: "code" },
    });
    expect(((await run.json()) as { status: string }).status).toBe("completed");
    const { changes } = (await (await api("GET", `/api/sessions/${session.id}/file-changes`, { token: ws.token })).json()) as {
      changes: { event_id: string; tool_name: string; command: string | null }[];
    };
    expect(changes.map((c) => c.tool_name)).toEqual(["write_file", "bash", "edit_file", "write_file", "write_file", "bash"]);
    const clone = changes[1]!;

    await page.goto(`${baseUrl()}/chat/${encodeURIComponent(session.id)}`);
    await page.locator("summary", { hasText: "Files" }).click();
    const panel = page.getByTestId("files-panel");
    await panel.getByTestId("files-summary").filter({ hasText: "5 files" }).waitFor();
    // The default base is the clone's tree, not the first change's.
    expect(await panel.getByTestId("files-base").inputValue()).toBe(clone.event_id);
    await panel.getByTestId("files-summary").filter({ hasText: "4 changed against the base" }).waitFor();
    const rowOf = (path: string) => panel.locator(`li.file-row:has(button[data-path="${path}"])`);
    expect(await rowOf("src/app.ts").locator(".badge").textContent()).toBe("modified");
    expect(await rowOf("src/new.ts").locator(".badge").textContent()).toBe("added");
    expect(await rowOf("README.md").locator(".badge").textContent()).toBe("deleted");
    expect(await rowOf("logo.bin").locator(".badge").textContent()).toBe("added");
    expect(await rowOf("notes.txt").locator(".badge").count()).toBe(0);

    // A modified file opens on its diff: the old and the new line, with line numbers.
    await panel.getByRole("button", { name: "app.ts" }).click();
    const diff = panel.getByTestId("file-diff");
    await diff.waitFor();
    expect(await diff.locator("div.del").textContent()).toBe("3-export const line3 = 3;");
    expect(await diff.locator("div.add").textContent()).toBe("3+export const line3 = 33;");
    await panel.getByRole("tab", { name: "Content" }).click();
    const content = panel.getByTestId("file-content");
    expect(await content.locator("div").count()).toBe(12);
    expect(await content.locator("div").nth(2).textContent()).toBe("3export const line3 = 33;");
    await page.screenshot({ path: join(SHOTS, "files-panel-desktop.png"), fullPage: true });
    await axe("files panel, desktop");

    // Keyboard: focus a file's button, Enter opens it; a deleted file's diff shows what it held.
    await panel.getByRole("button", { name: "README.md" }).focus();
    await page.keyboard.press("Enter");
    await panel.getByTestId("file-path").filter({ hasText: "README.md" }).waitFor();
    expect(await panel.getByTestId("file-diff").locator("div.del").textContent()).toBe("1-# demo");

    // Binary and large files.
    await panel.getByRole("button", { name: "logo.bin" }).click();
    await panel.getByRole("tab", { name: "Content" }).click();
    await panel.getByText("Binary file, 6 B").waitFor();
    await panel.getByRole("button", { name: "big.txt" }).click();
    await panel.getByTestId("file-truncated").waitFor();
    expect(await panel.getByTestId("file-truncated").textContent()).toContain("Showing the first 256.0 KiB of 340.7 KiB");
    const [download] = await Promise.all([
      page.waitForEvent("download"),
      panel.getByRole("button", { name: "Download", exact: true }).click(),
    ]);
    expect(download.suggestedFilename()).toBe("big.txt");
    const saved = readFileSync((await download.path())!, "utf8");
    expect(saved.split("\n").length).toBe(60_001);

    // The tree at the clone's event, diffed against the first change: the clone's files are added.
    await panel.getByTestId("files-at").selectOption(clone.event_id);
    await panel.getByTestId("files-base").selectOption(changes[0]!.event_id);
    await panel.getByTestId("files-summary").filter({ hasText: "4 files" }).waitFor();
    await panel.getByTestId("files-summary").filter({ hasText: "3 changed against the base" }).waitFor();
    expect(await rowOf("README.md").locator(".badge").textContent()).toBe("added");

    // Phone width: the panel stacks, nothing overflows sideways, axe still passes.
    await page.setViewportSize(PHONE);
    await panel.getByRole("button", { name: "app.ts" }).click();
    await panel.getByTestId("file-path").filter({ hasText: "src/app.ts" }).waitFor();
    expect((await page.evaluate("document.documentElement.scrollWidth")) as number).toBeLessThanOrEqual(PHONE.width);
    await page.screenshot({ path: join(SHOTS, "files-panel-phone.png"), fullPage: true });
    await axe("files panel, phone");
    expect(problems).toEqual([]);
  }, 120_000);
});
