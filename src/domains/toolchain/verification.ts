/**
 * Did the agent do the work? (docs/toolchain.md, "Verification") An `action_report` comment passes;
 * else an output passes; else a non-system comment of at least 20 characters passes; else the task
 * fails. Merge notices and infrastructure-failure tasks always pass (the latter so a failure route
 * never recurses). Pure.
 */
import type { ActionType } from "./scenarios.ts";
import type { VerifyResult } from "../tasks/handler.ts";

export interface Evidence {
  comments: { author: string; commentType: string; body: string }[];
  outputs: number;
}

export const SYSTEM_AUTHOR = "system";
export const MIN_COMMENT_CHARS = 20;
const AUTO_PASS = new Set<ActionType>(["review_merged", "infrastructure_failure"]);

export function verifyToolchainTask(actionType: ActionType, evidence: Evidence): VerifyResult {
  if (AUTO_PASS.has(actionType)) return { passed: true, reason: "auto_pass", detail: `${actionType} always passes` };
  const reports = evidence.comments.filter((c) => c.commentType === "action_report");
  if (reports.length) return { passed: true, reason: "has_action_report", detail: `${reports.length} action report(s)` };
  if (evidence.outputs > 0) return { passed: true, reason: "has_output", detail: `${evidence.outputs} output(s)` };
  const substantial = evidence.comments.filter((c) => c.author !== SYSTEM_AUTHOR && c.body.trim().length >= MIN_COMMENT_CHARS);
  if (substantial.length) return { passed: true, reason: "has_comment", detail: `${substantial.length} substantial comment(s)` };
  return { passed: false, reason: "no_action", detail: "no action report, no output and no substantial comment" };
}
