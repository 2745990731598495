/** `/api/secrets`: write-only workspace secrets. Values are never returned, logged or echoed. */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { SecretNameSchema } from "../../../storage/config/schema.ts";
import { deleteSecret, listSecrets, putSecret } from "../../../storage/secrets/store.ts";

const SecretMeta = z.object({ name: z.string(), created_at: z.number(), updated_at: z.number() }).openapi("SecretMeta");
const Name = z.object({ name: SecretNameSchema });

const put = createRoute({
  method: "put",
  path: "/{name}",
  tags: ["secrets"],
  summary: "Create or replace a secret (write-only)",
  middleware: [requireScope("admin")] as const,
  request: { params: Name, body: jsonBody(z.strictObject({ value: z.string().min(1).max(16_384) })) },
  responses: { 200: jsonResponse(z.object({ name: z.string(), created: z.boolean() }), "Stored"), ...errorResponses() },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["secrets"],
  summary: "List secret names and timestamps (never values)",
  middleware: [requireScope("admin")] as const,
  responses: { 200: jsonResponse(z.object({ secrets: z.array(SecretMeta) }), "Secrets"), ...errorResponses() },
});

const del = createRoute({
  method: "delete",
  path: "/{name}",
  tags: ["secrets"],
  summary: "Delete a secret",
  middleware: [requireScope("admin")] as const,
  request: { params: Name },
  responses: { 200: jsonResponse(z.object({ name: z.string(), deleted: z.literal(true) }), "Deleted"), ...errorResponses(404) },
});

export const secretRoutes = newRouter()
  .openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const { created } = await putSecret(c.env, c.get("principal").workspaceId, name, c.req.valid("json").value);
    return c.json({ name, created }, 200);
  })
  .openapi(list, async (c) => {
    const rows = await listSecrets(c.env, c.get("principal").workspaceId);
    return c.json({ secrets: rows.map((r) => ({ name: r.name, created_at: r.createdAt, updated_at: r.updatedAt })) }, 200);
  })
  .openapi(del, async (c) => {
    const { name } = c.req.valid("param");
    await deleteSecret(c.env, c.get("principal").workspaceId, name);
    return c.json({ name, deleted: true as const }, 200);
  });
