/**
 * `npm run conformance:mcp-server` (docs/mcp.md, "Conformance", server side): the authorization-server
 * scenarios of `@modelcontextprotocol/conformance` (`conformance authorization`, first in the 0.2.0
 * pre-releases; `CONFORMANCE_SERVER_PKG` names the version, fetched by npx) against Beaver's OAuth
 * server on a real `wrangler dev`. `authorization-code-grant` prints an authorization URL and waits
 * for a browser to come back to its own callback port: here a member approves it in the console's
 * authorization page in headless Chromium (`/usr/bin/chromium`, as in the e2e suite), exactly as a
 * person would. The runner is given a client registered beforehand through Beaver's dynamic client
 * registration with that callback as its redirect URI. Not part of `npm test` (it fetches the
 * pre-release from the npm registry).
 */
import { spawn } from "node:child_process";
import { createServer } from "node:net";
import { startWranglerDev } from "../test/support/wrangler-dev.ts";
import { newWorkspaceToken } from "./conformance-workspace.ts";
import { launchChromium } from "../test/support/chromium.ts";

const PKG = process.env.CONFORMANCE_SERVER_PKG ?? "@modelcontextprotocol/conformance@0.2.0-alpha.12";

function freePort(): Promise<number> {
  return new Promise((ok) => {
    const s = createServer().listen(0, "127.0.0.1", () => {
      const port = (s.address() as { port: number }).port;
      s.close(() => ok(port));
    });
  });
}

const dev = await startWranglerDev();
const browser = await launchChromium();
let exitCode = 1;
try {
  const port = await freePort();
  const member = await newWorkspaceToken(dev.url, dev.adminToken, "confsrv", ["member"]);
  const registered = await fetch(`${dev.url}/oauth/register`, {
    method: "POST",
    headers: { "Content-Type": "application/json" },
    body: JSON.stringify({
      client_name: "MCP conformance",
      redirect_uris: [`http://127.0.0.1:${port}/callback`],
      grant_types: ["authorization_code", "refresh_token"],
      response_types: ["code"],
      token_endpoint_auth_method: "none",
    }),
  });
  if (registered.status !== 201) throw new Error(`registration answered ${registered.status}: ${await registered.text()}`);
  const clientId = ((await registered.json()) as { client_id: string }).client_id;

  const args = ["-y", "-p", PKG, "conformance", "authorization", "--url", dev.url, "--client-id", clientId];
  args.push("--resource", `${dev.url}/mcp`, "--port", String(port));
  const child = spawn("npx", args, { stdio: ["ignore", "pipe", "pipe"] });
  let output = "";
  let approved: Promise<void> | null = null;
  const onOutput = (chunk: Buffer) => {
    output += chunk.toString();
    process.stdout.write(chunk);
    const url = /^(https?:\/\/\S+\/oauth\/authorize\?\S+)$/m.exec(output)?.[1];
    if (url && !approved)
      approved = (async () => {
        const page = browser.page;
        await page.goto(`${dev.url}/`);
        await page.evaluate((t) => sessionStorage.setItem("beaver.token", t), member);
        await page.goto(url);
        await page.getByTestId("oauth-client").waitFor();
        await page.getByRole("button", { name: "Approve" }).click();
        await page.waitForURL(/127\.0\.0\.1:\d+\/callback\?/);
        console.log("[approved in the console's authorization page]");
      })();
  };
  child.stdout.on("data", onOutput);
  child.stderr.on("data", onOutput);
  exitCode = await new Promise<number>((ok) => child.on("exit", (code) => ok(code ?? 1)));
  if (approved) await approved;
  else console.log("[the runner printed no authorization URL]");
} finally {
  await browser.close();
  await dev.stop();
}
process.exit(exitCode);
