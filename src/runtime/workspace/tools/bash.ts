/**
 * `bash {command}`: a simulated shell over the session workspace (docs/workspace.md, "The shell").
 * Workers cannot spawn processes, so the shell is just-bash (vercel-labs/just-bash), which runs in the
 * shell Worker (shell/index.ts) over the `SHELL` service binding: bash syntax with coreutils, grep, sed,
 * awk, find, jq, diff… in JavaScript. The workspace is mounted at /workspace through WorkspaceShellFs,
 * which stays here and answers the shell's file calls (shell-host.ts); the command's file changes are
 * committed as one workspace change after it ends. A command that runs out of time commits nothing.
 * Extra commands (`git`, added by the app) come from `commands` and run here too.
 */
import { z } from "zod";
import { defineTool, fail, ok, type ToolContext } from "../../tools/spec.ts";
import { WorkspaceShellFs } from "../shell-fs.ts";
import type { SessionWorkspace } from "../session-workspace.ts";
import { capText, withWorkspace } from "./common.ts";
import type { FileChange } from "../../../storage/files/objects.ts";
import type { Env } from "../../../storage/env.ts";
import { ShellClock, type NetworkSection } from "../shell-clock.ts";
import { ShellHostTarget, type ShellCommand } from "../shell-host.ts";
import type { ShellOutcome, ShellService } from "../shell-protocol.ts";

export const WORKSPACE_MOUNT = "/workspace";
/** Most bytes a command may hold in its overlay of written files (memory; the workspace limits still apply at commit). */
const MAX_OVERLAY_BYTES = 48 * 1024 * 1024;
/** Total output a command may produce before the shell stops it (each stream is then capped for the model). */
const MAX_SHELL_OUTPUT_BYTES = 4 * 1024 * 1024;

/** A command line that runs a git network command (`git clone`, `git push`): its outer deadline includes `git_network_ms`. */
const NETWORK_GIT = /\bgit\b[^;&|\n]*\b(?:clone|push)\b/;

/**
 * Makes the extra commands for one call (for example `git`, bound to this session's workspace). A
 * command that waits on the network runs that wait inside `network`: the shell's time cap pauses and
 * `git_network_ms` applies instead (shell-clock.ts).
 */
export type ShellCommands = (ctx: ToolContext, ws: SessionWorkspace, fs: WorkspaceShellFs, network: NetworkSection) => ShellCommand[];

/** The shell Worker behind the `SHELL` binding (wrangler.toml); its RPC interface is shell-protocol.ts. */
function shellWorker(env: Env): ShellService | null {
  // The binding is typed as a plain Fetcher in Env (storage knows no runtime protocol); its entrypoint is shell/index.ts.
  return (env.SHELL as unknown as ShellService | undefined) ?? null;
}

/** What `bash` answers on a deployment without the shell Worker. */
export const NO_SHELL = "The shell is not available: this deployment has no SHELL binding (docs/deployment.md, step 4).";

export const BASH_DESCRIPTION =
  "Run a command in a simulated bash shell whose working directory /workspace holds this session's files. " +
  "This is NOT a Linux machine: it is just-bash, an interpreter written in JavaScript with bash syntax (pipes, redirects, " +
  "variables, loops, functions) and common tools (ls, cat, head, tail, grep, sed, awk, find, xargs, sort, uniq, wc, diff, jq, " +
  "cut, tr, tee, mkdir, cp, mv, rm, touch…). There are no processes, no network, no package managers, and no compilers or " +
  "language runtimes (no node, npm, python, make, gcc): you cannot build or run tests here. Files you change under /workspace are " +
  "kept; anything elsewhere (e.g. /tmp) is discarded after the command. Output is capped and a command is stopped after a time limit.";

export function bashTool(options: { commands?: ShellCommands; description?: string } = {}) {
  return defineTool({
    name: "bash",
    description: options.description ?? BASH_DESCRIPTION,
    input: z.strictObject({ command: z.string().min(1).max(65_536).describe("The bash command line to run in /workspace") }),
    execute: (args, ctx) => {
      const shell = shellWorker(ctx.env);
      if (!shell) return Promise.resolve(fail("unavailable", NO_SHELL));
      return withWorkspace(ctx, async (ws) => {
        const limits = ws.limits;
        const base = ws.head();
        const files = new WorkspaceShellFs(ws.objects, base, { maxOverlayBytes: MAX_OVERLAY_BYTES });
        // Plain timers cleared when the command ends (not AbortSignal.timeout, whose timer outlives the call);
        // the shell's cap pauses while a git clone or push waits on the network (git_network_ms instead).
        const clock = new ShellClock(limits.shell_time_ms, limits.git_network_ms);
        const cancel = new AbortController();
        const timeout = AbortSignal.any([clock.signal, cancel.signal]);
        const commands = options.commands?.(ctx, ws, files, clock.network) ?? [];
        let end!: () => void;
        const ended = new Promise<void>((resolve) => (end = resolve));
        const host = new ShellHostTarget(files, commands, timeout, ended);
        const onCancel = () => cancel.abort(ctx.signal.reason);
        ctx.signal.addEventListener("abort", onCancel, { once: true });
        let result: ShellOutcome;
        try {
          result = await shell.run(
            {
              command: args.command,
              mount: WORKSPACE_MOUNT,
              cwd: WORKSPACE_MOUNT,
              env: { HOME: WORKSPACE_MOUNT, USER: "agent", PWD: WORKSPACE_MOUNT },
              // just-bash's own deadline (checked by its interpreter, so it also stops a busy loop, where no timer can
              // fire) is the outer bound: the shell's time, plus the network budget when the line runs a clone or push.
              maxExecutionTimeMs: limits.shell_time_ms + (commands.length && NETWORK_GIT.test(args.command) ? limits.git_network_ms : 0),
              maxOutputSize: MAX_SHELL_OUTPUT_BYTES,
              commands: commands.map((c) => c.name),
            },
            host,
          );
        } finally {
          clock.stop();
          end();
          ctx.signal.removeEventListener("abort", onCancel);
        }
        if (ctx.signal.aborted) return fail("cancelled", "Tool 'bash' was cancelled");
        const max = limits.workspace_tool_output_bytes;
        if (stopped(result, timeout))
          return fail(
            "timeout",
            `The command was stopped (time limit ${limits.shell_time_ms} ms, not counting git's network time, or one of the shell's execution limits); none of its file changes were kept.\n` +
              streams(result.stdout, result.stderr, max),
          );
        const changes: FileChange[] = [];
        for (const change of files.changes())
          changes.push({
            path: change.path,
            blob: change.staged ?? (change.bytes === null ? null : await ws.stage(change.path, change.bytes)),
          });
        let note = "";
        if (changes.length > 0) {
          const committed = await ws.commit(base, changes, { runId: ctx.runId, toolCallId: ctx.toolCallId });
          if (committed.changed) note = `\n[workspace: ${changes.length} path${changes.length === 1 ? "" : "s"} changed]`;
        }
        const body = `exit code: ${result.exitCode}\n${streams(result.stdout, result.stderr, max)}${note}`;
        // A non-zero exit is the command's answer, not a tool failure: the model reads the code and the streams.
        return ok(body);
      });
    },
  });
}

/**
 * How just-bash names the limit that ended a line: "… exceeded …" for its deadline and output, "…
 * increase executionLimits.<limit>" for its counts (commands, loop iterations, call depth). A busy
 * loop on a fast machine reaches the command count before the time limit.
 */
const LIMIT_MESSAGE = /exceeded|increase executionLimits\./i;

/**
 * Whether the shell stopped the command rather than the command ending: our deadline, or just-bash's
 * own (exit 124) or one of its execution limits (exit 126, its `ExecutionLimitError`), with the
 * limit's message.
 */
function stopped(result: { exitCode: number; stderr: string }, timeout: AbortSignal): boolean {
  if (timeout.aborted) return true;
  return (result.exitCode === 124 || result.exitCode === 126) && LIMIT_MESSAGE.test(result.stderr);
}

function streams(stdout: string, stderr: string, max: number): string {
  const parts: string[] = [];
  if (stdout !== "") parts.push(`stdout:\n${capText(stdout, max, "stdout")}`);
  if (stderr !== "") parts.push(`stderr:\n${capText(stderr, max, "stderr")}`);
  return parts.length === 0 ? "(no output)" : parts.join("\n");
}
