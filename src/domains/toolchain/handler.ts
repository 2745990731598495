/** The toolchain task type's handler (src/domains/tasks/handler.ts): prompts from sections, proof by report. */
import type { TaskHandler } from "../tasks/handler.ts";
import { toolchainRunContent, toolchainSystemPrompt, type RunKind } from "./prompt-sections.ts";
import type { ToolchainTask } from "./task-model.ts";
import { verifyToolchainTask, type Evidence } from "./verification.ts";

export const toolchainHandler: TaskHandler<ToolchainTask, Evidence, RunKind> = {
  type: "toolchain",
  systemPrompt: toolchainSystemPrompt,
  runContent: toolchainRunContent,
  verify: (task, evidence) => verifyToolchainTask(task.actionType, evidence),
};
