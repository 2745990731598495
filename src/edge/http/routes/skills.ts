/**
 * `/api/skills`: the governed skill store. Create or update a managed skill (JSON files or an
 * archive), list, read (current version, frontmatter, provenance, source kind), versions, one file,
 * roll back, disable/enable, and the orphan collector. Writes go through the workspace lock. A new
 * skill counts against the workspace's skills quota, checked before the lock (docs/limits.md).
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { beforeDeadline, runLocked, startLockBudget } from "../../../domains/governance/client.ts";
import type { LockBudget } from "../../../domains/governance/lock-budget.ts";
import { decodeText } from "../../../domains/skills/safety.ts";
import { archiveRequestBody, readArchiveBody } from "../archive-body.ts";
import { filesFromArchive, filesFromJson, publishSkillFiles } from "../../../domains/governance/skill-intake.ts";
import { proposeSkillDraft } from "../../../domains/governance/learning-drafts.ts";
import type { TreeFile } from "../../../kernel/content-tree/hashing.ts";
import { getSkill } from "../../../domains/skills/store.ts";
import { makeDb } from "../../../storage/db/client.ts";
import { enforceQuota } from "../../../storage/quotas.ts";
import type { Env } from "../../../storage/env.ts";
import {
  candidatesView,
  listSkillsView,
  listVersionsView,
  readVersionFile,
  skillDetailView,
  versionDetailView,
} from "../../../domains/skills/views.ts";

const Name = z.object({ name: z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be 1-64 lowercase letters, digits, '_' or '-'") });
const NameVersion = Name.extend({ version: z.string().regex(/^v\d{4,}$/, "must look like v0001") });
/** A file's version: a stored one, or `builtin` for a builtin skill's bundled files. */
const NameFileVersion = Name.extend({
  version: z.string().regex(/^(v\d{4,}|builtin)$/, "must look like v0001, or be builtin"),
});
const Any = z.record(z.string(), z.unknown());

const FileInput = z.strictObject({
  path: z.string().min(1).max(512),
  content: z.string(),
  encoding: z.enum(["utf8", "base64"]).default("utf8"),
  executable: z.boolean().default(false),
});
/** `?draft=true`: record the upload as a draft for review instead of publishing it (docs/learning.md). */
const DraftQuery = z.object({
  draft: z.enum(["true", "false"]).optional().describe("true: record a draft for review (GET /api/drafts/{id}) instead of publishing"),
});

const PutSkillBody = z.strictObject({
  files: z.array(FileInput).min(1).max(1000),
  if_current_version: z
    .string()
    .regex(/^v\d{4,}$/)
    .optional(),
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["skills"],
  summary: "List skills: workspace skills (managed and plugin-origin) and builtin skills they do not shadow",
  middleware: [requireScope("read")] as const,
  responses: { 200: jsonResponse(z.object({ skills: z.array(Any) }), "Skills"), ...errorResponses() },
});

const put = createRoute({
  method: "put",
  path: "/{name}",
  tags: ["skills"],
  summary: "Create or update a managed skill from JSON files (publishes the next version; identical content publishes nothing)",
  middleware: [requireScope("member")] as const,
  request: { params: Name, query: DraftQuery, body: jsonBody(PutSkillBody) },
  responses: { 200: jsonResponse(Any, "Published (or unchanged), or the draft recorded"), ...errorResponses(409, 413, 415, 422, 429) },
});

const upload = createRoute({
  method: "put",
  path: "/{name}/upload",
  tags: ["skills"],
  summary: "Create or update a managed skill from a tar.gz or zip (SKILL.md at the root or in one top folder)",
  middleware: [requireScope("member")] as const,
  request: { params: Name, query: DraftQuery, body: archiveRequestBody },
  responses: { 200: jsonResponse(Any, "Published (or unchanged), or the draft recorded"), ...errorResponses(409, 413, 415, 422, 429) },
});

const get = createRoute({
  method: "get",
  path: "/{name}",
  tags: ["skills"],
  summary: "A skill: current version, frontmatter, provenance, source kind, files",
  middleware: [requireScope("read")] as const,
  request: { params: Name },
  responses: { 200: jsonResponse(Any, "Skill"), ...errorResponses(404) },
});

const versions = createRoute({
  method: "get",
  path: "/{name}/versions",
  tags: ["skills"],
  summary: "All versions of a skill, newest first",
  middleware: [requireScope("read")] as const,
  request: { params: Name },
  responses: { 200: jsonResponse(Any, "Versions"), ...errorResponses(404) },
});

const version = createRoute({
  method: "get",
  path: "/{name}/versions/{version}",
  tags: ["skills"],
  summary: "One version with its frontmatter, provenance, safety report and files",
  middleware: [requireScope("read")] as const,
  request: { params: NameVersion },
  responses: { 200: jsonResponse(Any, "Version"), ...errorResponses(404) },
});

const file = createRoute({
  method: "get",
  path: "/{name}/versions/{version}/file",
  tags: ["skills"],
  summary: "The bytes of one file of a version (version `builtin`: a builtin skill's file)",
  middleware: [requireScope("read")] as const,
  request: { params: NameFileVersion, query: z.object({ path: z.string().min(1).max(512) }) },
  responses: { 200: { description: "File bytes (text/plain for UTF-8 text, else application/octet-stream)" }, ...errorResponses(404) },
});

const rollback = createRoute({
  method: "post",
  path: "/{name}/rollback",
  tags: ["skills"],
  summary: "Point the skill's current version at an earlier one; nothing is deleted",
  middleware: [requireScope("admin")] as const,
  request: { params: Name, body: jsonBody(z.strictObject({ version: z.string().regex(/^v\d{4,}$/, "must look like v0001") })) },
  responses: { 200: jsonResponse(Any, "Rolled back"), ...errorResponses(404, 409) },
});

const statusRoute = (action: "disable" | "enable") =>
  createRoute({
    method: "post",
    path: `/{name}/${action}`,
    tags: ["skills"],
    summary: action === "disable" ? "Disable a skill (no longer resolved; versions kept)" : "Enable a disabled skill",
    middleware: [requireScope("admin")] as const,
    request: { params: Name },
    responses: { 200: jsonResponse(Any, "Status"), ...errorResponses(404, 409) },
  });

const candidates = createRoute({
  method: "get",
  path: "/{name}/candidates",
  tags: ["skills"],
  summary: "Learning candidates and drafts of a skill (plugin updates: fast_forward drafts, three_way candidates)",
  middleware: [requireScope("read")] as const,
  request: { params: Name },
  responses: { 200: jsonResponse(Any, "Candidates and drafts"), ...errorResponses(404) },
});

const gc = createRoute({
  method: "post",
  path: "/_gc",
  tags: ["skills"],
  summary: "Collect orphaned blobs and trees (unreferenced and untouched for grace_seconds)",
  middleware: [requireScope("admin")] as const,
  request: {
    body: jsonBody(
      z.strictObject({
        grace_seconds: z
          .number()
          .int()
          .min(0)
          .max(30 * 86_400)
          .default(3600),
      }),
    ),
  },
  responses: { 200: jsonResponse(Any, "What was removed"), ...errorResponses(409) },
});

/**
 * A skill the workspace does not hold yet counts against its quota. Checked outside the lock: new skills
 * published at the same moment can overshoot the quota by their number (docs/limits.md). The count
 * spends the write's lock budget (a busy workspace answers 409 within its bound, lock-budget.ts).
 */
async function enforceSkillQuota(env: Env, workspaceId: string, name: string, budget: LockBudget): Promise<void> {
  await beforeDeadline(budget, "quota", async () => {
    if (!(await getSkill(makeDb(env.DB), workspaceId, name))) await enforceQuota(env, workspaceId, "skills");
  });
}

/** An upload marked as a draft: validated, safety-checked and stored, recorded for review, not published. */
async function uploadDraft(
  env: Env,
  workspaceId: string,
  name: string,
  files: TreeFile[],
  actor: string,
  source: "json" | "archive",
  budget: LockBudget,
) {
  const r = await proposeSkillDraft(env, workspaceId, {
    budget,
    skillName: name,
    files,
    proposalKind: "upload_draft",
    actor,
    provenance: { source },
  });
  return { name, draft_id: r.draftId, status: r.status, tree_hash: r.tree_hash, safety: r.safety };
}

export const skillRoutes = newRouter()
  .openapi(list, async (c) => c.json({ skills: await listSkillsView(c.env, c.get("principal").workspaceId) }, 200))
  .openapi(gc, async (c) => {
    const r = await runLocked(c.env, c.get("principal").workspaceId, {
      kind: "collect_garbage",
      now: Date.now(),
      graceMs: c.req.valid("json").grace_seconds * 1000,
    });
    return c.json({ trees_deleted: r.treesDeleted, blobs_deleted: r.blobsDeleted, unindexed_deleted: r.unindexedDeleted }, 200);
  })
  .openapi(put, async (c) => {
    const { name } = c.req.valid("param");
    const body = c.req.valid("json");
    const p = c.get("principal");
    const budget = startLockBudget(c.env);
    await enforceSkillQuota(c.env, p.workspaceId, name, budget);
    if (c.req.valid("query").draft === "true")
      return c.json(await uploadDraft(c.env, p.workspaceId, name, filesFromJson(body.files), p.tokenId, "json", budget), 200);
    const res = await publishSkillFiles(c.env, p.workspaceId, name, filesFromJson(body.files), {
      actor: p.tokenId,
      source: "json",
      budget,
      ...(body.if_current_version ? { ifCurrentVersion: body.if_current_version } : {}),
    });
    return c.json(res, 200);
  })
  .openapi(upload, async (c) => {
    const { name } = c.req.valid("param");
    const p = c.get("principal");
    const files = await filesFromArchive(await readArchiveBody(c));
    // Started once the upload is read: the budget bounds waiting for the workspace, not the client's upload.
    const budget = startLockBudget(c.env);
    await enforceSkillQuota(c.env, p.workspaceId, name, budget);
    if (c.req.valid("query").draft === "true")
      return c.json(await uploadDraft(c.env, p.workspaceId, name, files, p.tokenId, "archive", budget), 200);
    const ifCurrent = c.req.header("If-Match")?.replace(/"/g, "");
    return c.json(
      await publishSkillFiles(c.env, p.workspaceId, name, files, {
        actor: p.tokenId,
        source: "archive",
        budget,
        ...(ifCurrent ? { ifCurrentVersion: ifCurrent } : {}),
      }),
      200,
    );
  })
  .openapi(get, async (c) => c.json(await skillDetailView(c.env, c.get("principal").workspaceId, c.req.valid("param").name), 200))
  .openapi(versions, async (c) => c.json(await listVersionsView(c.env, c.get("principal").workspaceId, c.req.valid("param").name), 200))
  .openapi(version, async (c) => {
    const { name, version: label } = c.req.valid("param");
    return c.json(await versionDetailView(c.env, c.get("principal").workspaceId, name, label), 200);
  })
  .openapi(file, async (c) => {
    const { name, version: label } = c.req.valid("param");
    const { bytes, entry } = await readVersionFile(c.env, c.get("principal").workspaceId, name, label, c.req.valid("query").path);
    const text = decodeText(new Uint8Array(bytes)) !== null;
    return c.body(bytes, 200, {
      "Content-Type": text ? "text/plain; charset=utf-8" : "application/octet-stream",
      ETag: `"${entry.sha256}"`,
      "X-Beaver-Executable": entry.executable ? "true" : "false",
    });
  })
  .openapi(rollback, async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, {
      kind: "rollback_skill",
      name: c.req.valid("param").name,
      version: c.req.valid("json").version,
      actor: p.tokenId,
    });
    return c.json({ name: r.name, current_version: r.version, previous_version: r.previous }, 200);
  })
  .openapi(statusRoute("disable"), async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, {
      kind: "set_skill_status",
      name: c.req.valid("param").name,
      status: "disabled",
      actor: p.tokenId,
    });
    return c.json(r, 200);
  })
  .openapi(statusRoute("enable"), async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, {
      kind: "set_skill_status",
      name: c.req.valid("param").name,
      status: "active",
      actor: p.tokenId,
    });
    return c.json(r, 200);
  })
  .openapi(candidates, async (c) => c.json(await candidatesView(c.env, c.get("principal").workspaceId, c.req.valid("param").name), 200));
