/**
 * What the session's Durable Object and the shell Worker (shell/index.ts) say to each other over Workers
 * RPC (docs/workspace.md, "The shell"). just-bash, the shell, is the largest piece of code Beaver has
 * (about a third of the gzipped bundle), so it runs in a Worker of its own, started only by the sessions
 * that run a command: the main Worker's cold isolates never load it (docs/performance.md, sixth pass).
 *
 * The workspace stays with the session: the shell Worker mounts a file system whose every call comes back
 * to the caller's `ShellHost` (an RpcTarget over WorkspaceShellFs), so the overlay, its limits and the one
 * commit after the command are where they were. Extra commands (`git`) run in the caller too; the shell
 * only knows their names.
 */

/** One command line for the shell Worker. */
export interface ShellRequest {
  command: string;
  /** Where the host's file system is mounted (its only files); everything else is the shell's memory for the one command. */
  mount: string;
  cwd: string;
  env: Record<string, string>;
  /** just-bash's own deadline, which its interpreter checks between steps, so it also stops a busy loop. */
  maxExecutionTimeMs: number;
  maxOutputSize: number;
  /** Names of the extra commands the host runs (`ShellHost.command`). */
  commands: string[];
}

export interface ShellOutcome {
  stdout: string;
  stderr: string;
  exitCode: number;
}

/** The file system calls the shell makes (just-bash's asynchronous `IFileSystem` methods). */
export const SHELL_FS_CALLS = [
  "readFile",
  "readFileBuffer",
  "writeFile",
  "appendFile",
  "exists",
  "stat",
  "lstat",
  "mkdir",
  "readdir",
  "readdirWithFileTypes",
  "rm",
  "cp",
  "mv",
  "chmod",
  "symlink",
  "link",
  "readlink",
  "realpath",
  "utimes",
] as const;
export type ShellFsCall = (typeof SHELL_FS_CALLS)[number];

/**
 * Set on a host's answer once the caller has stopped the command, so the shell stops before its next step
 * even when it never yields to hear `ShellHost.stopped()` (a loop after a command that returned on the stop).
 */
interface StopNotice {
  stopped?: string;
}

/**
 * A file system call's answer. An error travels as data, because RPC keeps an error's message but not
 * its `code` (ENOENT, EISDIR…), which the shell's commands read to say what went wrong.
 */
export type ShellFsAnswer = ({ value: unknown } | { error: { message: string; code?: string } }) & StopNotice;

/** An extra command's answer. */
export type ShellCommandAnswer = ShellOutcome & StopNotice;

/** The caller's side of one command: its files, its extra commands, and the stop. */
export interface ShellHost {
  fs(call: ShellFsCall, args: unknown[]): Promise<ShellFsAnswer>;
  /**
   * `readdir` with each entry's `stat` (null where it failed) in one round trip: `find`, `grep -r` and
   * `ls -l` stat every entry they list, which would otherwise be one call each. Value: `{ names, stats }`.
   */
  list(path: string): Promise<ShellFsAnswer>;
  command(name: string, args: string[], io: { cwd: string }): Promise<ShellCommandAnswer>;
  /** Resolves with a reason when the caller stops the command (its time cap, a cancelled run), with null once it ended. */
  stopped(): Promise<string | null>;
}

/** The shell Worker's RPC interface (the `SHELL` service binding). */
export interface ShellService {
  run(request: ShellRequest, host: ShellHost): Promise<ShellOutcome>;
}
