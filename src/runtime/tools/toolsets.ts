/**
 * Named tool sets a run can ask for. `default` is what a chat session gets; `toolchain` adds the
 * report and Gitea tools for toolchain task runs; `mail` adds the reply tool for mail runs.
 */
import type { ToolSpec } from "./spec.ts";
import { builtinTools } from "./builtins/index.ts";
import { toolchainTools } from "../../domains/toolchain/tools.ts";
import { mailReplyTool } from "../../domains/mail/tools.ts";

export const TOOLSETS: Record<string, () => ToolSpec<unknown>[]> = {
  default: () => builtinTools(),
  toolchain: () => [...builtinTools(), ...toolchainTools()],
  mail: () => [...builtinTools(), mailReplyTool],
};

export function toolsFor(name: string | undefined): ToolSpec<unknown>[] {
  const make = TOOLSETS[name ?? "default"] ?? TOOLSETS.default!;
  return make();
}
