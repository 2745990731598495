/**
 * The session's side of a shell command (docs/workspace.md, "The shell"; shell-protocol.ts): the RpcTarget
 * the shell Worker calls back for the workspace's files (WorkspaceShellFs, whose overlay the command's
 * commit reads afterwards), for the extra commands (`git`), and to learn when the command is stopped.
 */
import { RpcTarget } from "cloudflare:workers";
import {
  SHELL_FS_CALLS,
  type ShellCommandAnswer,
  type ShellFsAnswer,
  type ShellFsCall,
  type ShellHost,
  type ShellOutcome,
} from "./shell-protocol.ts";
import type { WorkspaceShellFs } from "./shell-fs.ts";

/** An extra shell command that runs in the session (for example `git`, bound to the session's workspace). */
export interface ShellCommand {
  name: string;
  run(args: string[], io: { cwd: string; signal: AbortSignal }): Promise<ShellOutcome>;
}

const FS_CALLS = new Set<string>(SHELL_FS_CALLS);

export class ShellHostTarget extends RpcTarget implements ShellHost {
  readonly #files: WorkspaceShellFs;
  readonly #commands: Map<string, ShellCommand>;
  readonly #signal: AbortSignal;
  readonly #stopped: Promise<string | null>;

  /** `signal` stops the command; `ended` resolves when the caller has its answer (the shell then hears null). */
  constructor(files: WorkspaceShellFs, commands: readonly ShellCommand[], signal: AbortSignal, ended: Promise<void>) {
    super();
    this.#files = files;
    this.#commands = new Map(commands.map((c) => [c.name, c]));
    this.#signal = signal;
    const stop = new Promise<string>((resolve) => {
      const say = () => resolve(describe(signal.reason));
      if (signal.aborted) say();
      else signal.addEventListener("abort", say, { once: true });
    });
    this.#stopped = Promise.race([stop, ended.then(() => null)]);
  }

  async fs(call: ShellFsCall, args: unknown[]): Promise<ShellFsAnswer> {
    if (!FS_CALLS.has(call)) return { error: { message: `unknown file system call '${String(call)}'` } };
    const method = this.#files[call] as (...a: unknown[]) => Promise<unknown>;
    try {
      return { value: await method.apply(this.#files, args), ...this.#notice() };
    } catch (err) {
      const e = err as { message?: unknown; code?: unknown };
      const message = typeof e.message === "string" ? e.message : String(err);
      return { error: { message, ...(typeof e.code === "string" ? { code: e.code } : {}) }, ...this.#notice() };
    }
  }

  async list(path: string): Promise<ShellFsAnswer> {
    const names = await this.fs("readdir", [path]);
    if (!("value" in names)) return names;
    const list = names.value as string[];
    const base = path.endsWith("/") ? path : `${path}/`;
    const stats = await Promise.all(list.map((name) => this.#files.stat(`${base}${name}`).catch(() => null)));
    return { value: { names: list, stats }, ...this.#notice() };
  }

  async command(name: string, args: string[], io: { cwd: string }): Promise<ShellCommandAnswer> {
    const command = this.#commands.get(name);
    if (!command) return { stdout: "", stderr: `${name}: command not found\n`, exitCode: 127 };
    return { ...(await command.run(args, { ...io, signal: this.#signal })), ...this.#notice() };
  }

  /** The stop, told with every answer once it happened (shell-protocol.ts, `StopNotice`). */
  #notice(): { stopped?: string } {
    return this.#signal.aborted ? { stopped: describe(this.#signal.reason) } : {};
  }

  stopped(): Promise<string | null> {
    return this.#stopped;
  }
}

function describe(reason: unknown): string {
  if (reason instanceof Error) return reason.message || reason.name;
  return typeof reason === "string" ? reason : "stopped";
}
