/**
 * The live stream of a session: `GET /api/sessions/:id/stream?last_seq=N` — a WebSocket when
 * upgraded, SSE otherwise. It replays the persistent events after N from the session's own log,
 * then the in-progress message so far, then goes live. The path is public in `isPublicApiPath`
 * because browsers cannot put a bearer token on a WebSocket: it authenticates here, with either
 * the bearer token or a single-use ticket from `POST /api/sessions/:id/stream-ticket`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { AppError } from "../../../kernel/errors.ts";
import { bearerOf, hasScope, principalForToken, requireScope } from "../auth.ts";
import { SessionClient, issueTicket, verifyTicket, TICKET_TTL_MS } from "../../../runtime/index.ts";
import { Flag, SessionIdParam } from "./session-schemas.ts";

const stream = createRoute({
  method: "get",
  path: "/{id}/stream",
  tags: ["sessions"],
  summary: "Live events: replay after last_seq, then live (WebSocket when upgraded, SSE otherwise)",
  description:
    "Authenticate with `Authorization: Bearer` or with `ticket` (single use, from the stream-ticket route). SSE also honours `Last-Event-ID`. " +
    "A WebSocket opened with a member or admin token (or a ticket issued to one) also takes client frames: " +
    '`{"type":"message","content","client_id"?,"mode"?:"steer"|"follow_up"}`, `{"type":"cancel"}`, `{"type":"approve"|"deny","approval_id"}` ' +
    "(docs/approvals.md); each is answered with an `ack` or an `error` frame.",
  request: {
    params: SessionIdParam,
    query: z.strictObject({
      last_seq: z.coerce.number().int().min(0).optional(),
      include_hidden: Flag.optional(),
      client_id: z.string().min(1).max(100).optional(),
      device_id: z
        .string()
        .regex(/^[A-Za-z0-9._:-]{1,100}$/, "must be 1-100 letters, digits or . _ : -")
        .optional()
        .describe("WebSocket: the device this client is, recorded with the messages it sends (`channel_inject`); default: client_id"),
      ticket: z.string().min(10).max(1000).optional(),
    }),
  },
  responses: {
    101: { description: "WebSocket: one JSON frame per event" },
    200: {
      description: "SSE: `id: <seq>`, `event: <type>`, `data: <frame JSON>`",
      content: { "text/event-stream": { schema: z.string() } },
    },
    ...errorResponses(404),
  },
});

const ticket = createRoute({
  method: "post",
  path: "/{id}/stream-ticket",
  tags: ["sessions"],
  summary: `A single-use ticket for the stream URL (valid ${TICKET_TTL_MS / 1000} s), for clients that cannot send headers`,
  middleware: [requireScope("read")] as const,
  request: { params: SessionIdParam },
  responses: { 201: jsonResponse(z.object({ ticket: z.string(), expires_at: z.number() }), "Ticket"), ...errorResponses(404) },
});

export const streamRoutes = newRouter()
  .openapi(stream, async (c) => {
    const { id } = c.req.valid("param");
    const q = c.req.valid("query");
    const session = SessionClient.of(c.env, id);
    let workspaceId: string;
    let mayReadHidden: boolean;
    let maySend: boolean;
    let tokenId: string | undefined;
    if (q.ticket !== undefined) {
      const claims = await verifyTicket(c.env, q.ticket, id);
      const fresh = await session.useTicket(claims.w, claims.n, claims.e);
      if (!fresh) throw new AppError("unauthorized", "This stream ticket was already used");
      workspaceId = claims.w;
      mayReadHidden = claims.a;
      maySend = claims.m === true;
      tokenId = claims.t;
    } else {
      const secret = bearerOf(c.req.header("Authorization"));
      if (!secret) throw new AppError("unauthorized", "Missing bearer token or stream ticket");
      const principal = await principalForToken(c.env, secret);
      if (!principal) throw new AppError("unauthorized", "Invalid or revoked token");
      if (!hasScope(principal, "read")) throw new AppError("forbidden", "This action needs the 'read' scope");
      workspaceId = principal.workspaceId;
      mayReadHidden = hasScope(principal, "admin");
      maySend = hasScope(principal, "member");
      tokenId = principal.tokenId;
    }
    if (q.include_hidden && !mayReadHidden) throw new AppError("forbidden", "Hidden events are for admins only");

    const lastEventId = Number(c.req.header("Last-Event-ID"));
    const lastSeq = q.last_seq ?? (Number.isInteger(lastEventId) && lastEventId >= 0 ? lastEventId : 0);
    const headers = new Headers(c.req.raw.headers);
    headers.delete("Authorization");
    return session.openLiveStream(
      workspaceId,
      {
        lastSeq,
        includeHidden: q.include_hidden === true,
        clientId: q.client_id ?? "stream",
        maySend,
        ...(q.device_id !== undefined ? { deviceId: q.device_id } : {}),
        ...(tokenId !== undefined ? { tokenId } : {}),
      },
      headers,
    );
  })
  .openapi(ticket, async (c) => {
    const { id } = c.req.valid("param");
    const principal = c.get("principal");
    await SessionClient.of(c.env, id).view(principal.workspaceId);
    const issued = await issueTicket(c.env, {
      w: principal.workspaceId,
      s: id,
      a: hasScope(principal, "admin"),
      m: hasScope(principal, "member"),
      t: principal.tokenId,
    });
    return c.json(issued, 201);
  });
