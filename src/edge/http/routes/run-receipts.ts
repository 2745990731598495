/**
 * `/api/sessions/:id/runs/:run_id/receipt` and `…/feedback`, and `/api/sessions/:id/feedback` (docs/learning.md,
 * "Run receipts", "Feedback"): a finished run's receipt (derived on read when the cron job has not reached it yet) and
 * a person's thumbs up or down with an optional comment. The session and run are looked up in the
 * SessionDO first, so another workspace's session or an unknown run is 404.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { RunIdParam, SessionIdParam, sessionFor } from "./session-schemas.ts";
import { FeedbackInput, recordFeedback, sessionFeedback } from "../../../domains/learning/receipts/feedback.ts";
import { receiptOf } from "../../../domains/learning/receipts/read.ts";

const Any = z.record(z.string(), z.unknown());

const FeedbackBody = FeedbackInput.openapi("RunFeedback");

const receipt = createRoute({
  method: "get",
  path: "/{id}/runs/{run_id}/receipt",
  tags: ["sessions"],
  summary:
    "A finished run's receipt: activated skills with versions, tools and their outcomes, verification (toolchain), status, usage, feedback; " +
    "409 while the run is open or its log is still being copied",
  middleware: [requireScope("read")] as const,
  request: { params: RunIdParam },
  responses: { 200: jsonResponse(Any, "The receipt"), ...errorResponses(404, 409) },
});

const feedback = createRoute({
  method: "post",
  path: "/{id}/runs/{run_id}/feedback",
  tags: ["sessions"],
  summary: "Rate a finished run up or down (optional comment, up to 2,000 characters); a second rating replaces the first",
  middleware: [requireScope("member")] as const,
  request: { params: RunIdParam, body: jsonBody(FeedbackBody) },
  responses: {
    200: jsonResponse(
      z.object({ run_id: z.string(), rating: z.enum(["up", "down"]), comment: z.string().nullable(), receipt: Any.nullable() }),
      "Recorded; the receipt reflects it (null until the run's receipt exists)",
    ),
    ...errorResponses(404, 409),
  },
});

const sessionRatings = createRoute({
  method: "get",
  path: "/{id}/feedback",
  tags: ["sessions"],
  summary: "The ratings people gave this session's runs (one per rated run), for the chat's thumbs",
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam },
  responses: {
    200: jsonResponse(
      z.object({ feedback: z.array(z.object({ run_id: z.string(), rating: z.enum(["up", "down"]), comment: z.string().nullable() })) }),
      "The session's ratings",
    ),
    ...errorResponses(404),
  },
});

export const runReceiptRoutes = newRouter()
  .openapi(sessionRatings, async (c) => {
    const { id } = c.req.valid("param");
    const { session, workspaceId } = sessionFor(c, id);
    await session.view(workspaceId); // another workspace's (or no) session: 404
    return c.json({ feedback: await sessionFeedback(c.env, workspaceId, id) }, 200);
  })
  .openapi(receipt, async (c) => {
    const { id, run_id } = c.req.valid("param");
    const { session, workspaceId } = sessionFor(c, id);
    // The receipt is derived from D1's copy of the log, which trails the run's answer: flushed first.
    const [run] = await Promise.all([session.getRun(run_id, workspaceId), session.flushReplication()]);
    return c.json(await receiptOf(c.env, workspaceId, { id: run.id, status: run.status }, Date.now()), 200);
  })
  .openapi(feedback, async (c) => {
    const { id, run_id } = c.req.valid("param");
    const p = c.get("principal");
    const { session, workspaceId } = sessionFor(c, id);
    const [run] = await Promise.all([session.getRun(run_id, workspaceId), session.flushReplication()]);
    const body = c.req.valid("json");
    return c.json(
      await recordFeedback(c.env, {
        workspaceId,
        sessionId: id,
        run: { id: run.id, status: run.status },
        input: body,
        givenBy: p.tokenId,
        now: Date.now(),
      }),
      200,
    );
  });
