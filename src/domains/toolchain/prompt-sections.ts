/**
 * The three sections of a toolchain task's prompt (docs/toolchain.md, "Dispatch and task runs"):
 * context (the action hint, the rendered event, the numbered steps), constraints (hard rules and the
 * Red Flags table) and how to report. Pure: a task in, markdown out. The texts themselves live in
 * `prompt-texts.ts`.
 */
import {
  ACTION_HINTS,
  CONSTRAINT_RULES,
  DEFAULT_ACTION_HINT,
  RED_FLAGS,
  REPORT_TEXT,
  REPORT_TEXT_NO_STEPS,
  RUN_CONTENT,
  SECTION_TITLES,
} from "./prompt-texts.ts";
import { fill } from "../tasks/handler.ts";
import type { ToolchainTask } from "./task-model.ts";

type PromptTask = Pick<ToolchainTask, "id" | "title" | "description" | "actionType" | "mustHaves">;

export function contextSection(task: PromptTask): string {
  const vars = { task_id: task.id, title: task.title };
  const hint = ACTION_HINTS[task.actionType] ?? DEFAULT_ACTION_HINT;
  const steps = task.mustHaves.steps;
  const stepText = steps.length ? [SECTION_TITLES.steps, "", ...steps.map((s, i) => `${i + 1}. ${s}`)].join("\n") : SECTION_TITLES.noSteps;
  return [fill(SECTION_TITLES.context, vars), "", hint, "", task.description, "", stepText].join("\n");
}

export function constraintsSection(task: PromptTask): string {
  if (!task.mustHaves.steps.length) return "";
  const table = ["| If you catch yourself thinking… | …then |", "| --- | --- |", ...RED_FLAGS.map(([t, a]) => `| ${t} | ${a} |`)];
  return [SECTION_TITLES.constraints, "", ...CONSTRAINT_RULES, "", "### Red Flags", "", ...table].join("\n");
}

export function reportSection(task: PromptTask): string {
  const vars = { task_id: task.id };
  const lines = task.mustHaves.steps.length ? REPORT_TEXT.map((l) => fill(l, vars)) : [fill(REPORT_TEXT_NO_STEPS, vars)];
  return [SECTION_TITLES.report, "", ...lines].join("\n");
}

/** The run's extra system prompt: the three sections, in order. */
export function toolchainSystemPrompt(task: PromptTask): string {
  return [contextSection(task), constraintsSection(task), reportSection(task)].filter(Boolean).join("\n\n");
}

export type RunKind = { kind: "start" } | { kind: "retry"; attempt: number; maxAttempts: number; reason: string } | { kind: "reminder" };

/** The user message that starts a run of the task. */
export function toolchainRunContent(task: PromptTask, run: RunKind): string {
  const vars = { task_id: task.id, title: task.title };
  switch (run.kind) {
    case "start":
      return fill(task.mustHaves.steps.length ? RUN_CONTENT.start : RUN_CONTENT.startNoSteps, vars);
    case "retry":
      return fill(RUN_CONTENT.retry, { ...vars, attempt: run.attempt, max_attempts: run.maxAttempts, reason: run.reason });
    case "reminder":
      return fill(RUN_CONTENT.reminder, vars);
  }
}
