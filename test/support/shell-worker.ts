/**
 * The shell Worker (shell/index.ts) for the in-worker tests: vitest-pool-workers runs auxiliary Workers
 * from built JavaScript only, so this bundles it the way `wrangler deploy` does (a dry run) into
 * .wrangler/shell-test/, which vitest.config.ts gives the pool as the `beaver-shell` service.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";

const ROOT = resolve(import.meta.dirname, "../..");

/** Builds the shell Worker and returns its one module's path. */
export function buildShellWorker(): string {
  const outdir = join(ROOT, ".wrangler", "shell-test");
  const wrangler = join(ROOT, "node_modules", ".bin", "wrangler");
  execFileSync(wrangler, ["deploy", "--dry-run", "--outdir", outdir, "--config", "shell/wrangler.toml"], {
    cwd: ROOT,
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" },
    stdio: "pipe",
  });
  const script = join(outdir, "index.js");
  if (!existsSync(script)) throw new Error(`the shell Worker's build wrote no ${script}`);
  return script;
}
