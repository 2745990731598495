// Builds the web console (console/, Vite + Preact) into console/dist, which wrangler.toml's [assets] serves
// (docs/console.md). Run by wrangler's [build] before `wrangler dev` and `wrangler deploy`, and by the test
// setups; it skips the build when console/dist is newer than every source file, so repeated starts stay fast.
//   node scripts/build-console.mjs [--force]
import { existsSync, readdirSync, statSync } from "node:fs";
import { join, resolve } from "node:path";
import { spawnSync } from "node:child_process";

const ROOT = resolve(import.meta.dirname, "..");
const CONSOLE = join(ROOT, "console");
const STAMP = join(CONSOLE, "dist", "index.html");

function newest(path) {
  const st = statSync(path);
  if (!st.isDirectory()) return st.mtimeMs;
  return Math.max(st.mtimeMs, ...readdirSync(path).map((name) => newest(join(path, name))));
}

const sources = ["src", "public", "index.html", "vite.config.ts"].map((p) => join(CONSOLE, p));
const fresh = existsSync(STAMP) && statSync(STAMP).mtimeMs >= Math.max(...sources.map(newest));
if (fresh && !process.argv.includes("--force")) process.exit(0);

const vite = join(ROOT, "node_modules", ".bin", process.platform === "win32" ? "vite.cmd" : "vite");
const built = spawnSync(vite, ["build", "--config", join(CONSOLE, "vite.config.ts")], { cwd: ROOT, stdio: "inherit" });
process.exit(built.status ?? 1);
