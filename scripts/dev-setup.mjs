// First-run helper for `npm run dev`: creates .dev.vars with fresh random secrets if it is missing,
// so the quick start needs no manual step. Prints where the admin token is.
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { randomBytes } from "node:crypto";

if (!existsSync(".dev.vars")) {
  const template = readFileSync(".dev.vars.example", "utf8");
  const filled = template
    .replace(/^BEAVER_ADMIN_TOKEN=.*$/m, `BEAVER_ADMIN_TOKEN=${randomBytes(24).toString("base64url")}`)
    .replace(/^BEAVER_SECRETS_KEY=.*$/m, `BEAVER_SECRETS_KEY=${randomBytes(32).toString("base64url")}`);
  writeFileSync(".dev.vars", filled, { mode: 0o600 });
  console.log("Created .dev.vars with a new BEAVER_ADMIN_TOKEN and BEAVER_SECRETS_KEY (see that file).");
}
