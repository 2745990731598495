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
    fileParallelism: false,
  },
});
