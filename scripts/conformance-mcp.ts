/**
 * `npm run conformance:mcp` (docs/mcp.md, "Conformance"): the authorization scenarios of
 * `@modelcontextprotocol/conformance` that apply to Beaver's MCP client, run against a real
 * `wrangler dev`. Each client scenario starts the package's own MCP server and authorization server;
 * the client command (scripts/mcp-conformance-client.mjs) drives Beaver's in-Worker client through
 * its API as the console does, and a run whose model (the scripted OpenAI-compatible server of
 * test/support/scripted-openai.ts) calls the scenario server's tool. Not part of `npm test` (one `wrangler dev` plus a scenario per
 * process: too slow for the CI budget). `CONFORMANCE_CLI` may point at another build of the package
 * (for example a newer pre-release); `SCENARIOS` (comma-separated) narrows the list.
 */
import { spawn } from "node:child_process";
import { resolve } from "node:path";
import { startWranglerDev } from "../test/support/wrangler-dev.ts";
import { newWorkspaceToken } from "./conformance-workspace.ts";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";

const ROOT = resolve(import.meta.dirname, "..");
const CLI = process.env.CONFORMANCE_CLI ?? resolve(ROOT, "node_modules/@modelcontextprotocol/conformance/dist/index.js");
const CLIENT = resolve(ROOT, "scripts/mcp-conformance-client.mjs");

/**
 * The client authorization scenarios of the specification's flow (not the `extension` ones); the
 * results, and why some fail, are in docs/mcp.md.
 */
const SCENARIOS = (
  process.env.SCENARIOS ??
  [
    "auth/metadata-default",
    "auth/metadata-var1",
    "auth/metadata-var2",
    "auth/metadata-var3",
    "auth/basic-cimd",
    "auth/scope-from-www-authenticate",
    "auth/scope-from-scopes-supported",
    "auth/scope-omitted-when-undefined",
    "auth/scope-step-up",
    "auth/scope-retry-limit",
    "auth/token-endpoint-auth-basic",
    "auth/token-endpoint-auth-post",
    "auth/token-endpoint-auth-none",
    "auth/pre-registration",
    "auth/2025-03-26-oauth-metadata-backcompat",
    "auth/2025-03-26-oauth-endpoint-fallback",
    "auth/resource-mismatch",
    "auth/offline-access-scope",
    "auth/offline-access-not-supported",
  ].join(",")
).split(",");

function run(args: string[], env: Record<string, string>): Promise<{ code: number | null; output: string }> {
  return new Promise((ok) => {
    const child = spawn(process.execPath, [CLI, ...args], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    child.stdout.on("data", (c: Buffer) => (output += c.toString()));
    child.stderr.on("data", (c: Buffer) => (output += c.toString()));
    child.on("exit", (code) => ok({ code, output }));
  });
}

const model = await startScriptedModelServer();
const dev = await startWranglerDev();
const results: { scenario: string; summary: string; ok: boolean }[] = [];
try {
  for (const scenario of SCENARIOS) {
    // A fresh workspace per scenario: no registration or token carried over from the one before.
    const token = await newWorkspaceToken(dev.url, dev.adminToken, "conf", ["admin"]);
    const { code, output } = await run(["client", "--command", `${process.execPath} ${CLIENT}`, "--scenario", scenario], {
      BEAVER_URL: dev.url,
      BEAVER_TOKEN: token,
      MODEL_URL: model.url,
    });
    const summary = /Passed: \d+\/\d+, \d+ failed, \d+ warnings/.exec(output)?.[0] ?? `no summary (exit ${code})`;
    const ok = code === 0 && / 0 failed/.test(summary);
    results.push({ scenario, summary, ok });
    console.log(`${ok ? "PASS" : "FAIL"} ${scenario}: ${summary}`);
    if (!ok || process.env.VERBOSE) console.log(output);
  }
} finally {
  await dev.stop();
  await model.stop();
}
console.log(`\n${results.filter((r) => r.ok).length}/${results.length} scenarios passed`);
process.exit(results.every((r) => r.ok) ? 0 : 1);
