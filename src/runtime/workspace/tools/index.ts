/**
 * The workspace tools a tool set offers (docs/workspace.md): the five file tools and the shell. The
 * app decides which sets get them and which extra shell commands (`git`) the shell knows.
 */
import type { ToolSpec } from "../../tools/spec.ts";
import { bashTool, type ShellCommands } from "./bash.ts";
import { editFileTool, readFileTool, writeFileTool } from "./file-tools.ts";
import { grepTool, listFilesTool } from "./search-tools.ts";

export function workspaceTools(options: { commands?: ShellCommands; bashDescription?: string } = {}): ToolSpec<unknown>[] {
  return [
    readFileTool,
    writeFileTool,
    editFileTool,
    listFilesTool,
    grepTool,
    bashTool({
      ...(options.commands ? { commands: options.commands } : {}),
      ...(options.bashDescription ? { description: options.bashDescription } : {}),
    }),
  ];
}
