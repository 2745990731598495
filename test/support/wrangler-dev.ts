/**
 * Starts a real `wrangler dev` for e2e tests and benchmarks: a fresh persistence folder, local D1
 * migrations applied, secrets passed as vars, private egress allowed (the scripted servers are on
 * loopback; `vars` may turn it off), a free port; resolves once the Worker answers /api/ping.
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { createServer } from "node:net";

export interface DevServer {
  url: string;
  port: number;
  adminToken: string;
  /** The state folder (D1, R2, Durable Objects); kept by `kill`, removed by `stop` unless it was given. */
  persistTo: string;
  /** The DevTools inspector port wrangler proxies (CPU profiles: bench/profile.ts). */
  inspectorPort: number;
  /** wrangler's process id, which is also the process group of workerd under it (CPU accounting: bench/cpu.ts). */
  pid: number;
  stop(): Promise<void>;
  /** SIGKILL wrangler and workerd at once, as a crash would, leaving the state folder as it is. */
  kill(): Promise<void>;
  /** Everything wrangler printed, for failure messages. */
  output(): string;
}

export interface StartOptions {
  vars?: Record<string, string>;
  /** Milliseconds to wait for readiness. */
  timeoutMs?: number;
  /** The wrangler config to run (a path from the repo root); the top-level wrangler.toml when unset. */
  config?: string;
  /** Reuse this state folder (a restart after a crash); a fresh one when unset. */
  persistTo?: string;
  /** The admin token (a restart keeps the one it had). */
  adminToken?: string;
}

const ROOT = resolve(import.meta.dirname, "../..");
/** The shell Worker's config (shell/wrangler.toml), run beside the main Worker in the same `wrangler dev`. */
const SHELL_CONFIG = "shell/wrangler.toml";
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");

export async function freePort(): Promise<number> {
  return new Promise((ok, fail) => {
    const srv = createServer();
    srv.once("error", fail);
    srv.listen(0, "127.0.0.1", () => {
      const addr = srv.address();
      const port = typeof addr === "object" && addr ? addr.port : 0;
      srv.close(() => ok(port));
    });
  });
}

export async function startWranglerDev(opts: StartOptions = {}): Promise<DevServer> {
  const persist = opts.persistTo ?? mkdtempSync(join(tmpdir(), "beaver-e2e-"));
  const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  const config = opts.config ? ["--config", opts.config] : [];
  execFileSync(WRANGLER, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist, ...config], {
    cwd: ROOT,
    env,
    stdio: "pipe",
  });

  const port = await freePort();
  const inspectorPort = await freePort();
  const adminToken = opts.adminToken ?? `e2e-admin-${Math.random().toString(36).slice(2)}`;
  const vars: Record<string, string> = {
    BEAVER_ADMIN_TOKEN: adminToken,
    BEAVER_SECRETS_KEY: "e2e-secrets-key-0123456789abcdef",
    // The scripted model server and the fake Gitea listen on loopback (README "Egress policy").
    BEAVER_ALLOW_PRIVATE_EGRESS: "true",
    ...opts.vars,
  };
  const args = [
    "dev",
    "--ip",
    "127.0.0.1",
    "--port",
    String(port),
    "--persist-to",
    persist,
    "--inspector-port",
    String(inspectorPort),
    "--show-interactive-dev-session=false",
    "--log-level",
    "warn",
    // The main Worker first (its port, its state), then the shell Worker its `SHELL` binding calls (docs/workspace.md, "The shell").
    "--config",
    opts.config ?? "wrangler.toml",
    "--config",
    SHELL_CONFIG,
  ];
  for (const [k, v] of Object.entries(vars)) args.push("--var", `${k}:${v}`);
  const child: ChildProcess = spawn(WRANGLER, args, { cwd: ROOT, env, stdio: ["ignore", "pipe", "pipe"], detached: true });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));

  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + (opts.timeoutMs ?? 90_000);
  for (;;) {
    if (child.exitCode !== null) throw new Error(`wrangler dev exited early (${child.exitCode}):\n${log}`);
    try {
      const res = await fetch(`${url}/api/ping`);
      if (res.ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) {
      killTree(child);
      throw new Error(`wrangler dev did not become ready:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 250));
  }

  return {
    url,
    port,
    adminToken,
    persistTo: persist,
    inspectorPort,
    pid: child.pid ?? -1,
    output: () => log,
    async stop() {
      killTree(child);
      await new Promise((r) => setTimeout(r, 300));
      if (!opts.persistTo) rmSync(persist, { recursive: true, force: true });
    },
    async kill() {
      killTree(child, "SIGKILL");
      await new Promise<void>((r) => (child.exitCode !== null || child.signalCode !== null ? r() : child.once("exit", () => r())));
    },
  };
}

function killTree(child: ChildProcess, signal: NodeJS.Signals = "SIGTERM"): void {
  if (child.pid === undefined || child.exitCode !== null) return;
  try {
    process.kill(-child.pid, signal);
  } catch {
    child.kill(signal);
  }
}
