/**
 * `GET /api/skills/:name/stats` (docs/learning.md, "Skill stats"): the runs that activated a skill,
 * their success and feedback rates per version, against the same agents' runs without it, with the
 * counts behind every rate, and against those of them whose messages are similar to the skill's runs'. A skill the workspace never had (nor a builtin one) and no run activated is 404.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { getSkill } from "../../../domains/skills/store.ts";
import { builtinSkills } from "../../../domains/skills/builtin.ts";
import { skillStats } from "../../../domains/learning/receipts/stats.ts";
import { similarWithoutSkill } from "../../../domains/learning/receipts/similar.ts";
import { notFound } from "../../../kernel/errors.ts";

const Name = z.object({ name: z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be 1-64 lowercase letters, digits, '_' or '-'") });

const Counts = z
  .object({
    runs: z.number(),
    success: z.number(),
    failure: z.number(),
    cancelled: z.number(),
    pending: z.number(),
    success_rate: z.number().nullable(),
    feedback: z.object({ up: z.number(), down: z.number(), none: z.number(), up_rate: z.number().nullable() }),
  })
  .openapi("RunCounts");

const StatsSchema = z
  .object({
    skill: z.string(),
    runs: z.number(),
    overall: Counts,
    versions: z.array(Counts.extend({ version: z.string() })),
    baseline: Counts,
    similar_baseline: Counts.extend({ looked_at: z.object({ with_skill: z.number(), without_skill: z.number() }) }).optional(),
    by_agent: z.array(z.object({ agent_id: z.string().nullable(), with_skill: Counts, without_skill: Counts })),
  })
  .openapi("SkillStats");

const stats = createRoute({
  method: "get",
  path: "/{name}/stats",
  tags: ["skills"],
  summary: "A skill's runs: success and feedback rates per version against the same agents' runs without it, with counts",
  middleware: [requireScope("read")] as const,
  request: { params: Name },
  responses: { 200: jsonResponse(StatsSchema, "Stats from the runs' receipts"), ...errorResponses(404) },
});

export const skillStatsRoutes = newRouter().openapi(stats, async (c) => {
  const { name } = c.req.valid("param");
  const workspaceId = c.get("principal").workspaceId;
  const db = makeDb(c.env.DB);
  const result = await skillStats(db, workspaceId, name, await similarWithoutSkill(c.env, workspaceId, name));
  if (result.runs === 0 && !(await getSkill(db, workspaceId, name)) && !(await builtinSkills()).has(name))
    throw notFound(`Skill '${name}'`);
  return c.json(result, 200);
});
