/**
 * `/api/plugins`: plugin packages (upload, Gitea sources), their state, and the management endpoints —
 * sync, enable, pause, resume, disable (with `disable_linked_skills: true`), adopt. Every mutation goes
 * through the workspace write lock (docs/skills-and-plugins.md, "Plugins"). No response names an R2 key
 * or server path.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { runLocked, runLockedMeasured } from "../../../domains/governance/client.ts";
import { archiveRequestBody, readArchiveBody } from "../archive-body.ts";
import { uploadPackage } from "../../../domains/governance/plugin-upload.ts";
import { listPluginsView } from "../../../domains/plugins/views.ts";
import { PLUGIN_ID_RE } from "../../../domains/plugins/manifest.ts";
import { deleteSource, fetchSource, listSources, putSource } from "../../../domains/governance/plugin-sources.ts";
import type { SyncResult, PluginSyncOutcome } from "../../../domains/plugins/sync.ts";
import { assertFieldSize } from "../../../storage/limits.ts";
import { synthesizePendingMerges } from "../../../domains/governance/learning-drafts.ts";
import { enforceQuota } from "../../../storage/quotas.ts";

const Any = z.record(z.string(), z.unknown());
const pluginId = z.string().regex(PLUGIN_ID_RE, "must be 1-64 lowercase letters, digits, '_' or '-'");
const Id = z.object({ id: pluginId });
const IdSkill = Id.extend({ skill: z.string().regex(/^[a-z0-9_-]{1,64}$/, "must be a skill name") });
const SourceId = z.object({ id: z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be 1-64 lowercase letters, digits, '_' or '-'") });
const repoPart = z.string().regex(/^[A-Za-z0-9_.-]{1,100}$/, "must be a Gitea owner or repository name");
const SourceBody = z.strictObject({
  owner: repoPart,
  repo: repoPart,
  ref: z
    .string()
    .regex(/^[A-Za-z0-9._/-]{1,200}$/, "must be a branch or tag name")
    .refine((r) => !r.includes(".."), "must not contain '..'")
    .default("main"),
});

const outcomeView = (o: PluginSyncOutcome) => ({
  plugin_id: o.pluginId,
  skipped: o.skipped,
  reconciled: o.reconciled,
  new_skills: o.newSkills,
  skills: o.skills.map((s) => ({
    skill: s.skill,
    action: s.action,
    status: s.status,
    candidate_id: s.candidateId,
    candidate_status: s.candidateStatus,
  })),
});
/** A sync result; `r2Writes` is given where it was measured for exactly this sync. */
const syncView = (r: SyncResult, r2Writes?: number) => ({
  plugins: r.plugins.map(outcomeView),
  ...(r2Writes === undefined ? {} : { r2_writes: r2Writes }),
});

/** The fields every plugin route shares: tag, summary, scope and the JSON 200 plus error responses. */
const common = (summary: string, scope: "read" | "admin", errors: (404 | 409 | 413 | 415 | 422 | 429 | 502 | 503)[] = [404, 409]) => ({
  tags: ["plugins"],
  summary,
  middleware: requireScope(scope),
  responses: { 200: jsonResponse(Any, summary), ...errorResponses(...errors) },
});

const list = createRoute({
  method: "get",
  path: "/",
  ...common("List plugins with their state, declared skills and current Beaver versions", "read", []),
});
const upload = createRoute({
  method: "put",
  path: "/packages",
  request: { body: archiveRequestBody },
  ...common(
    "Upload a plugin package (tar.gz or zip); records discovered plugins and upstream snapshots, enables nothing",
    "admin",
    [409, 413, 415, 422, 429],
  ),
});
const removePkg = createRoute({
  method: "delete",
  path: "/packages/{id}",
  request: { params: Id },
  ...common("Withdraw an uploaded package: an enabled plugin becomes missing (its skills stay active)", "admin"),
});
const sync = createRoute({
  method: "post",
  path: "/sync",
  request: { body: { required: false, content: { "application/json": { schema: z.strictObject({ plugin_id: pluginId.optional() }) } } } },
  ...common("Reconcile and sync enabled plugins (all, or one with plugin_id)", "admin"),
});
const enable = createRoute({
  method: "post",
  path: "/{id}/enable",
  request: { params: Id },
  ...common("Enable a plugin: mirror every declared skill as its next version, or none", "admin", [404, 409, 422]),
});
const pause = createRoute({
  method: "post",
  path: "/{id}/pause",
  request: { params: Id },
  ...common("Pause updates (linked skills stay active)", "admin"),
});
const resume = createRoute({
  method: "post",
  path: "/{id}/resume",
  request: { params: Id },
  ...common("Resume updates: reconcile and sync", "admin"),
});
const disable = createRoute({
  method: "post",
  path: "/{id}/disable",
  request: {
    params: Id,
    body: jsonBody(
      z.strictObject({ disable_linked_skills: z.literal(true, { error: "must be true to confirm that linked skills are disabled" }) }),
    ),
  },
  ...common("Disable a plugin and its linked skills (needs disable_linked_skills: true); nothing is deleted", "admin"),
});
const adopt = createRoute({
  method: "post",
  path: "/{id}/skills/{skill}/adopt",
  request: { params: IdSkill },
  ...common("Detach a skill from its plugin: it becomes managed and gets no more plugin updates", "admin"),
});
const sources = createRoute({
  method: "get",
  path: "/sources",
  ...common("List Gitea repositories configured as plugin sources", "read", []),
});
const putSrc = createRoute({
  method: "put",
  path: "/sources/{id}",
  request: { params: SourceId, body: jsonBody(SourceBody) },
  ...common("Configure a Gitea repository (owner, repo, ref) as a plugin source", "admin", [429]),
});
const delSrc = createRoute({
  method: "delete",
  path: "/sources/{id}",
  request: { params: SourceId },
  ...common("Remove a plugin source (its plugins stay as they are)", "admin"),
});
const fetchSrc = createRoute({
  method: "post",
  path: "/sources/{id}/fetch",
  request: { params: SourceId },
  ...common("Fetch the source's ref from Gitea now and record it", "admin", [404, 409, 413, 422, 502, 503]),
});

const sourceView = (s: Awaited<ReturnType<typeof listSources>>[number]) => ({
  id: s.id,
  owner: s.owner,
  repo: s.repo,
  ref: s.ref,
  last_fetched_at: s.lastFetchedAt,
  last_commit: s.lastCommit,
  last_status: s.lastStatus,
  last_error: s.lastError,
});

export const pluginRoutes = newRouter()
  .openapi(list, async (c) => c.json({ plugins: await listPluginsView(c.env, c.get("principal").workspaceId) }, 200))
  .openapi(sources, async (c) => c.json({ sources: (await listSources(c.env, c.get("principal").workspaceId)).map(sourceView) }, 200))
  .openapi(putSrc, async (c) => {
    const { id } = c.req.valid("param");
    const body = c.req.valid("json");
    const ws = c.get("principal").workspaceId;
    if (!(await listSources(c.env, ws)).some((s) => s.id === id)) await enforceQuota(c.env, ws, "plugin_sources");
    const r = await putSource(c.env, ws, id, body);
    return c.json({ id, ...body, created: r.created }, 200);
  })
  .openapi(delSrc, async (c) => {
    const { id } = c.req.valid("param");
    await deleteSource(c.env, c.get("principal").workspaceId, id);
    return c.json({ id, deleted: true }, 200);
  })
  .openapi(fetchSrc, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    const r = await fetchSource(c.env, p.workspaceId, id, { actor: p.tokenId });
    if ("missing" in r)
      return c.json(
        { source_id: id, outcome: "missing", missing_plugins: r.missing.missing, plugins: await listPluginsView(c.env, p.workspaceId) },
        200,
      );
    return c.json(
      {
        source_id: id,
        outcome: "recorded",
        recorded: r.recorded.plugins.map((x) => ({ id: x.id, package_status: x.packageStatus, changed: x.changed })),
        missing_plugins: r.recorded.missing,
        r2_writes: r.ingest.r2Writes,
        sync: r.sync === null || r.sync === "deferred" ? r.sync : syncView(r.sync),
      },
      200,
    );
  })
  .openapi(upload, async (c) => {
    const p = c.get("principal");
    const archive = await readArchiveBody(c);
    assertFieldSize(c.env, "archive", archive, "plugin_package_bytes");
    const r = await uploadPackage(c.env, p.workspaceId, archive, p.tokenId);
    const all = await listPluginsView(c.env, p.workspaceId);
    const ids = new Set(r.recorded.plugins.map((x) => x.id));
    return c.json(
      {
        plugins: all
          .filter((x) => ids.has(x.id))
          .map((x) => ({ ...x, changed: r.recorded.plugins.find((y) => y.id === x.id)?.changed ?? false })),
        ignored: r.ignored,
        r2_writes: r.r2Writes,
        blobs_written: r.blobsWritten,
        bytes_hashed: r.bytesHashed,
        hash_ms: Math.round(r.hashMs * 100) / 100,
      },
      200,
    );
  })
  .openapi(removePkg, async (c) => {
    const r = await runLocked(c.env, c.get("principal").workspaceId, { kind: "remove_package", pluginId: c.req.valid("param").id });
    return c.json({ plugin_id: r.id, package_status: r.packageStatus }, 200);
  })
  .openapi(sync, async (c) => {
    // The body is optional: without a JSON content type there is nothing to validate.
    const pluginIdArg = (c.req.header("Content-Type") ?? "").includes("json") ? c.req.valid("json").plugin_id : undefined;
    const p = c.get("principal");
    const { value, r2Writes } = await runLockedMeasured(c.env, p.workspaceId, {
      kind: "sync_plugins",
      ...(pluginIdArg ? { pluginId: pluginIdArg } : {}),
    });
    // Three-way updates are merged into drafts right after the lock is released (docs/learning.md); what
    // does not fit here is left to the learning cron job.
    const synthesis = await synthesizePendingMerges(c.env, p.workspaceId, { actor: p.tokenId });
    return c.json({ ...syncView(value, r2Writes), synthesis }, 200);
  })
  .openapi(enable, async (c) => {
    const p = c.get("principal");
    const { id } = c.req.valid("param");
    const { value: r, r2Writes } = await runLockedMeasured(c.env, p.workspaceId, { kind: "enable_plugin", pluginId: id, actor: p.tokenId });
    const [plugin] = await listPluginsView(c.env, p.workspaceId, id);
    return c.json(
      {
        plugin_id: id,
        changed: r.changed,
        mirrored: r.mirrored,
        restored: r.restored,
        sync: r.sync ? syncView(r.sync) : null,
        r2_writes: r2Writes,
        plugin: plugin ?? null,
      },
      200,
    );
  })
  .openapi(pause, async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, { kind: "pause_plugin", pluginId: c.req.valid("param").id });
    return c.json({ plugin_id: r.pluginId, changed: r.changed, updates_paused: true }, 200);
  })
  .openapi(resume, async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, { kind: "resume_plugin", pluginId: c.req.valid("param").id });
    return c.json({ plugin_id: r.pluginId, changed: r.changed, updates_paused: false, sync: outcomeView(r.sync) }, 200);
  })
  .openapi(disable, async (c) => {
    const p = c.get("principal");
    const r = await runLocked(c.env, p.workspaceId, { kind: "disable_plugin", pluginId: c.req.valid("param").id, actor: p.tokenId });
    return c.json({ plugin_id: r.pluginId, changed: r.changed, disabled_skills: r.disabledSkills }, 200);
  })
  .openapi(adopt, async (c) => {
    const p = c.get("principal");
    const { id, skill } = c.req.valid("param");
    const r = await runLocked(c.env, p.workspaceId, { kind: "adopt_skill", pluginId: id, skillName: skill, actor: p.tokenId });
    return c.json({ plugin_id: r.pluginId, skill: r.skill, source_kind: r.sourceKind }, 200);
  });
