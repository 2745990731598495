/**
 * `/api/tokens`: create (secret shown once), list and revoke API tokens of the caller's workspace.
 * Admin scope required. The bootstrap token may also act on another workspace via `workspace_id`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { and, desc, eq } from "drizzle-orm";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { SCOPES, requireScope } from "../auth.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { apiTokens } from "../../../storage/db/schema.ts";
import { forgetToken } from "../token-cache.ts";
import { endWhatTokenApproved } from "../../oauth/revocation.ts";
import { newId, randomToken } from "../../../kernel/ids.ts";
import { sha256Hex } from "../../../kernel/hash.ts";
import { getWorkspace } from "../../../storage/workspaces.ts";
import { WorkspaceIdSchema } from "./workspaces.ts";
import { assertFieldSize } from "../../../storage/limits.ts";

const Token = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    name: z.string(),
    scopes: z.array(z.enum(SCOPES)),
    created_at: z.number(),
    revoked_at: z.number().nullable(),
  })
  .openapi("Token");

type TokenRow = typeof apiTokens.$inferSelect;
const toJson = (t: TokenRow) => ({
  id: t.id,
  workspace_id: t.workspaceId,
  name: t.name,
  scopes: JSON.parse(t.scopes) as (typeof SCOPES)[number][],
  created_at: t.createdAt,
  revoked_at: t.revokedAt,
});

const create = createRoute({
  method: "post",
  path: "/",
  tags: ["tokens"],
  summary: "Create a token; the secret is in the response once and never again",
  middleware: [requireScope("admin")] as const,
  request: {
    body: jsonBody(
      z.strictObject({
        name: z.string().min(1).describe("At most label_bytes (200) of UTF-8; larger answers 413"),
        scopes: z.array(z.enum(SCOPES)).min(1),
        workspace_id: WorkspaceIdSchema.optional(),
      }),
    ),
  },
  responses: { 201: jsonResponse(Token.extend({ token: z.string() }), "Created"), ...errorResponses(404, 413) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["tokens"],
  summary: "List tokens (never their secrets)",
  middleware: [requireScope("admin")] as const,
  request: { query: z.strictObject({ workspace_id: WorkspaceIdSchema.optional() }) },
  responses: { 200: jsonResponse(z.object({ tokens: z.array(Token) }), "Tokens"), ...errorResponses() },
});

const revoke = createRoute({
  method: "delete",
  path: "/{id}",
  tags: ["tokens"],
  summary: "Revoke a token, with the OAuth grants it approved and its tokens for personal MCP servers",
  middleware: [requireScope("admin")] as const,
  request: { params: z.object({ id: z.string() }) },
  responses: { 200: jsonResponse(Token, "Revoked"), ...errorResponses(404) },
});

/** The workspace a token request targets: the caller's own, or any existing one for bootstrap. */
async function targetWorkspace(
  env: Parameters<typeof getWorkspace>[0],
  principal: { workspaceId: string; bootstrap: boolean },
  requested?: string,
) {
  if (!requested || requested === principal.workspaceId) return principal.workspaceId;
  if (!principal.bootstrap) throw new AppError("forbidden", "Only the bootstrap admin token can manage another workspace's tokens");
  if (!(await getWorkspace(env, requested))) throw notFound(`Workspace '${requested}'`);
  return requested;
}

export const tokenRoutes = newRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    assertFieldSize(c.env, "name", body.name, "label_bytes");
    const workspaceId = await targetWorkspace(c.env, c.get("principal"), body.workspace_id);
    const secret = `bvr_${randomToken(40)}`;
    const row: TokenRow = {
      id: newId("tok"),
      workspaceId,
      name: body.name,
      tokenHash: await sha256Hex(secret),
      scopes: JSON.stringify([...new Set(body.scopes)]),
      createdAt: Date.now(),
      revokedAt: null,
    };
    await makeDb(c.env.DB).insert(apiTokens).values(row).run();
    return c.json({ ...toJson(row), token: secret }, 201);
  })
  .openapi(list, async (c) => {
    const workspaceId = await targetWorkspace(c.env, c.get("principal"), c.req.valid("query").workspace_id);
    const rows = await makeDb(c.env.DB)
      .select()
      .from(apiTokens)
      .where(eq(apiTokens.workspaceId, workspaceId))
      .orderBy(desc(apiTokens.createdAt))
      .all();
    return c.json({ tokens: rows.map(toJson) }, 200);
  })
  .openapi(revoke, async (c) => {
    const p = c.get("principal");
    const db = makeDb(c.env.DB);
    const { id } = c.req.valid("param");
    const scope = p.bootstrap ? eq(apiTokens.id, id) : and(eq(apiTokens.id, id), eq(apiTokens.workspaceId, p.workspaceId));
    const row = await db.select().from(apiTokens).where(scope).get();
    if (!row) throw notFound("Token");
    const revokedAt = row.revokedAt ?? Date.now();
    await db.update(apiTokens).set({ revokedAt }).where(eq(apiTokens.id, id)).run();
    forgetToken(id); // this isolate at once; others within TOKEN_CACHE_TTL_MS (token-cache.ts)
    // Also on a repeated revocation, so a retry finishes what a failed one left.
    await endWhatTokenApproved(c.env, new URL(c.req.url).origin, row.workspaceId, id);
    return c.json(toJson({ ...row, revokedAt }), 200);
  });
