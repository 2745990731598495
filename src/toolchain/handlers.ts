/**
 * The task-type handlers (seed §14): each type builds its agent's prompt from sections and decides
 * from evidence whether the work was done. Toolchain tasks must show an action report (or its
 * fallbacks); mail tasks pass when read (inform) or answered (request). The dispatchers look the
 * handler up here instead of special-casing types.
 */
import { mailHandler } from "../mail/handler.ts";
import { toolchainRunContent, toolchainSystemPrompt, type RunKind } from "./prompt-sections.ts";
import type { ToolchainTask } from "./task-model.ts";
import { verifyToolchainTask, type Evidence, type VerifyResult } from "./verification.ts";

export interface TaskHandler<T, E> {
  type: "toolchain" | "mail";
  systemPrompt(task: T): string;
  runContent(task: T, run: RunKind): string;
  verify(task: T, evidence: E): VerifyResult;
}

export const toolchainHandler: TaskHandler<ToolchainTask, Evidence> = {
  type: "toolchain",
  systemPrompt: (task) => toolchainSystemPrompt(task),
  runContent: (task, run) => toolchainRunContent(task, run),
  verify: (task, evidence) => verifyToolchainTask(task.actionType, evidence),
};

export const HANDLERS = { toolchain: toolchainHandler, mail: mailHandler } as const;
