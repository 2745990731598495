/**
 * The tools an agent reports its work with: `toolchain_report` (the `action_report` comment that
 * verification looks for first), `toolchain_output` and `toolchain_comment`. None of them changes the
 * task's status — that is Beaver's decision after the run, from the evidence (docs/toolchain.md,
 * "Verification").
 */
import { z } from "zod";
import { defineTool, ok } from "../../runtime/index.ts";
import { COMMENT_TYPES } from "./task-model.ts";
import { addComment, addHistory, addOutput } from "./task-store.ts";
import { withWorkingTask } from "./tool-context.ts";

export const toolchainReportTool = defineTool({
  name: "toolchain_report",
  outward: true,
  description:
    "Submit the action report of your toolchain task: what you did (changes, reviews, comments, merges) and the result. This is the proof of work; call it once, after all steps.",
  input: z.strictObject({
    summary: z.string().trim().min(1).max(20_000).describe("What you did and what came of it"),
  }),
  async execute({ summary }, ctx) {
    return withWorkingTask(ctx, async ({ task }) => {
      const comment = await addComment(ctx.env, ctx.workspaceId, task.id, {
        author: task.agentId,
        commentType: "action_report",
        body: summary,
      });
      await addHistory(ctx.env, ctx.workspaceId, task.id, "reported", { comment_id: comment.id, run_id: ctx.runId });
      return ok(`Action report ${comment.id} recorded for task ${task.id}.`);
    });
  },
});

export const toolchainOutputTool = defineTool({
  name: "toolchain_output",
  outward: true,
  description: "Attach an output to your toolchain task (a review summary, a fix plan, a log excerpt) for others to reuse.",
  input: z.strictObject({
    content: z.string().trim().min(1).max(100_000),
    type: z.enum(["text", "markdown", "json", "diff", "log"]).default("text"),
  }),
  async execute({ content, type }, ctx) {
    return withWorkingTask(ctx, async ({ task }) => {
      const out = await addOutput(ctx.env, ctx.workspaceId, task.id, { type, content });
      return ok(`Output ${out.id} attached to task ${task.id}.`);
    });
  },
});

const NOTE_TYPES = COMMENT_TYPES.filter((t) => t !== "action_report") as [string, ...string[]];

export const toolchainCommentTool = defineTool({
  name: "toolchain_comment",
  outward: true,
  description: "Add a note to your toolchain task (observation, hand-off…). It is not a report: finish with toolchain_report.",
  input: z.strictObject({
    body: z.string().trim().min(1).max(20_000),
    comment_type: z.enum(NOTE_TYPES).default("general"),
  }),
  async execute({ body, comment_type }, ctx) {
    return withWorkingTask(ctx, async ({ task }) => {
      const comment = await addComment(ctx.env, ctx.workspaceId, task.id, { author: task.agentId, commentType: comment_type, body });
      return ok(`Comment ${comment.id} added to task ${task.id}.`);
    });
  },
});
