/**
 * `PATCH /api/sessions/:id` (rename, archive) and `DELETE /api/sessions/:id` (the log goes, then its
 * D1 copy) — docs/sessions.md, "Rename, archive, delete". Another workspace's session answers 404.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { AppError } from "../../../kernel/errors.ts";
import { assertFieldSize } from "../../../storage/limits.ts";
import { SessionClient, deleteSessionCopy } from "../../../runtime/index.ts";
import { SessionIdParam, SessionSchema } from "./session-schemas.ts";

const patch = createRoute({
  method: "patch",
  path: "/{id}",
  tags: ["sessions"],
  summary: "Rename and/or archive a session (archived sessions are left out of the list and search unless asked for)",
  middleware: [requireScope("member")] as const,
  request: {
    params: SessionIdParam,
    body: jsonBody(
      z
        .strictObject({
          title: z.string().trim().min(1).optional().describe("At most session_title_bytes (1 KiB) of UTF-8; larger answers 413"),
          archived: z.boolean().optional(),
          channel: z
            .string()
            .min(1)
            .max(64)
            .nullable()
            .optional()
            .describe("Bind the session to a configured outbound channel (docs/channels.md); null unbinds; unknown → 422"),
          client_id: z.string().min(1).max(100).optional(),
        })
        .refine((b) => b.title !== undefined || b.archived !== undefined || b.channel !== undefined, {
          message: "Give title, archived, channel or several",
        }),
    ),
  },
  responses: { 200: jsonResponse(SessionSchema, "The session as it is now"), ...errorResponses(404, 413, 422) },
});

const remove = createRoute({
  method: "delete",
  path: "/{id}",
  tags: ["sessions"],
  summary: "Delete a session for good: its log, runs and search entries (admin); open runs are cancelled first",
  middleware: [requireScope("admin")] as const,
  request: { params: SessionIdParam },
  responses: { 204: { description: "Deleted" }, ...errorResponses(404) },
});

export const sessionAdminRoutes = newRouter()
  .openapi(patch, async (c) => {
    const { client_id, ...changes } = c.req.valid("json");
    assertFieldSize(c.env, "title", changes.title, "session_title_bytes");
    const session = await SessionClient.of(c.env, c.req.valid("param").id).update(
      c.get("principal").workspaceId,
      changes,
      client_id ?? "api",
    );
    return c.json(session, 200);
  })
  .openapi(remove, async (c) => {
    const { id } = c.req.valid("param");
    const workspaceId = c.get("principal").workspaceId;
    let found = true;
    try {
      await SessionClient.of(c.env, id).purge(workspaceId);
    } catch (err) {
      // Gone from its object already (a retry after a failed D1 batch): the D1 rows may still be there.
      if (!(err instanceof AppError && err.code === "not_found")) throw err;
      found = false;
    }
    if (!(await deleteSessionCopy(c.env, workspaceId, id)) && !found) throw new AppError("not_found", "Session not found");
    return c.body(null, 204);
  });
