/**
 * Starts the MCP reference server `@modelcontextprotocol/server-everything` in Streamable HTTP mode
 * (`dist/index.js streamableHttp`, port from `PORT`) on a free loopback port, for e2e tests that
 * connect Beaver to it (test/e2e/mcp.e2e.ts). Resolves once it says it is listening.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { freePort } from "./wrangler-dev.ts";

export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp` */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const ENTRY = resolve(import.meta.dirname, "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

export async function startEverythingServer(): Promise<EverythingServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [ENTRY, "streamableHttp"], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server-everything did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(`listening on port ${port}`)) {
        clearTimeout(timer);
        ok();
      }
    };
    child.stdout?.on("data", onData);
    child.stderr?.on("data", onData);
    child.once("exit", (code) => {
      clearTimeout(timer);
      fail(new Error(`server-everything exited (${code}):\n${output}`));
    });
  });
  return {
    url: `http://127.0.0.1:${port}/mcp`,
    port,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null || child.signalCode !== null) return ok();
        child.once("exit", () => ok());
        child.kill("SIGTERM");
      }),
  };
}
