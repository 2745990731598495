/**
 * `POST /api/sessions/:id/approvals/:approval_id`: a person approves or denies a tool call that waits
 * for approval (docs/approvals.md). Member or admin tokens; read tokens get 403, an id this session
 * never issued 404, an approval already decided (or timed out) 409. The waiting run goes on by itself.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { EventSchema, SessionIdParam, sessionFor } from "./session-schemas.ts";

const ClientId = z.string().min(1).max(100);

const decide = createRoute({
  method: "post",
  path: "/{id}/approvals/{approval_id}",
  tags: ["sessions"],
  summary: "Approve or deny a tool call waiting for approval (the run continues, or the model is told it was denied)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam.extend({ approval_id: z.string().min(1).max(100) }),
    body: jsonBody(z.strictObject({ decision: z.enum(["approve", "deny"]), client_id: ClientId.optional() })),
  },
  responses: {
    200: jsonResponse(
      z.object({
        approval_id: z.string(),
        run_id: z.string(),
        tool_name: z.string(),
        decision: z.enum(["approve", "deny"]),
        event: EventSchema,
      }),
      "Decided: the `tool_approval_decided` event",
    ),
    ...errorResponses(404, 409),
  },
});

export const approvalRoutes = newRouter().openapi(decide, async (c) => {
  const { id, approval_id } = c.req.valid("param");
  const body = c.req.valid("json");
  const { session, workspaceId } = sessionFor(c, id);
  return c.json(await session.decideApproval(workspaceId, approval_id, body.decision, body.client_id ?? "api"), 200);
});
