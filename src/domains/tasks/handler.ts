/**
 * The task-type handler contract (seed §14): each task type builds its agent's prompt from sections
 * and decides from evidence whether the work was done. Toolchain tasks must show an action report
 * (or its fallbacks); mail tasks (`src/mail/handler.ts`) pass when read (inform) or answered
 * (request). Each type has its own store and dispatcher, which holds its handler.
 */
import { toolchainRunContent, toolchainSystemPrompt, type RunKind } from "../toolchain/prompt-sections.ts";
import type { ToolchainTask } from "../toolchain/task-model.ts";
import { verifyToolchainTask, type Evidence, type VerifyResult } from "../toolchain/verification.ts";

export interface TaskHandler<T, E> {
  type: "toolchain" | "mail";
  systemPrompt(task: T): string;
  runContent(task: T, run: RunKind): string;
  verify(task: T, evidence: E): VerifyResult;
}

export const toolchainHandler: TaskHandler<ToolchainTask, Evidence> = {
  type: "toolchain",
  systemPrompt: toolchainSystemPrompt,
  runContent: toolchainRunContent,
  verify: (task, evidence) => verifyToolchainTask(task.actionType, evidence),
};
