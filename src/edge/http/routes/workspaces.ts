/** `/api/workspaces`: the bootstrap token creates and lists workspaces; others see only their own. */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { AppError } from "../../../kernel/errors.ts";
import { createWorkspace, getWorkspace, listWorkspaces } from "../../../storage/workspaces.ts";
import { assertFieldSize } from "../../../storage/limits.ts";

export const WorkspaceIdSchema = z.string().regex(/^[a-z0-9][a-z0-9-]{1,62}$/, "must be 2-63 lowercase letters, digits or hyphens");

const Workspace = z.object({ id: z.string(), name: z.string(), created_at: z.number() }).openapi("Workspace");
const toJson = (w: { id: string; name: string; createdAt: number }) => ({ id: w.id, name: w.name, created_at: w.createdAt });

const create = createRoute({
  method: "post",
  path: "/",
  tags: ["workspaces"],
  summary: "Create a workspace (bootstrap token only)",
  request: {
    body: jsonBody(
      z.strictObject({ id: WorkspaceIdSchema, name: z.string().min(1).describe("At most label_bytes (200) of UTF-8; larger answers 413") }),
    ),
  },
  responses: { 201: jsonResponse(Workspace, "Created"), ...errorResponses(409, 413) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["workspaces"],
  summary: "List workspaces (all for the bootstrap token, else the caller's own)",
  responses: { 200: jsonResponse(z.object({ workspaces: z.array(Workspace) }), "Workspaces"), ...errorResponses() },
});

export const workspaceRoutes = newRouter()
  .openapi(create, async (c) => {
    if (!c.get("principal").bootstrap) throw new AppError("forbidden", "Only the bootstrap admin token can create workspaces");
    const body = c.req.valid("json");
    assertFieldSize(c.env, "name", body.name, "label_bytes");
    const row = await createWorkspace(c.env, body.id, body.name);
    return c.json(toJson(row), 201);
  })
  .openapi(list, async (c) => {
    const p = c.get("principal");
    const rows = p.bootstrap ? await listWorkspaces(c.env) : [await getWorkspace(c.env, p.workspaceId)].filter((w) => !!w);
    return c.json({ workspaces: rows.map(toJson) }, 200);
  });
