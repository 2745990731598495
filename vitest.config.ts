// In-worker tests: the Worker runs inside workerd with real D1, R2 and Durable Objects from wrangler.toml.
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { TEST_RATE_LIMITS } from "./test/support/rate-limits.ts";
import { buildShellWorker } from "./test/support/shell-worker.ts";

// The `bash` tool's interpreter runs in a Worker of its own (shell/, docs/workspace.md "The shell"), built once per
// run when the pool starts; not when this file is merely read (knip reads it in `npm run lint`).
let shellScript: string | undefined;

export default defineConfig({
  plugins: [
    cloudflareTest(async () => ({
      wrangler: { configPath: "./wrangler.toml" },
      // The production entry wrapped with test services (mock models, faults, fakes): test/support/worker.ts.
      main: "./test/support/worker.ts",
      miniflare: {
        // The shell Worker behind wrangler.toml's `SHELL` service binding, as `wrangler dev` runs it beside this one.
        workers: [
          { name: "beaver-shell", modules: true, scriptPath: (shellScript ??= buildShellWorker()), compatibilityDate: "2026-10-20" },
        ],
        serviceBindings: { SHELL: "beaver-shell" },
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
          // Pinned, because wrangler also reads `.dev.vars`, which `npm run dev` writes with BEAVER_ALLOW_PRIVATE_EGRESS=true:
          // tests must not depend on whether the service was started in this folder before (egress tests set it per test).
          BEAVER_ALLOW_PRIVATE_EGRESS: "false",
          BEAVER_CORS_ORIGINS: "",
        },
        // Small rate limits so a test reaches them with a few requests (production values: wrangler.toml).
        // Every test workspace and token is new, so tests never share a counter.
        ratelimits: {
          RATE_LIMIT_TOKEN: { namespace_id: "1001", simple: { limit: TEST_RATE_LIMITS.token, period: 60 } },
          RATE_LIMIT_WORKSPACE: { namespace_id: "1002", simple: { limit: TEST_RATE_LIMITS.workspace, period: 60 } },
          RATE_LIMIT_WEBHOOK: { namespace_id: "1003", simple: { limit: TEST_RATE_LIMITS.webhook, period: 60 } },
        },
      },
    })),
  ],
  test: {
    // Two projects in the same workerd pool (README, Development): `*.pure.test.ts` files test pure logic (no
    // bindings, no Durable Objects, no module-level registrations) and share one module graph instead of
    // each loading the whole Worker afresh, which is most of a file's time; every other file is isolated.
    projects: [
      {
        extends: true,
        test: { name: "worker", include: ["test/**/*.test.ts"], exclude: ["test/e2e/**", "node_modules/**", "test/**/*.pure.test.ts"] },
      },
      { extends: true, test: { name: "pure", include: ["test/**/*.pure.test.ts"], isolate: false } },
    ],
    setupFiles: ["./test/support/apply-migrations.ts"],
    // Console output goes straight to the terminal: a library that logs while its module loads (the OAuth
    // provider's startup warning) would otherwise make the runner send a message from workerd's global
    // scope, which workerd refuses, and the pool stops answering.
    disableConsoleIntercept: true,
    // wrangler.toml's [assets] directory (the built console) must exist before the Worker starts.
    globalSetup: ["./test/support/build-console.ts"],
    // node-html-markdown (web_fetch) reaches css-what through extensionless ESM imports workerd's module
    // loader cannot resolve; pre-bundling it with Vite resolves them (as wrangler's bundler does in production).
    deps: { optimizer: { ssr: { enabled: true, include: ["node-html-markdown", "turndown"] } } },
    testTimeout: 30_000,
    reporters: ["default", "./test/support/summary-reporter.ts"],
    hookTimeout: 30_000,
  },
});
