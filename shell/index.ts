/**
 * The shell Worker (docs/workspace.md, "The shell"; the protocol: src/runtime/workspace/shell-protocol.ts).
 * Workers cannot spawn processes, so the shell is just-bash (vercel-labs/just-bash, its browser build: no
 * node:fs, no worker threads): bash syntax with coreutils, grep, sed, awk, find, jq, diff… in JavaScript.
 * It lives in a Worker of its own so that the main Worker's bundle and cold starts leave it out
 * (docs/performance.md, sixth pass); this Worker holds nothing but the interpreter.
 *
 * One RPC call runs one command line. The caller's workspace is mounted through `HostFs`, whose every call
 * goes back to the caller; anything written elsewhere (/tmp) lives in this call's memory and is gone after
 * it. The caller's extra commands (`git`) are forwarded by name. The caller stops a command through
 * `host.stopped()`; just-bash's own deadline (`maxExecutionTimeMs`) stops a busy loop no timer can reach.
 */
import { WorkerEntrypoint } from "cloudflare:workers";
import { Bash, defineCommand, InMemoryFs, MountableFs } from "just-bash/browser";
import type { CpOptions, FileContent, FsStat, IFileSystem, MkdirOptions, RmOptions } from "just-bash/browser";
import type {
  ShellFsAnswer,
  ShellFsCall,
  ShellHost,
  ShellOutcome,
  ShellRequest,
  ShellService,
} from "../src/runtime/workspace/shell-protocol.ts";

/** just-bash's directory entry (exported from its main entry only, not the browser one). */
interface DirentEntry {
  name: string;
  isFile: boolean;
  isDirectory: boolean;
  isSymbolicLink: boolean;
}

/** An empty memory file system, for its path arithmetic (`resolvePath`), which the workspace has no links to change. */
const PATHS = new InMemoryFs();

/** Calls that change nothing: every other call may, so it empties the stat cache (`HostFs.forget`). */
const READS = new Set<ShellFsCall>([
  "readFile",
  "readFileBuffer",
  "exists",
  "stat",
  "lstat",
  "readdir",
  "readdirWithFileTypes",
  "readlink",
  "realpath",
]);

/**
 * The caller's workspace as just-bash's file system: each call is one RPC back to the caller, except the
 * `stat`s a listing already brought (`ShellHost.list`). Those are kept only while nothing has changed:
 * every changing call and every extra command (which runs in the caller and may write, as `git` does)
 * empties the cache, and a listing that was under way across such a change is not kept.
 */
export class HostFs implements IFileSystem {
  readonly #host: ShellHost;
  readonly #heard: (answer: { stopped?: string }) => void;
  readonly #stats = new Map<string, FsStat>();
  /** Counts changes; a listing is cached only if none happened while it was under way. */
  #generation = 0;

  /** `heard` sees every answer first, for the stop it may carry. */
  constructor(host: ShellHost, heard: (answer: { stopped?: string }) => void) {
    this.#host = host;
    this.#heard = heard;
  }

  /** Something may have changed the files (a changing call, an extra command): cached stats are dropped. */
  forget(): void {
    this.#generation++;
    this.#stats.clear();
  }

  async #call<T>(call: ShellFsCall, ...args: unknown[]): Promise<T> {
    if (!READS.has(call)) this.forget();
    const answer = await this.#host.fs(call, args);
    if (!READS.has(call)) this.forget();
    return this.#value<T>(answer);
  }

  #value<T>(answer: ShellFsAnswer): T {
    this.#heard(answer);
    if ("error" in answer) throw Object.assign(new Error(answer.error.message), answer.error.code ? { code: answer.error.code } : {});
    return answer.value as T;
  }

  #cached(path: string): FsStat | undefined {
    return this.#stats.get(this.resolvePath("/", path));
  }

  readFile(path: string, options?: unknown): Promise<string> {
    return this.#call("readFile", path, options);
  }
  readFileBuffer(path: string): Promise<Uint8Array> {
    return this.#call("readFileBuffer", path);
  }
  writeFile(path: string, content: FileContent, options?: unknown): Promise<void> {
    return this.#call("writeFile", path, content, options);
  }
  appendFile(path: string, content: FileContent, options?: unknown): Promise<void> {
    return this.#call("appendFile", path, content, options);
  }
  exists(path: string): Promise<boolean> {
    return this.#cached(path) ? Promise.resolve(true) : this.#call("exists", path);
  }
  stat(path: string): Promise<FsStat> {
    const known = this.#cached(path);
    return known ? Promise.resolve({ ...known }) : this.#call("stat", path);
  }
  /** The workspace has no links (WorkspaceShellFs refuses them), so `lstat` is `stat`. */
  lstat(path: string): Promise<FsStat> {
    const known = this.#cached(path);
    return known ? Promise.resolve({ ...known }) : this.#call("lstat", path);
  }
  mkdir(path: string, options?: MkdirOptions): Promise<void> {
    return this.#call("mkdir", path, options);
  }
  async readdir(path: string): Promise<string[]> {
    const generation = this.#generation;
    const { names, stats } = this.#value<{ names: string[]; stats: (FsStat | null)[] }>(await this.#host.list(path));
    if (generation === this.#generation) {
      const dir = this.resolvePath("/", path);
      names.forEach((name, i) => {
        const stat = stats[i];
        if (stat) this.#stats.set(this.resolvePath(dir, name), stat);
      });
    }
    return names;
  }
  readdirWithFileTypes(path: string): Promise<DirentEntry[]> {
    return this.#call("readdirWithFileTypes", path);
  }
  rm(path: string, options?: RmOptions): Promise<void> {
    return this.#call("rm", path, options);
  }
  cp(src: string, dest: string, options?: CpOptions): Promise<void> {
    return this.#call("cp", src, dest, options);
  }
  mv(src: string, dest: string): Promise<void> {
    return this.#call("mv", src, dest);
  }
  chmod(path: string, mode: number): Promise<void> {
    return this.#call("chmod", path, mode);
  }
  symlink(target: string, linkPath: string): Promise<void> {
    return this.#call("symlink", target, linkPath);
  }
  link(existingPath: string, newPath: string): Promise<void> {
    return this.#call("link", existingPath, newPath);
  }
  readlink(path: string): Promise<string> {
    return this.#call("readlink", path);
  }
  realpath(path: string): Promise<string> {
    return this.#call("realpath", path);
  }
  utimes(path: string, atime: Date, mtime: Date): Promise<void> {
    return this.#call("utimes", path, atime, mtime);
  }

  /** Path arithmetic only (no I/O), so it stays here: just-bash's own, as its memory file system does it. */
  resolvePath(base: string, path: string): string {
    return PATHS.resolvePath(base, path);
  }

  /** The workspace is read one directory at a time, never listed whole (as WorkspaceShellFs). */
  getAllPaths(): string[] {
    return [];
  }
}

export async function runShell(request: ShellRequest, host: ShellHost): Promise<ShellOutcome> {
  const stop = new AbortController();
  // A host that goes away (its object evicted) stops the command too; once the command ended the answer is null.
  host.stopped().then(
    (reason) => reason !== null && stop.abort(reason),
    (err: unknown) => stop.abort(err),
  );
  // Told with the host's answers too, so a command that returned on the stop is the line's last step.
  const heard = (answer: { stopped?: string }) => answer.stopped !== undefined && stop.abort(answer.stopped);
  const files = new HostFs(host, heard);
  const fs = new MountableFs({ base: new InMemoryFs(), mounts: [{ mountPoint: request.mount, filesystem: files }] });
  const bash = new Bash({
    fs,
    cwd: request.cwd,
    env: request.env,
    executionLimits: { maxExecutionTimeMs: request.maxExecutionTimeMs, maxOutputSize: request.maxOutputSize },
    customCommands: request.commands.map((name) =>
      defineCommand(name, async (args, ctx) => {
        try {
          files.forget();
          const { stdout, stderr, exitCode, ...notice } = await host.command(name, args, { cwd: ctx.cwd });
          files.forget();
          heard(notice);
          return { stdout, stderr, exitCode };
        } catch (err) {
          return { stdout: "", stderr: `${name}: ${err instanceof Error ? err.message : String(err)}\n`, exitCode: 1 };
        }
      }),
    ),
  });
  const result = await bash.exec(request.command, { signal: stop.signal });
  return { stdout: result.stdout, stderr: result.stderr, exitCode: result.exitCode };
}

export default class ShellWorker extends WorkerEntrypoint implements ShellService {
  run(request: ShellRequest, host: ShellHost): Promise<ShellOutcome> {
    return runShell(request, host);
  }
}
