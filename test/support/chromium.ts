/**
 * Headless Chromium for the e2e tests that drive the console: Debian's `/usr/bin/chromium` through
 * playwright-core (no browser download; `.ci/run` installs the package), in a throwaway profile that
 * `close()` removes. `watchProblems` collects what a page reports as wrong (console errors, page errors,
 * HTTP answers ≥ 400, failed requests) so a test can require none; `trackRequests` lets a test wait for
 * a page's requests before leaving it; `signIn` is the console's own form.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { chromium, type BrowserContext, type Page, type Request } from "playwright-core";

export interface Chromium {
  context: BrowserContext;
  /** The profile's first tab. */
  page: Page;
  close(): Promise<void>;
}

const ARGS = [
  "--headless",
  "--no-sandbox",
  "--disable-gpu",
  "--disable-quic",
  "--no-first-run",
  "--disable-background-networking",
  "--disable-component-update",
  "--disable-sync",
];

export async function launchChromium(
  options: { viewport?: { width: number; height: number }; acceptDownloads?: boolean } = {},
): Promise<Chromium> {
  const userDataDir = mkdtempSync(join(tmpdir(), "beaver-chromium-"));
  const context = await chromium.launchPersistentContext(userDataDir, {
    executablePath: "/usr/bin/chromium",
    headless: true,
    args: ARGS,
    viewport: options.viewport ?? { width: 1280, height: 900 },
    ...(options.acceptDownloads ? { acceptDownloads: true } : {}),
  });
  const page = context.pages()[0] ?? (await context.newPage());
  return {
    context,
    page,
    close: async () => {
      await context.close();
      rmSync(userDataDir, { recursive: true, force: true });
    },
  };
}

/** Pushes each problem the page reports to `problems`. Closing an event stream (leaving a conversation) aborts its request: not a problem. */
export function watchProblems(page: Page, problems: string[], options: { failedRequests?: boolean } = {}): void {
  page.on("console", (m) => {
    if (m.type() === "error") problems.push(`console: ${m.text()}`);
  });
  page.on("pageerror", (e) => problems.push(`page error: ${e.message}`));
  page.on("response", (r) => {
    if (r.status() >= 400) problems.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  if (options.failedRequests)
    page.on("requestfailed", (r) => {
      if (r.failure()?.errorText === "net::ERR_ABORTED" && isLiveStream(r)) return;
      problems.push(`request failed: ${r.method()} ${r.url()} ${r.failure()?.errorText}`);
    });
}

/** A session's live stream: open for as long as its page is shown, so leaving the page ends it. */
function isLiveStream(r: Request): boolean {
  return /\/stream(\?|$)/.test(r.url());
}

/**
 * The page's requests still in flight, live streams left out. A test that leaves a page while one of
 * its requests is answering makes the browser abort it, which `watchProblems` rightly counts as a
 * failed request: `settled()` waits until every request the page made has finished or failed.
 */
export function trackRequests(page: Page): { settled(timeoutMs?: number): Promise<void> } {
  const open = new Set<Request>();
  page.on("request", (r) => {
    if (!isLiveStream(r)) open.add(r);
  });
  page.on("requestfinished", (r) => open.delete(r));
  page.on("requestfailed", (r) => open.delete(r));
  return {
    async settled(timeoutMs = 30_000) {
      const until = Date.now() + timeoutMs;
      while (open.size > 0) {
        if (Date.now() > until) throw new Error(`requests still in flight: ${[...open].map((r) => `${r.method()} ${r.url()}`).join(", ")}`);
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    },
  };
}

/** Signs the console in with an API token through its form and waits for the main navigation. */
export async function signIn(page: Page, baseUrl: string, token: string): Promise<void> {
  await page.goto(`${baseUrl}/`);
  await page.getByLabel("API token").fill(token);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("navigation", { name: "Main" }).waitFor();
}
