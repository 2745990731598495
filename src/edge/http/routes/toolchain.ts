/**
 * `/api/toolchain`: webhook deliveries and toolchain tasks — list and filter, one task with its
 * comments, outputs and history, add a comment or an output, retry, cancel. Every query is scoped to
 * the caller's workspace; another workspace's task answers 404. Comment and output sizes are the
 * operator's limits (413 naming the field) and list pages stop at the byte budget (docs/limits.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { DELIVERY_OUTCOMES, deliveryView, listDeliveries } from "../../../domains/toolchain/delivery-store.ts";
import {
  addComment,
  addOutput,
  listTasks,
  loadComments,
  loadHistory,
  loadOutputs,
  loadTask,
} from "../../../domains/toolchain/task-store.ts";
import {
  COMMENT_TYPES,
  TASK_STATUSES,
  commentView,
  historyView,
  isCommentType,
  outputView,
  taskView,
} from "../../../domains/toolchain/task-model.ts";
import { cancelTask, retryTask } from "../../../domains/toolchain/task-actions.ts";
import { getAgent } from "../../../domains/tasks/agent-store.ts";
import { dispatchWorkspace } from "../../../domains/toolchain/dispatcher.ts";
import { takeWithinBudget } from "../../../kernel/byte-budget.ts";
import { assertFieldSize, limitsOf } from "../../../storage/limits.ts";

const Limit = z.coerce.number().int().min(1).max(200).default(50);
const Before = z.coerce.number().int().positive().optional();
/** With `before`: the id of the last row of the previous page (rows of the same millisecond are not skipped). */
const BeforeId = z.string().min(1).max(200).optional();

const DeliveryDoc = z.record(z.string(), z.unknown()).openapi("ToolchainDelivery");
const TaskDoc = z
  .record(z.string(), z.unknown())
  .openapi("ToolchainTask", { description: "A toolchain task (snake_case fields, must_haves JSON)" });
const CommentDoc = z
  .object({ id: z.string(), author: z.string(), comment_type: z.string(), body: z.string(), created_at: z.number() })
  .openapi("ToolchainTaskComment");
const OutputDoc = z
  .object({ id: z.string(), type: z.string(), content: z.string(), created_at: z.number() })
  .openapi("ToolchainTaskOutput");
const IdParam = z.object({ id: z.string().min(1).max(100) });

const deliveries = createRoute({
  method: "get",
  path: "/deliveries",
  tags: ["toolchain"],
  summary: "Webhook deliveries with their outcome, newest first",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.object({
      outcome: z.enum(DELIVERY_OUTCOMES).optional(),
      event_type: z.string().max(64).optional(),
      before: Before,
      before_id: BeforeId,
      limit: Limit,
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ deliveries: z.array(DeliveryDoc), next_before: z.number().nullable(), next_before_id: z.string().nullable() }),
      "Deliveries",
    ),
    ...errorResponses(),
  },
});

const list = createRoute({
  method: "get",
  path: "/tasks",
  tags: ["toolchain"],
  summary: "Toolchain tasks, newest first, filtered by status, agent, action type or repository",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.object({
      status: z.enum(TASK_STATUSES).optional(),
      agent_id: z.string().max(64).optional(),
      action_type: z.string().max(64).optional(),
      repo: z.string().max(200).optional(),
      before: Before,
      before_id: BeforeId,
      limit: Limit,
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ tasks: z.array(TaskDoc), next_before: z.number().nullable(), next_before_id: z.string().nullable() }),
      "Tasks",
    ),
    ...errorResponses(404),
  },
});

const get = createRoute({
  method: "get",
  path: "/tasks/{id}",
  tags: ["toolchain"],
  summary: "One task with its comments, outputs and history",
  middleware: [requireScope("read")] as const,
  request: { params: IdParam },
  responses: {
    200: jsonResponse(
      z.object({
        task: TaskDoc,
        comments: z.array(CommentDoc),
        outputs: z.array(OutputDoc),
        history: z.array(z.record(z.string(), z.unknown())),
      }),
      "Task",
    ),
    ...errorResponses(404),
  },
});

const comment = createRoute({
  method: "post",
  path: "/tasks/{id}/comments",
  tags: ["toolchain"],
  summary: `Add a comment (comment_type: ${COMMENT_TYPES.join(", ")})`,
  middleware: [requireScope("member")] as const,
  request: {
    params: IdParam,
    body: jsonBody(
      z.strictObject({
        body: z.string().trim().min(1).describe("At most task_comment_bytes (64 KiB) of UTF-8; larger answers 413"),
        comment_type: z.string().max(64).default("general"),
        author: z
          .string()
          .min(1)
          .max(64)
          .refine((a) => a !== "system", "'system' is reserved for Beaver")
          .optional(),
      }),
    ),
  },
  responses: { 201: jsonResponse(CommentDoc, "Added"), ...errorResponses(404, 413, 415) },
});

const output = createRoute({
  method: "post",
  path: "/tasks/{id}/outputs",
  tags: ["toolchain"],
  summary: "Add an output",
  middleware: [requireScope("member")] as const,
  request: {
    params: IdParam,
    body: jsonBody(
      z.strictObject({
        content: z.string().trim().min(1).describe("At most task_output_bytes (256 KiB) of UTF-8; larger answers 413"),
        type: z.enum(["text", "markdown", "json", "diff", "log"]).default("text"),
      }),
    ),
  },
  responses: { 201: jsonResponse(OutputDoc, "Added"), ...errorResponses(404, 413, 415) },
});

const retry = createRoute({
  method: "post",
  path: "/tasks/{id}/retry",
  tags: ["toolchain"],
  summary: "Send a failed or cancelled task back to pending with a fresh set of attempts",
  middleware: [requireScope("member")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(TaskDoc, "Pending again"), ...errorResponses(404, 409) },
});

const cancel = createRoute({
  method: "post",
  path: "/tasks/{id}/cancel",
  tags: ["toolchain"],
  summary: "Cancel a pending or working task (its run is cancelled too)",
  middleware: [requireScope("member")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(TaskDoc, "Cancelled"), ...errorResponses(404, 409) },
});

const dispatch = createRoute({
  method: "post",
  path: "/dispatch",
  tags: ["toolchain"],
  summary: "Run one dispatch pass now (what the cron tick does every minute): finish, remind and start tasks",
  middleware: [requireScope("member")] as const,
  responses: {
    200: jsonResponse(z.object({ started: z.number(), finished: z.number(), reminded: z.number() }), "What the pass did"),
    ...errorResponses(),
  },
});

async function taskOr404(c: { env: Parameters<typeof loadTask>[0] }, workspaceId: string, id: string) {
  const task = await loadTask(c.env, workspaceId, id);
  if (!task) throw notFound(`Task '${id}'`);
  return task;
}

export const toolchainRoutes = newRouter()
  .openapi(deliveries, async (c) => {
    const q = c.req.valid("query");
    const rows = await listDeliveries(c.env, c.get("principal").workspaceId, {
      outcome: q.outcome,
      eventType: q.event_type,
      before: q.before,
      beforeId: q.before_id,
      limit: q.limit,
    });
    const page = takeWithinBudget(
      rows.map((r) => ({ row: r, view: deliveryView(r) })),
      limitsOf(c.env).list_page_bytes,
      (i) => i.view,
    );
    const last = page.truncated || rows.length === q.limit ? page.items.at(-1)?.row : undefined;
    return c.json(
      {
        deliveries: page.items.map((i) => i.view),
        next_before: last?.receivedAt ?? null,
        next_before_id: last?.deliveryId ?? null,
      },
      200,
    );
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const workspaceId = c.get("principal").workspaceId;
    // A filter naming an agent this workspace does not have is a 404, like the agent itself (issue 25).
    if (q.agent_id !== undefined && !(await getAgent(c.env, workspaceId, q.agent_id))) throw notFound(`Agent '${q.agent_id}'`);
    const rows = await listTasks(c.env, workspaceId, {
      status: q.status,
      agentId: q.agent_id,
      actionType: q.action_type,
      repo: q.repo,
      before: q.before,
      beforeId: q.before_id,
      limit: q.limit,
    });
    const page = takeWithinBudget(
      rows.map((r) => ({ row: r, view: taskView(r) })),
      limitsOf(c.env).list_page_bytes,
      (i) => i.view,
    );
    const last = page.truncated || rows.length === q.limit ? page.items.at(-1)?.row : undefined;
    return c.json({ tasks: page.items.map((i) => i.view), next_before: last?.createdAt ?? null, next_before_id: last?.id ?? null }, 200);
  })
  .openapi(get, async (c) => {
    const ws = c.get("principal").workspaceId;
    const task = await taskOr404(c, ws, c.req.valid("param").id);
    const [comments, outputs, history] = await Promise.all([
      loadComments(c.env, ws, task.id),
      loadOutputs(c.env, ws, task.id),
      loadHistory(c.env, ws, task.id),
    ]);
    return c.json(
      { task: taskView(task), comments: comments.map(commentView), outputs: outputs.map(outputView), history: history.map(historyView) },
      200,
    );
  })
  .openapi(comment, async (c) => {
    const p = c.get("principal");
    const body = c.req.valid("json");
    assertFieldSize(c.env, "body", body.body, "task_comment_bytes");
    const task = await taskOr404(c, p.workspaceId, c.req.valid("param").id);
    // Validated here rather than by a database constraint, so new types need no migration
    // (docs/toolchain.md, "Dispatch and task runs").
    if (!isCommentType(body.comment_type)) {
      throw new AppError("validation_failed", `Invalid body: comment_type: must be one of ${COMMENT_TYPES.join(", ")}`, {
        details: [{ path: "comment_type", message: `must be one of ${COMMENT_TYPES.join(", ")}` }],
      });
    }
    const added = await addComment(c.env, p.workspaceId, task.id, {
      author: body.author ?? `token:${p.tokenId}`,
      commentType: body.comment_type,
      body: body.body,
    });
    return c.json(commentView(added), 201);
  })
  .openapi(output, async (c) => {
    const p = c.get("principal");
    const body = c.req.valid("json");
    assertFieldSize(c.env, "content", body.content, "task_output_bytes");
    const task = await taskOr404(c, p.workspaceId, c.req.valid("param").id);
    return c.json(outputView(await addOutput(c.env, p.workspaceId, task.id, { type: body.type, content: body.content })), 201);
  })
  .openapi(retry, async (c) => {
    const p = c.get("principal");
    return c.json(taskView(await retryTask(c.env, p.workspaceId, c.req.valid("param").id, `token:${p.tokenId}`)), 200);
  })
  .openapi(cancel, async (c) => {
    const p = c.get("principal");
    return c.json(taskView(await cancelTask(c.env, p.workspaceId, c.req.valid("param").id, `token:${p.tokenId}`)), 200);
  })
  .openapi(dispatch, async (c) => c.json(await dispatchWorkspace(c.env, c.get("principal").workspaceId), 200));
