/** Tools for toolchain task runs: reporting and the Gitea actions (no mail: toolchain work never goes through it). */
import type { ToolSpec } from "../../runtime/index.ts";
import { toolchainCommentTool, toolchainOutputTool, toolchainReportTool } from "./report-tools.ts";
import { giteaTools } from "./gitea-tools.ts";
import { giteaCiLogsTool } from "./ci-logs.ts";

export function toolchainTools(): ToolSpec<unknown>[] {
  return [toolchainReportTool, toolchainOutputTool, toolchainCommentTool, ...giteaTools];
}

/** Code scenarios (`toolchain_code`, src/app/runtime.ts) also read CI logs: their tasks fix what CI found. */
export function toolchainCodeTools(): ToolSpec<unknown>[] {
  return [...toolchainTools(), giteaCiLogsTool];
}
