/**
 * `GET/PUT /api/config`: the workspace configuration, validated by one strict schema; every URL in it
 * must pass the egress policy (storage/egress.ts), else 422 `egress_refused` naming the field.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { AppError, validationError } from "../../../kernel/errors.ts";
import type { Env } from "../../../storage/env.ts";
import { requireScope } from "../auth.ts";
import { CONFIG_SECTIONS, WorkspaceConfigSchema } from "../../../app/config.ts";
import { loadConfig, saveConfig } from "../../../storage/config/store.ts";
import { assertFieldSize } from "../../../storage/limits.ts";
import { assertUrlFields, egressPolicy } from "../../../storage/egress.ts";

const ConfigDoc = z.record(z.string(), z.unknown()).openapi("WorkspaceConfig", {
  description: "model, fallback_model, auxiliary_model, runtime, toolchain (see README: Configuration)",
});

const get = createRoute({
  method: "get",
  path: "/",
  tags: ["config"],
  summary: "Read the workspace configuration (defaults applied)",
  middleware: [requireScope("read")] as const,
  responses: { 200: jsonResponse(ConfigDoc, "Configuration"), ...errorResponses() },
});

const put = createRoute({
  method: "put",
  path: "/",
  tags: ["config"],
  summary: "Replace the workspace configuration; unknown keys anywhere are rejected with their path",
  middleware: [requireScope("admin")] as const,
  request: { body: { required: true, content: { "application/json": { schema: ConfigDoc } } } },
  responses: { 200: jsonResponse(ConfigDoc, "Saved configuration"), ...errorResponses(413, 422) },
});

export const configRoutes = newRouter()
  .openapi(get, async (c) => c.json(await loadConfig(c.env, c.get("principal").workspaceId), 200))
  .openapi(put, async (c) => {
    // Validated here rather than by the route so the one schema (with defaults) is the authority.
    // The whole document is bounded too (docs/limits.md): a base_url, for one, has no length of its own.
    assertFieldSize(c.env, "config", c.req.valid("json"), "config_bytes");
    const parsed = WorkspaceConfigSchema.safeParse(c.req.valid("json"));
    if (!parsed.success) throw validationError(parsed.error, "config");
    // Every stored URL must pass the egress policy; Beaver's own host is the one this request came to.
    assertUrlFields(parsed.data, egressPolicy(c.env, new URL(c.req.url).host));
    await checkSections(parsed.data, { env: c.env, workspaceId: c.get("principal").workspaceId });
    await saveConfig(c.env, c.get("principal").workspaceId, parsed.data);
    return c.json(parsed.data, 200);
  });

/** The sections' own checks (a team naming an agent that does not exist): the first problem names the message, all are in details. */
async function checkSections(config: Record<string, unknown>, ctx: { env: Env; workspaceId: string }): Promise<void> {
  const checked = CONFIG_SECTIONS.filter((s) => s.check && config[s.key] !== undefined);
  const problems = (await Promise.all(checked.map((s) => s.check!(config[s.key], ctx)))).flat();
  const first = problems[0];
  if (first) throw new AppError("validation_failed", `Invalid config: ${first.path}: ${first.message}`, { details: problems });
}
