/**
 * Vitest global setup (in-worker and e2e): builds the web console when console/dist is missing or
 * stale, because wrangler.toml's [assets] directory must exist before the Worker starts and only
 * `wrangler dev`/`deploy` run the [build] command themselves (docs/console.md).
 */
import { execFileSync } from "node:child_process";
import { resolve } from "node:path";

export function setup(): void {
  execFileSync(process.execPath, [resolve(import.meta.dirname, "../../scripts/build-console.mjs")], { stdio: "inherit" });
}
