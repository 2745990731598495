/**
 * `GET /api/sessions/:id/files`, `/files/{path}` and `/files.tar.gz`: a session workspace's files
 * (docs/workspace.md, "API") at the active leaf or, with `?event=`, at any event of the session — the
 * tree that event's last file-changing tool call left. Read scope; another workspace's session, an
 * event the session lacks and a path the tree lacks all answer 404. `GET /api/sessions/:id/file-changes`
 * names the file-changing events on the active path (the console's Files panel picks a diff base there).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { SessionIdParam, sessionFor } from "./session-schemas.ts";

const EventQuery = z.object({ event: z.string().min(1).max(100).optional() });

const FilesListing = z
  .object({
    tree_hash: z.string(),
    event_id: z.string().nullable(),
    file_count: z.number().int(),
    total_bytes: z.number().int(),
    files: z.array(z.object({ path: z.string(), size: z.number().int(), sha256: z.string() })),
    truncated: z.boolean(),
  })
  .openapi("WorkspaceFiles");

const list = createRoute({
  method: "get",
  path: "/{id}/files",
  tags: ["sessions"],
  summary: "The session workspace's files at the active leaf or at ?event= (docs/workspace.md)",
  request: { params: SessionIdParam, query: EventQuery },
  responses: {
    200: jsonResponse(FilesListing, "The tree's files (at most 5,000 named; truncated says more exist)"),
    ...errorResponses(404),
  },
});

const archive = createRoute({
  method: "get",
  path: "/{id}/files.tar.gz",
  tags: ["sessions"],
  summary: "The session workspace's files as a gzip-compressed tar, at the active leaf or at ?event=",
  request: { params: SessionIdParam, query: EventQuery },
  responses: {
    200: { description: "The archive", content: { "application/gzip": { schema: z.string().openapi({ format: "binary" }) } } },
    ...errorResponses(404),
  },
});

const raw = createRoute({
  method: "get",
  path: "/{id}/files/{path}",
  tags: ["sessions"],
  summary: "One workspace file's raw bytes, at the active leaf or at ?event=; the path is one segment (encode '/' as %2F)",
  request: { params: SessionIdParam.extend({ path: z.string().min(1).max(1024) }), query: EventQuery },
  responses: {
    200: { description: "The file", content: { "application/octet-stream": { schema: z.string().openapi({ format: "binary" }) } } },
    ...errorResponses(404),
  },
});

const FileChanges = z
  .object({
    active_leaf: z.string().nullable(),
    changes: z.array(
      z.object({
        event_id: z.string(),
        seq: z.number().int(),
        ts: z.number().int(),
        run_id: z.string(),
        tool_call_id: z.string(),
        tool_name: z.string(),
        command: z.string().nullable(),
        tree_hash: z.string(),
        changed: z.boolean(),
      }),
    ),
  })
  .openapi("WorkspaceFileChanges");

const changes = createRoute({
  method: "get",
  path: "/{id}/file-changes",
  tags: ["sessions"],
  summary: "The file-changing tool results on the path to the active leaf, oldest first, with the tree each left (docs/workspace.md)",
  request: { params: SessionIdParam },
  responses: {
    200: jsonResponse(FileChanges, "The file-changing events (a `bash` call's command cut to 200 characters)"),
    ...errorResponses(404),
  },
});

export const fileRoutes = newRouter()
  .openapi(changes, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.fileChanges(workspaceId), 200);
  })
  .openapi(list, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    return c.json(await session.files(workspaceId, c.req.valid("query").event), 200);
  })
  .openapi(archive, async (c) => {
    const { session, workspaceId } = sessionFor(c, c.req.valid("param").id);
    const body = await session.filesArchive(workspaceId, c.req.valid("query").event);
    return new Response(body, {
      status: 200,
      headers: { "Content-Type": "application/gzip", "Content-Disposition": `attachment; filename="workspace.tar.gz"` },
    }) as never;
  })
  .openapi(raw, async (c) => {
    const { id, path } = c.req.valid("param");
    const { session, workspaceId } = sessionFor(c, id);
    const bytes = await session.fileContent(workspaceId, path, c.req.valid("query").event);
    return new Response(bytes, { status: 200, headers: { "Content-Type": "application/octet-stream" } }) as never;
  });
