/** `GET /api/usage`: the workspace's token usage by day, model, agent and session (docs/console.md, "Usage"). */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { usageReport } from "../../../runtime/index.ts";

const Row = z
  .object({
    key: z.string().describe("The day (YYYY-MM-DD, UTC), model, agent id ('chat' for sessions without one) or session id"),
    label: z.string().nullable().optional().describe("Sessions: the title"),
    runs: z.number(),
    input_tokens: z.number(),
    output_tokens: z.number(),
    total_tokens: z.number(),
  })
  .openapi("UsageRow");

const report = createRoute({
  method: "get",
  path: "/",
  tags: ["usage"],
  summary: "Token usage of the workspace's ended runs over the last days: by day, model, agent and the heaviest sessions",
  middleware: [requireScope("read")] as const,
  request: {
    query: z.strictObject({
      days: z.coerce.number().int().min(1).max(366).default(30),
      sessions: z.coerce.number().int().min(1).max(100).default(20).describe("How many of the heaviest sessions"),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ since: z.number(), days: z.array(Row), models: z.array(Row), agents: z.array(Row), sessions: z.array(Row) }),
      "Usage",
    ),
    ...errorResponses(),
  },
});

export const usageRoutes = newRouter().openapi(report, async (c) => {
  const q = c.req.valid("query");
  return c.json(await usageReport(c.env, c.get("principal").workspaceId, q.days, q.sessions), 200);
});
