/**
 * The workspace tools with `git` in their shell (docs/workspace.md, "Git"): what the `code` tool set
 * and the toolchain's code scenarios offer. The runtime's shell takes extra commands (`ShellCommands`);
 * this binds `git` to the run's workspace, its shell overlay and the run's `GitHost` (git-host.ts).
 */
import { BASH_DESCRIPTION, workspaceTools, type ShellCommands, type ToolSpec } from "../../runtime/index.ts";
import { gitCommand, GIT_SHELL_NOTE } from "../git/command.ts";
import { workspacePersist } from "../git/persist.ts";
import { gitHostFor } from "./git-host.ts";

const gitShell: ShellCommands = (ctx, ws, files, network) => [
  gitCommand({
    files,
    host: () => gitHostFor(ctx),
    persist: workspacePersist(ws),
    maxCloneBytes: ws.limits.git_clone_bytes,
    maxFileBytes: ws.limits.workspace_file_bytes,
    network,
    signal: ctx.signal,
  }),
];

export function codeTools(): ToolSpec<unknown>[] {
  return workspaceTools({ commands: gitShell, bashDescription: `${BASH_DESCRIPTION} ${GIT_SHELL_NOTE}` });
}
