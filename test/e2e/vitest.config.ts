// e2e tests run in Node against a real `wrangler dev` started once by the global setup.
import { defineConfig } from "vitest/config";

export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    // The console is built first: every `wrangler dev` of the suite serves it (test/support/build-console.ts).
    globalSetup: ["test/support/build-console.ts", "test/e2e/global-setup.ts"],
    testTimeout: 60_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    hookTimeout: 120_000,
    // Two files at a time: most of an e2e file's time is waiting (on wrangler dev, Chromium, restarts), and
    // every file works in workspaces of its own against the shared `wrangler dev`.
    fileParallelism: true,
    maxWorkers: 2,
  },
});
