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
          // Worker secrets lent to workspaces (README, Worker secrets): SINGLE_TENANT_KEY is lent to `default` and
          // `ws-shared-keys` only; OPERATOR_ONLY_KEY exists but is lent to nobody; BEAVER_ADMIN_TOKEN is listed
          // to show that BEAVER_ names are never lent even then (test/edge/http/secrets.test.ts).
          SINGLE_TENANT_KEY: "from-worker-env",
          OPERATOR_ONLY_KEY: "sk-operator-only-0123456789abcdef",
          BEAVER_SHARED_SECRETS: "SINGLE_TENANT_KEY, BEAVER_ADMIN_TOKEN",
          BEAVER_SHARED_SECRETS_WORKSPACES: "default,ws-shared-keys",
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
