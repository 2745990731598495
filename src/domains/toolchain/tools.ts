/** Tools for toolchain task runs: reporting and the Gitea actions (no mail: toolchain work never goes through it). */
import type { ToolSpec } from "../../runtime/index.ts";
import { toolchainCommentTool, toolchainOutputTool, toolchainReportTool } from "./report-tools.ts";
import { giteaTools } from "./gitea-tools.ts";

export function toolchainTools(): ToolSpec<unknown>[] {
  return [toolchainReportTool, toolchainOutputTool, toolchainCommentTool, ...giteaTools];
}
