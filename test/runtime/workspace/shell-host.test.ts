// The shell over RPC (docs/workspace.md, "The shell"): the session's ShellHostTarget answers the shell
// Worker's file calls with errors as data (their errno codes survive), runs the extra commands by name,
// and tells the shell when to stop. Driven through the real `SHELL` binding to the built shell Worker; and
// without the binding, `bash` says the shell is unavailable.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession } from "../../../src/runtime/session/service.ts";
import { EMPTY_TREE_HASH, FileObjects } from "../../../src/storage/files/objects.ts";
import { WorkspaceShellFs } from "../../../src/runtime/workspace/shell-fs.ts";
import { ShellHostTarget, type ShellCommand } from "../../../src/runtime/workspace/shell-host.ts";
import type { ShellRequest, ShellService } from "../../../src/runtime/workspace/shell-protocol.ts";
import { bashTool, NO_SHELL } from "../../../src/runtime/workspace/tools/bash.ts";
import type { ToolContext } from "../../../src/runtime/tools/spec.ts";
import type { Env } from "../../../src/storage/env.ts";
import { ScriptedModel, runInDurableObject, scriptedWorkspace, stub, text } from "../../support/sessions.ts";

const shell = env.SHELL as unknown as ShellService;
const request = (command: string, more: Partial<ShellRequest> = {}): ShellRequest => ({
  command,
  mount: "/workspace",
  cwd: "/workspace",
  env: { HOME: "/workspace" },
  maxExecutionTimeMs: 5_000,
  maxOutputSize: 1 << 20,
  commands: [],
  ...more,
});

describe("the shell Worker and the session's host", () => {
  it("keeps errno codes, overlays writes in the host, forwards extra commands, and stops when told", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await createSession(env, { workspaceId: ws.id });
    await runInDurableObject(stub(session.id), async (_instance, state) => {
      const files = new WorkspaceShellFs(new FileObjects(state.storage, env, ws.id), EMPTY_TREE_HASH, { maxOverlayBytes: 1 << 20 });
      const seen: { args: string[]; cwd: string }[] = [];
      const hang: ShellCommand = {
        name: "hang",
        run: (_args, io) =>
          new Promise((resolve) => io.signal.addEventListener("abort", () => resolve({ stdout: "", stderr: "", exitCode: 0 }))),
      };
      const echo: ShellCommand = {
        name: "greet",
        run: async (args, io) => {
          seen.push({ args, cwd: io.cwd });
          return { stdout: `hello ${args.join(" ")}\n`, stderr: "", exitCode: 0 };
        },
      };
      // Writes in the session, as `git checkout` does: the shell must not answer from stats it listed before.
      const grow: ShellCommand = {
        name: "grow",
        run: async () => {
          await files.writeFile("/d/f.txt", "0123456789");
          return { stdout: "", stderr: "", exitCode: 0 };
        },
      };
      const host = (signal = new AbortController().signal) => {
        let end!: () => void;
        const ended = new Promise<void>((resolve) => (end = resolve));
        return { target: new ShellHostTarget(files, [echo, hang, grow], signal, ended), end };
      };

      const first = host();
      const out = await shell.run(
        request("cat missing.txt; mkdir -p d && echo hi > d/f.txt && cd d && greet world; echo gone > /tmp/t; wc -c < f.txt; nope", {
          commands: ["greet", "hang"],
        }),
        first.target,
      );
      first.end();
      expect(out.stderr).toMatch(/missing\.txt: No such file or directory/);
      expect(out.stdout).toBe("hello world\n3\n");
      expect(out.stderr).toMatch(/nope: command not found/);
      expect(seen).toEqual([{ args: ["world"], cwd: "/workspace/d" }]);
      // The write is in the session's overlay (committed by the bash tool afterwards); /tmp stayed in the shell.
      expect(files.changes().map((c) => [c.path, c.bytes && new TextDecoder().decode(c.bytes)])).toEqual([["d/f.txt", "hi\n"]]);

      // A listing brings each entry's stat; a change made in the session (an extra command) drops them.
      const listed = host();
      const sizes = await shell.run(
        request("ls -l d | grep -c f.txt; grow; ls -l d/f.txt; find d -size +5c", { commands: ["grow"] }),
        listed.target,
      );
      listed.end();
      expect(sizes.stderr).toBe("");
      expect(sizes.stdout).toMatch(/^1\n.* 10 .*f\.txt\nd\/f\.txt\n$/s);

      // The host's stop reaches a command waiting in the session and the shell, which ends the line early.
      const stop = new AbortController();
      const second = host(stop.signal);
      const pending = shell.run(request("hang; echo after", { commands: ["hang"] }), second.target);
      setTimeout(() => stop.abort(new Error("time limit")), 50);
      const stopped = await pending;
      second.end();
      expect(stopped.stdout).not.toContain("after");

      // A call outside the file system's interface is refused by the host, as data.
      expect(await first.target.fs("getAllPaths" as never, [])).toEqual({ error: { message: "unknown file system call 'getAllPaths'" } });
    });
  });

  it("bash answers `unavailable` on a deployment without the SHELL binding", async () => {
    const ctx = (e: Env): ToolContext => ({
      env: e,
      workspaceId: "ws",
      sessionId: "ses",
      runId: "run",
      toolCallId: "call",
      signal: new AbortController().signal,
      data: {},
      emitUpdate: () => {},
    });
    const { SHELL: _binding, ...withoutShell } = env;
    const without = await bashTool().execute({ command: "ls" }, ctx(withoutShell as Env));
    expect(without).toMatchObject({ ok: false, error: { code: "unavailable", message: NO_SHELL } });
    // With the binding the same call gets as far as the workspace (this context has none).
    expect(await bashTool().execute({ command: "ls" }, ctx(env))).toMatchObject({ ok: false, error: { code: "no_workspace" } });
  });
});
