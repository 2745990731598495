// In-worker tests: the Worker runs inside workerd with real D1, R2 and Durable Objects from wrangler.toml.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      // The production entry wrapped with test services (mock models, faults, fakes): test/support/worker.ts.
      main: "./test/support/worker.ts",
      miniflare: {
        bindings: {
          TEST_MIGRATIONS: await readD1Migrations("./migrations"),
          BEAVER_ADMIN_TOKEN: "test-admin-token",
          BEAVER_SECRETS_KEY: "test-secrets-key-0123456789abcdef",
          SINGLE_TENANT_KEY: "from-worker-env",
        },
      },
    })),
  ],
  test: {
    include: ["test/**/*.test.ts"],
    exclude: ["test/e2e/**", "node_modules/**"],
    setupFiles: ["./test/support/apply-migrations.ts"],
    testTimeout: 30_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    hookTimeout: 30_000,
  },
});
