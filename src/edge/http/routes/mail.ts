/**
 * `/api/mail`: mail between agents — `inform` (no action needed) or `request` (a reply is expected).
 * Mail is its own task type with its own store and handler; toolchain events never go through it.
 * Subject and body sizes are the operator's limits (413 naming the field); list pages stop at the
 * byte budget (docs/limits.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { AgentIdSchema } from "../../../domains/tasks/agents.ts";
import { getAgent } from "../../../domains/tasks/agent-store.ts";
import { PERFORMATIVES, listMail, loadMail, mailHistory, mailView, sendMail, transitionMail } from "../../../domains/mail/store.ts";
import type { Env } from "../../../storage/env.ts";
import { takeWithinBudget } from "../../../kernel/byte-budget.ts";
import { assertFieldSize, limitsOf } from "../../../storage/limits.ts";

const MailDoc = z.record(z.string(), z.unknown()).openapi("Mail");
const IdParam = z.object({ id: z.string().min(1).max(100) });
const MAIL_STATUSES = ["pending", "working", "done", "failed", "cancelled"] as const;

const send = createRoute({
  method: "post",
  path: "/",
  tags: ["mail"],
  summary: "Send mail from one agent to another",
  middleware: [requireScope("member")] as const,
  request: {
    body: jsonBody(
      z.strictObject({
        from_agent: AgentIdSchema,
        to_agent: AgentIdSchema,
        performative: z.enum(PERFORMATIVES),
        subject: z.string().trim().min(1).describe("At most mail_subject_bytes (1 KiB) of UTF-8; larger answers 413"),
        body: z.string().trim().min(1).describe("At most mail_body_bytes (64 KiB) of UTF-8; larger answers 413"),
        in_reply_to: z.string().min(1).max(100).optional(),
      }),
    ),
  },
  responses: { 201: jsonResponse(MailDoc, "Sent"), ...errorResponses(404, 413, 415, 422) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["mail"],
  summary: "Mail, newest first, filtered by status, recipient, sender or performative",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.object({
      status: z.enum(MAIL_STATUSES).optional(),
      to_agent: z.string().max(64).optional(),
      from_agent: z.string().max(64).optional(),
      performative: z.enum(PERFORMATIVES).optional(),
      before: z.coerce.number().int().positive().optional(),
      /** With `before`: the id of the last mail of the previous page (mail of the same millisecond is not skipped). */
      before_id: z.string().min(1).max(200).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ mail: z.array(MailDoc), next_before: z.number().nullable(), next_before_id: z.string().nullable() }),
      "Mail",
    ),
    ...errorResponses(),
  },
});

const get = createRoute({
  method: "get",
  path: "/{id}",
  tags: ["mail"],
  summary: "One mail with its replies and history",
  middleware: [requireScope("read")] as const,
  request: { params: IdParam },
  responses: {
    200: jsonResponse(z.object({ mail: MailDoc, replies: z.array(MailDoc), history: z.array(z.record(z.string(), z.unknown())) }), "Mail"),
    ...errorResponses(404),
  },
});

const reply = createRoute({
  method: "post",
  path: "/{id}/reply",
  tags: ["mail"],
  summary: "Reply to a mail as its recipient",
  middleware: [requireScope("member")] as const,
  request: {
    params: IdParam,
    body: jsonBody(
      z.strictObject({ body: z.string().trim().min(1).describe("At most mail_body_bytes (64 KiB) of UTF-8; larger answers 413") }),
    ),
  },
  responses: { 201: jsonResponse(MailDoc, "Reply sent"), ...errorResponses(404, 413, 415) },
});

const cancel = createRoute({
  method: "post",
  path: "/{id}/cancel",
  tags: ["mail"],
  summary: "Cancel a pending or working mail",
  middleware: [requireScope("member")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(MailDoc, "Cancelled"), ...errorResponses(404, 409) },
});

async function mailOr404(env: Env, workspaceId: string, id: string) {
  const mail = await loadMail(env, workspaceId, id);
  if (!mail) throw notFound(`Mail '${id}'`);
  return mail;
}

export const mailRoutes = newRouter()
  .openapi(send, async (c) => {
    const ws = c.get("principal").workspaceId;
    const b = c.req.valid("json");
    assertFieldSize(c.env, "subject", b.subject, "mail_subject_bytes");
    assertFieldSize(c.env, "body", b.body, "mail_body_bytes");
    for (const id of [b.from_agent, b.to_agent]) {
      if (!(await getAgent(c.env, ws, id)))
        throw new AppError("unprocessable", `Agent '${id}' does not exist`, {
          details: [{ path: id === b.from_agent ? "from_agent" : "to_agent", message: "unknown agent" }],
        });
    }
    if (b.in_reply_to) await mailOr404(c.env, ws, b.in_reply_to);
    const mail = await sendMail(c.env, ws, {
      fromAgent: b.from_agent,
      toAgent: b.to_agent,
      performative: b.performative,
      subject: b.subject,
      body: b.body,
      inReplyTo: b.in_reply_to ?? null,
    });
    return c.json(mailView(mail), 201);
  })
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const rows = await listMail(c.env, c.get("principal").workspaceId, {
      status: q.status,
      toAgent: q.to_agent,
      fromAgent: q.from_agent,
      performative: q.performative,
      before: q.before,
      beforeId: q.before_id,
      limit: q.limit,
    });
    const page = takeWithinBudget(
      rows.map((r) => ({ row: r, view: mailView(r) })),
      limitsOf(c.env).list_page_bytes,
      (i) => i.view,
    );
    const last = page.truncated || rows.length === q.limit ? page.items.at(-1)?.row : undefined;
    return c.json({ mail: page.items.map((i) => i.view), next_before: last?.createdAt ?? null, next_before_id: last?.id ?? null }, 200);
  })
  .openapi(get, async (c) => {
    const ws = c.get("principal").workspaceId;
    const mail = await mailOr404(c.env, ws, c.req.valid("param").id);
    const [replies, history] = await Promise.all([
      listMail(c.env, ws, { inReplyTo: mail.id, limit: 200 }),
      mailHistory(c.env, ws, mail.id),
    ]);
    return c.json({ mail: mailView(mail), replies: replies.map(mailView), history: history as Record<string, unknown>[] }, 200);
  })
  .openapi(reply, async (c) => {
    const ws = c.get("principal").workspaceId;
    assertFieldSize(c.env, "body", c.req.valid("json").body, "mail_body_bytes");
    const mail = await mailOr404(c.env, ws, c.req.valid("param").id);
    const sent = await sendMail(c.env, ws, {
      fromAgent: mail.toAgent,
      toAgent: mail.fromAgent,
      performative: "inform",
      subject: mail.subject.startsWith("Re: ") ? mail.subject : `Re: ${mail.subject}`,
      body: c.req.valid("json").body,
      inReplyTo: mail.id,
    });
    return c.json(mailView(sent), 201);
  })
  .openapi(cancel, async (c) => {
    const ws = c.get("principal").workspaceId;
    const mail = await mailOr404(c.env, ws, c.req.valid("param").id);
    const moved = await transitionMail(c.env, ws, mail.id, {
      from: ["pending", "working"],
      to: "cancelled",
      set: { completed_at: Date.now() },
      event: "cancelled",
      detail: { by: `token:${c.get("principal").tokenId}` },
    });
    if (!moved) throw new AppError("conflict", `Mail '${mail.id}' is ${mail.status}; only pending or working mail can be cancelled`);
    return c.json(mailView((await loadMail(c.env, ws, mail.id))!), 200);
  });
