/** Composition root, tasks: the kinds of agent task the cron dispatches (docs/toolchain.md). */
import type { TaskType } from "../domains/tasks/task-type.ts";
import { toolchainTaskType } from "../domains/toolchain/dispatcher.ts";
import { mailTaskType } from "../domains/mail/dispatcher.ts";

export const TASK_TYPES: readonly TaskType[] = [toolchainTaskType, mailTaskType];
