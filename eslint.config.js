// Lint rules for the whole repo: typescript-eslint's recommended set, no unexplained `any`.
import tseslint from "typescript-eslint";

export default tseslint.config(
  {
    ignores: [
      "node_modules/",
      "dist/",
      "dist-production/",
      "dist-shell/",
      "console/dist/",
      "**/.wrangler/",
      "migrations/",
      ".node/",
      "coverage/",
      "bench/peers/cf-agents/",
    ],
  },
  ...tseslint.configs.recommended,
  {
    rules: {
      "@typescript-eslint/no-explicit-any": "error",
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_", varsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
  {
    // Worker code logs through the kernel logger (src/kernel/log.ts: one JSON line with the request's ids).
    files: ["src/**/*.ts"],
    ignores: ["src/kernel/log.ts"],
    rules: { "no-console": "error" },
  },
  {
    // `*.pure.test.ts` files share one module graph (vitest.config.ts, project "pure"): no bindings,
    // Durable Objects or test services, whose per-file isolation they would not get.
    files: ["test/**/*.pure.test.ts"],
    rules: {
      "no-restricted-imports": [
        "error",
        {
          patterns: [
            { group: ["cloudflare:*"], message: "A pure test uses no bindings; name it *.test.ts to run isolated." },
            {
              group: ["**/support/sessions*", "**/support/api*", "**/support/test-services*", "**/support/worker*"],
              message: "These helpers use bindings or module-level registrations; name the file *.test.ts to run isolated.",
            },
          ],
        },
      ],
    },
  },
);
