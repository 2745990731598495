/**
 * `/api/candidates`: the workspace's learning candidates of every kind (docs/learning.md, "Candidates
 * API") — the console's Candidates tab reads it — and `POST /api/candidates/run`, which runs the
 * evidence pass (detection of improvement and new-skill candidates, their drafts and evaluations) for
 * this workspace now instead of at the next cron tick. Listing needs `read`, running `admin`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { CANDIDATE_KINDS, CANDIDATE_STATUSES, listCandidatePage } from "../../../domains/learning/candidate-views.ts";
import { runEvidencePass } from "../../../domains/governance/evidence-cron.ts";

const Any = z.record(z.string(), z.unknown());

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["drafts"],
  summary: "Learning candidates of every kind (plugin updates, improvements, new skills), newest first",
  middleware: requireScope("read"),
  request: {
    query: z.object({
      kind: z.enum(CANDIDATE_KINDS).optional(),
      status: z.enum(CANDIDATE_STATUSES).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
  },
  responses: { 200: jsonResponse(z.object({ candidates: z.array(Any) }), "Candidates"), ...errorResponses() },
});

const run = createRoute({
  method: "post",
  path: "/run",
  tags: ["drafts"],
  summary:
    "Run the evidence pass now: record improvement and new-skill candidates under the workspace lock, draft up to 2 pending ones " +
    "with the auxiliary model and start their evaluations",
  middleware: requireScope("admin"),
  responses: { 200: jsonResponse(Any, "What the pass recorded, drafted and skipped"), ...errorResponses(409) },
});

export const candidateRoutes = newRouter()
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    return c.json({ candidates: await listCandidatePage(c.env, c.get("principal").workspaceId, q) }, 200);
  })
  .openapi(run, async (c) => {
    const p = c.get("principal");
    return c.json(await runEvidencePass(c.env, p.workspaceId, Date.now(), { lock: "wait", actor: p.tokenId }), 200);
  });
