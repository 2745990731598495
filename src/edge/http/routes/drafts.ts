/**
 * `/api/drafts`: reviewing and publishing skill drafts (docs/learning.md, "Review API") — list, one
 * draft with its diffs, merge decisions, preservation and safety reports, and the decisions: approve
 * (through the gates, published under the workspace lock), reject (with a reason), regenerate (a new
 * merge attempt superseding the draft). Reads need the `read` scope, decisions `member`. The replay
 * evaluation's routes live beside these, in their own module.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { hasScope, requireScope } from "../auth.ts";
import { DRAFT_STATUSES, draftDetail, draftSummary, listDraftPage } from "../../../domains/learning/draft-views.ts";
import { latestEvaluationVerdict } from "../../../domains/learning/evaluation/client.ts";
import { approveDraft, regenerateDraft, rejectDraftService, requireDraft } from "../../../domains/governance/learning-drafts.ts";
import { limitsOf } from "../../../storage/limits.ts";

const Any = z.record(z.string(), z.unknown());
const DraftId = z.object({ id: z.string().regex(/^[A-Za-z0-9_-]{1,80}$/, "must be a draft id") });

const ApproveBody = z
  .strictObject({
    skip_evaluation: z.boolean().default(false).describe("Approve without an evaluation verdict (needs a reason, recorded in provenance)"),
    reason: z.string().trim().min(1).max(2_000).optional(),
    acknowledge: z
      .array(z.string().min(1).max(100))
      .max(100)
      .optional()
      .describe("Ids of the sensitive changes the reviewer acknowledges (dropped upstream additions, Safety / Required Tools sections)"),
    override_regression: z
      .boolean()
      .default(false)
      .describe("Approve over a failed (regressed) evaluation: admin scope and a reason, recorded in provenance"),
  })
  .refine((b) => !b.skip_evaluation || b.reason !== undefined, { message: "skip_evaluation needs a reason", path: ["reason"] })
  .refine((b) => !b.override_regression || b.reason !== undefined, { message: "override_regression needs a reason", path: ["reason"] });

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["drafts"],
  summary: "List skill drafts, newest first (filter by skill and status)",
  middleware: requireScope("read"),
  request: {
    query: z.object({
      skill: z
        .string()
        .regex(/^[a-z0-9_-]{1,64}$/, "must be a skill name")
        .optional(),
      status: z.enum(DRAFT_STATUSES).optional(),
      before: z.coerce.number().int().positive().optional(),
      /** With `before`: the id of the last draft of the previous page. */
      before_id: z.string().min(1).max(200).optional(),
      limit: z.coerce.number().int().min(1).max(200).default(50),
    }),
  },
  responses: {
    200: jsonResponse(
      z.object({ drafts: z.array(Any), next_before: z.number().nullable(), next_before_id: z.string().nullable() }),
      "Drafts; pass next_before and next_before_id to continue (null: nothing more)",
    ),
    ...errorResponses(),
  },
});

const get = createRoute({
  method: "get",
  path: "/{id}",
  tags: ["drafts"],
  summary: "One draft: diffs against the current version and the upstream, merge decisions, preservation and safety reports",
  middleware: requireScope("read"),
  request: { params: DraftId },
  responses: { 200: jsonResponse(Any, "The draft"), ...errorResponses(404) },
});

const approve = createRoute({
  method: "post",
  path: "/{id}/approve",
  tags: ["drafts"],
  summary:
    "Approve a draft: the gates (safety, evaluation, confidence), then publish it as the skill's next version under the workspace lock; " +
    '409 evaluation_required without an evaluation unless { "skip_evaluation": true, "reason": "…" }',
  middleware: requireScope("member"),
  request: { params: DraftId, body: { required: false, content: { "application/json": { schema: ApproveBody } } } },
  responses: { 200: jsonResponse(Any, "Published"), ...errorResponses(404, 409, 422) },
});

const reject = createRoute({
  method: "post",
  path: "/{id}/reject",
  tags: ["drafts"],
  summary: "Reject a draft (with a reason); the plugin package, snapshots, current skill and history stay",
  middleware: requireScope("member"),
  request: { params: DraftId, body: jsonBody(z.strictObject({ reason: z.string().trim().min(1).max(2_000) })) },
  responses: { 200: jsonResponse(Any, "Rejected"), ...errorResponses(404, 409) },
});

const regenerate = createRoute({
  method: "post",
  path: "/{id}/regenerate",
  tags: ["drafts"],
  summary: "A new merge attempt for a three-way plugin-update draft: a new draft that supersedes this one",
  middleware: requireScope("member"),
  request: { params: DraftId },
  responses: { 200: jsonResponse(Any, "The new draft"), ...errorResponses(404, 409, 422) },
});

export const draftRoutes = newRouter()
  .openapi(list, async (c) => {
    const q = c.req.valid("query");
    const rows = await listDraftPage(c.env, c.get("principal").workspaceId, {
      skill: q.skill,
      status: q.status,
      before: q.before,
      beforeId: q.before_id,
      limit: q.limit,
    });
    // Summaries are small and bounded; the page budget still applies (docs/limits.md).
    const budget = limitsOf(c.env).list_page_bytes;
    const drafts: ReturnType<typeof draftSummary>[] = [];
    let used = 0;
    for (const r of rows) {
      const view = draftSummary(r);
      used += JSON.stringify(view).length;
      if (used > budget && drafts.length > 0) break;
      drafts.push(view);
    }
    const full = drafts.length === q.limit || drafts.length < rows.length;
    const last = full ? rows[drafts.length - 1] : undefined;
    return c.json({ drafts, next_before: last?.createdAt ?? null, next_before_id: last?.id ?? null }, 200);
  })
  .openapi(get, async (c) => {
    const ws = c.get("principal").workspaceId;
    const draft = await requireDraft(c.env, ws, c.req.valid("param").id);
    return c.json(await draftDetail(c.env, ws, draft), 200);
  })
  .openapi(approve, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    const body = (c.req.header("Content-Type") ?? "").includes("json")
      ? c.req.valid("json")
      : { skip_evaluation: false, override_regression: false, reason: undefined, acknowledge: undefined };
    const verdict = await latestEvaluationVerdict(c.env, p.workspaceId, id);
    const r = await approveDraft(
      c.env,
      p.workspaceId,
      id,
      {
        actor: p.tokenId,
        skipEvaluation: body.skip_evaluation,
        reason: body.reason,
        acknowledge: body.acknowledge ?? [],
        overrideRegression: body.override_regression,
        isAdmin: hasScope(p, "admin"),
      },
      verdict,
    );
    return c.json(
      { draft_id: id, status: "published", skill: r.skill, version: r.version, plugin_state_updated: r.pluginStateUpdated, gates: r.gates },
      200,
    );
  })
  .openapi(reject, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    const { reason } = c.req.valid("json");
    const r = await rejectDraftService(c.env, p.workspaceId, id, reason, p.tokenId);
    return c.json({ draft_id: id, status: r.status, reason }, 200);
  })
  .openapi(regenerate, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    const r = await regenerateDraft(c.env, p.workspaceId, id, { actor: p.tokenId });
    const draft = await requireDraft(c.env, p.workspaceId, r.draftId);
    return c.json({ superseded: id, draft: draftSummary(draft) }, 200);
  });
