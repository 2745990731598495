/**
 * Starts the MCP reference server `@modelcontextprotocol/server-everything` on a free loopback port,
 * in Streamable HTTP mode (`dist/index.js streamableHttp`, endpoint /mcp) or in the older HTTP+SSE
 * mode (`dist/index.js sse`, endpoint /sse), the port from `PORT`, for e2e tests that connect Beaver
 * to it (test/e2e/mcp.e2e.ts). Resolves once it says it is listening.
 */
import { spawn, type ChildProcess } from "node:child_process";
import { resolve } from "node:path";
import { freePort } from "./wrangler-dev.ts";

export interface EverythingServer {
  /** `http://127.0.0.1:<port>/mcp` (or `/sse`) */
  url: string;
  port: number;
  stop(): Promise<void>;
}

const ENTRY = resolve(import.meta.dirname, "../../node_modules/@modelcontextprotocol/server-everything/dist/index.js");

const MODES = {
  streamableHttp: { path: "/mcp", ready: (port: number) => `listening on port ${port}` },
  sse: { path: "/sse", ready: (port: number) => `running on port ${port}` },
} as const;

export async function startEverythingServer(mode: keyof typeof MODES = "streamableHttp"): Promise<EverythingServer> {
  const port = await freePort();
  const child: ChildProcess = spawn(process.execPath, [ENTRY, mode], {
    env: { ...process.env, PORT: String(port) },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let output = "";
  await new Promise<void>((ok, fail) => {
    const timer = setTimeout(() => fail(new Error(`server-everything did not start:\n${output}`)), 30_000);
    const onData = (chunk: Buffer) => {
      output += chunk.toString();
      if (output.includes(MODES[mode].ready(port))) {
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
    url: `http://127.0.0.1:${port}${MODES[mode].path}`,
    port,
    stop: () =>
      new Promise<void>((ok) => {
        if (child.exitCode !== null || child.signalCode !== null) return ok();
        child.once("exit", () => ok());
        child.kill("SIGTERM");
      }),
  };
}
