/** Tools for toolchain task runs: reporting, the Gitea actions, and the mail reply. */
import type { ToolSpec } from "../tools/spec.ts";
import { toolchainCommentTool, toolchainOutputTool, toolchainReportTool } from "./report-tools.ts";
import { giteaTools } from "./gitea-tools.ts";
import { mailReplyTool } from "../mail/tools.ts";

export function toolchainTools(): ToolSpec<unknown>[] {
  return [toolchainReportTool, toolchainOutputTool, toolchainCommentTool, ...giteaTools, mailReplyTool];
}
