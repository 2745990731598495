/**
 * `POST /webhooks/gitea/{workspace_id}`: Gitea's webhook target. Outside `/api`, so no bearer token:
 * the HMAC signature is the authentication. The route reads the raw body (the signature covers its
 * exact bytes), hands it to the intake, which records it, and answers 202; the delivery is processed
 * after the answer, or only its follow-ups run when intake settled it in the same write
 * (src/app/webhook-deliveries.ts; docs/toolchain.md, "Webhook intake").
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { intakeWebhook } from "../../../domains/toolchain/intake.ts";
import { followUpDelivery, processWebhookDelivery } from "../../../app/webhook-deliveries.ts";
import { DELIVERY_OUTCOMES } from "../../../domains/toolchain/delivery-store.ts";
import { AppError } from "../../../kernel/errors.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { limitWebhooks } from "../rate-limit.ts";

const Outcome = z
  .object({
    delivery_id: z.string(),
    event_type: z.string(),
    action: z.string().nullable(),
    repo: z.string().nullable(),
    outcome: z.enum(DELIVERY_OUTCOMES),
    reason: z.string().nullable(),
    task_ids: z.array(z.string()),
    status_code: z.number(),
    body_sha256: z.string(),
    received_at: z.number(),
    duplicate: z.boolean(),
  })
  .openapi("WebhookDelivery");

const route = createRoute({
  method: "post",
  path: "/gitea/{workspace_id}",
  tags: ["toolchain"],
  summary:
    "Gitea webhook target (authenticated by X-Gitea-Signature / X-Hub-Signature-256, deduplicated on X-Gitea-Delivery and on the signed body)",
  description:
    "Answered once the signature is checked and the delivery recorded: 202 with the delivery `received`; it is classified, its tasks created and dispatched after the answer, and its outcome (tasks_created, ignored, rejected or failed, with a reason and the task ids) is read from GET /api/toolchain/deliveries. A delivery whose outcome needs no lookup (no CI or deploy failure, the workspace's agents at hand) is written with its outcome and tasks in the same one write and answered 202 with them; only its dispatch follows. 200 with the delivery as it stands for a redelivery, or for a replay (a signed body already answered within 7 days, under any delivery id); 400 for a missing delivery id or event type header; 401 for a missing or wrong signature (nothing stored).",
  security: [],
  middleware: [limitWebhooks] as const,
  request: {
    params: z.object({ workspace_id: z.string().min(1).max(63) }),
    // Documented, not validated here: the signature covers the exact bytes, so the route reads them raw (a zod
    // schema would parse them first) and the intake checks the payload per event type.
    body: {
      required: true,
      description: "Gitea's webhook payload for the event named in X-Gitea-Event-Type, as Gitea sends it (its bytes are signed)",
      content: {
        "application/json": {
          schema: {
            type: "object" as const,
            additionalProperties: true,
            description: "A Gitea webhook payload (push, pull_request, issues, …)",
          },
        },
      },
    },
  },
  responses: {
    200: jsonResponse(Outcome, "Redelivery or replay: the first delivery as it stands"),
    202: jsonResponse(
      Outcome,
      "Recorded: `received` and processed after the answer, or settled in the same write (its outcome and task ids)",
    ),
    ...errorResponses(413, 429),
  },
});

export const webhookRoutes = newRouter().openapi(route, async (c) => {
  const workspaceId = c.req.valid("param").workspace_id;
  const body = new Uint8Array(await c.req.arrayBuffer());
  const result = await intakeWebhook(c.env, { workspaceId, headers: c.req.raw.headers, body });
  switch (result.kind) {
    case "unauthorized":
      throw new AppError("unauthorized", "Webhook signature missing or invalid");
    case "malformed":
      throw new AppError("bad_request", result.reason);
    case "rejected":
      throw new AppError("bad_request", result.reason, { details: result.delivery });
    case "duplicate":
      return c.json(result.delivery as z.infer<typeof Outcome>, 200);
    case "accepted":
      c.executionCtx.waitUntil(
        processWebhookDelivery(c.env, workspaceId, result.delivery.delivery_id, Date.now(), result.recorded).catch((err: unknown) =>
          log.error("webhook delivery processing failed", { workspace_id: workspaceId, ...errorFields(err) }),
        ),
      );
      return c.json(result.delivery as z.infer<typeof Outcome>, 202);
    case "settled":
      c.executionCtx.waitUntil(
        followUpDelivery(c.env, workspaceId, result.processed).catch((err: unknown) =>
          log.error("webhook follow-up failed", { workspace_id: workspaceId, ...errorFields(err) }),
        ),
      );
      return c.json(result.delivery as z.infer<typeof Outcome>, 202);
  }
});
