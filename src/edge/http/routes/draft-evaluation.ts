/**
 * Replay evaluation of a skill draft (docs/evaluation.md): `POST /api/drafts/:id/evaluate` starts or
 * restarts it (member), `GET …/evaluation` reads progress and report (read), `GET …/evaluation/stream`
 * follows it live as SSE (read), `POST …/evaluation/cancel` stops it (member). Another workspace's
 * draft answers 404. The rest of `/api/drafts` (list, get, approve, reject, regenerate) is the review API's.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { cancelEvaluation, getEvaluation, startEvaluation } from "../../../domains/learning/evaluation/client.ts";
import { evaluationProgressStream } from "../../../domains/learning/evaluation/stream.ts";
import { MAX_CONCURRENCY } from "../../../domains/learning/evaluation/config.ts";

const DraftParam = z.object({ id: z.string().min(1).max(100) });

const CaseDoc = z.object({
  index: z.number(),
  source: z.enum(["cases_file", "recorded_session"]),
  state: z.enum(["pending", "running", "done", "error", "cancelled"]),
  prompt: z.string().describe("The case's prompt (first 200 characters)"),
  baseline_score: z.number().nullable(),
  candidate_score: z.number().nullable(),
  error: z.string().nullable(),
});

const EvaluationDoc = z
  .object({
    id: z.string(),
    draft_id: z.string(),
    skill: z.string(),
    status: z.enum(["running", "passed", "failed", "cancelled"]),
    baseline_version: z.string().nullable().describe("The skill's current version (null: the skill has none yet)"),
    candidate_version: z.string().describe("draft:<id>"),
    concurrency: z.number(),
    max_steps: z.number(),
    progress: z.object({ total: z.number(), finished: z.number(), running: z.number(), pending: z.number() }),
    cases: z.array(CaseDoc),
    report: z
      .unknown()
      .nullable()
      .describe("Once finished: verdict, reasons, summary, per-case scores, reasons and both answers, cost (docs/evaluation.md)"),
    created_at: z.string(),
    finished_at: z.string().nullable(),
    version: z.number().describe("Moves on every change"),
  })
  .openapi("Evaluation");

const evaluate = createRoute({
  method: "post",
  path: "/{id}/evaluate",
  tags: ["drafts"],
  summary: "Start (or restart) the draft's replay evaluation",
  description: "A running evaluation of the same draft is cancelled and replaced. `concurrency` defaults to `evaluation.concurrency`.",
  middleware: [requireScope("member")] as const,
  request: {
    params: DraftParam,
    body: { ...jsonBody(z.strictObject({ concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).optional() })), required: false },
  },
  responses: { 202: jsonResponse(EvaluationDoc, "Started"), ...errorResponses(404, 409, 415) },
});

const read = createRoute({
  method: "get",
  path: "/{id}/evaluation",
  tags: ["drafts"],
  summary: "The draft's latest evaluation: progress, and the report once finished",
  middleware: [requireScope("read")] as const,
  request: { params: DraftParam },
  responses: { 200: jsonResponse(EvaluationDoc, "Evaluation"), ...errorResponses(404) },
});

const stream = createRoute({
  method: "get",
  path: "/{id}/evaluation/stream",
  tags: ["drafts"],
  summary: "Live progress (SSE): a `progress` frame per change, then `done` with the report",
  middleware: [requireScope("read")] as const,
  request: { params: DraftParam },
  responses: {
    200: { description: "SSE: `event: progress|done`, `data: <frame JSON>`", content: { "text/event-stream": { schema: z.string() } } },
    ...errorResponses(404),
  },
});

const cancel = createRoute({
  method: "post",
  path: "/{id}/evaluation/cancel",
  tags: ["drafts"],
  summary: "Cancel the running evaluation (its case runs are stopped; nothing is published)",
  middleware: [requireScope("member")] as const,
  request: { params: DraftParam },
  responses: { 200: jsonResponse(EvaluationDoc, "Cancelled"), ...errorResponses(404, 409) },
});

export const draftEvaluationRoutes = newRouter()
  .openapi(evaluate, async (c) => {
    const { id } = c.req.valid("param");
    // The body is optional: no body (or an empty one) starts with the configured concurrency.
    const body = (c.req.valid("json") as { concurrency?: number } | undefined) ?? {};
    const started = await startEvaluation(c.env, c.get("principal").workspaceId, id, body);
    return c.json(started, 202);
  })
  .openapi(read, async (c) => c.json(await getEvaluation(c.env, c.get("principal").workspaceId, c.req.valid("param").id), 200))
  .openapi(stream, async (c) => {
    const body = await evaluationProgressStream(c.env, c.get("principal").workspaceId, c.req.valid("param").id);
    return new Response(body, {
      status: 200,
      headers: { "content-type": "text/event-stream", "cache-control": "no-cache", connection: "keep-alive" },
    }) as never;
  })
  .openapi(cancel, async (c) => c.json(await cancelEvaluation(c.env, c.get("principal").workspaceId, c.req.valid("param").id), 200));
