// `npm run dev`: the whole local start in one command. Creates .dev.vars with fresh random secrets (and
// BEAVER_ALLOW_PRIVATE_EGRESS=true, for local model servers) if it is missing, applies the D1 migrations to the local database without asking, then runs
// `wrangler dev` (local D1, R2 and Durable Objects) of the main Worker and, beside it, the shell Worker its `bash`
// tool calls (shell/wrangler.toml, docs/workspace.md "The shell"). Extra arguments go to `wrangler dev`.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";
import { spawnSync } from "node:child_process";

if (!existsSync(".dev.vars")) {
  const template = readFileSync(".dev.vars.example", "utf8");
  const filled = template
    .replace(/^BEAVER_ADMIN_TOKEN=.*$/m, `BEAVER_ADMIN_TOKEN=${randomBytes(24).toString("base64url")}`)
    .replace(/^BEAVER_SECRETS_KEY=.*$/m, `BEAVER_SECRETS_KEY=${randomBytes(32).toString("base64url")}`);
  // Local development talks to model servers and Gitea on this machine: allow private egress.
  const withEgress = /^#?\s*BEAVER_ALLOW_PRIVATE_EGRESS=.*$/m.test(filled)
    ? filled.replace(/^#?\s*BEAVER_ALLOW_PRIVATE_EGRESS=.*$/m, "BEAVER_ALLOW_PRIVATE_EGRESS=true")
    : `${filled.trimEnd()}\n\nBEAVER_ALLOW_PRIVATE_EGRESS=true\n`;
  writeFileSync(".dev.vars", withEgress, { mode: 0o600 });
  console.log(
    "Created .dev.vars with a new BEAVER_ADMIN_TOKEN and BEAVER_SECRETS_KEY, and BEAVER_ALLOW_PRIVATE_EGRESS=true (see that file).",
  );
}

const run = (args, extraEnv = {}) =>
  spawnSync("wrangler", args, { stdio: "inherit", shell: process.platform === "win32", env: { ...process.env, ...extraEnv } }).status ?? 1;

// Migrations on the local database need no confirmation: CI=true skips wrangler's prompt.
const migrated = run(["d1", "migrations", "apply", "DB", "--local"], { CI: "true" });
if (migrated !== 0) process.exit(migrated);
process.exit(run(["dev", "--config", "wrangler.toml", "--config", "shell/wrangler.toml", ...process.argv.slice(2)]));
