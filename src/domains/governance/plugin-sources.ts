/**
 * Gitea repositories as plugin sources: their configuration rows, fetching an archive through
 * Gitea's API, and `recordUpstreamFromArchive` — the one entry point that turns archive bytes into
 * recorded upstream snapshots (and, if the plugin is enabled, tries a sync without waiting for the
 * lock; the cron tick syncs whatever was deferred, and fetches again what a busy workspace could not
 * record). `handleGiteaPushForPlugins` is the hook for the
 * toolchain's webhook intake: a push to a configured repository and ref fetches that commit.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { pluginSources } from "../../storage/db/schema.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { resolveSecret } from "../../storage/secrets/store.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { DEFAULT_ARCHIVE_LIMITS } from "../../storage/archive/index.ts";
import { runLocked, storeEpoch } from "./client.ts";
import type { LockMode } from "./workspace-do.ts";
import { EMPTY_PACKAGE, ingestPackage, type IngestedPackage } from "../plugins/ingest.ts";
import type { RecordPackageResult } from "../plugins/record.ts";
import type { SyncResult } from "../plugins/sync.ts";
import { fetchGiteaArchive } from "../plugins/gitea-archive.ts";
import { giteaConnectionOf } from "../gitea/connection.ts";
import { outboundFetch, type FetchFn } from "../../storage/outbound.ts";

export type PluginSourceRow = typeof pluginSources.$inferSelect;

export interface PluginSourceInput {
  owner: string;
  repo: string;
  ref: string;
}

export async function listSources(env: Env, workspaceId: string): Promise<PluginSourceRow[]> {
  return makeDb(env.DB).select().from(pluginSources).where(eq(pluginSources.workspaceId, workspaceId)).orderBy(pluginSources.id).all();
}

export async function getSource(env: Env, workspaceId: string, id: string): Promise<PluginSourceRow | undefined> {
  return makeDb(env.DB)
    .select()
    .from(pluginSources)
    .where(and(eq(pluginSources.workspaceId, workspaceId), eq(pluginSources.id, id)))
    .get();
}

export async function putSource(env: Env, workspaceId: string, id: string, input: PluginSourceInput): Promise<{ created: boolean }> {
  const existing = await getSource(env, workspaceId, id);
  const now = Date.now();
  await makeDb(env.DB)
    .insert(pluginSources)
    .values({ workspaceId, id, ...input, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [pluginSources.workspaceId, pluginSources.id], set: { ...input, updatedAt: now } })
    .run();
  return { created: !existing };
}

export async function deleteSource(env: Env, workspaceId: string, id: string): Promise<void> {
  const gone = await makeDb(env.DB)
    .delete(pluginSources)
    .where(and(eq(pluginSources.workspaceId, workspaceId), eq(pluginSources.id, id)))
    .returning({ id: pluginSources.id })
    .all();
  if (gone.length === 0) throw notFound(`Plugin source '${id}'`);
}

export interface UpstreamMeta {
  commit?: string;
  actor: string;
  /** How recording waits for the workspace lock: the cron's retries only try. */
  lock?: LockMode;
}

export interface RecordedUpstream {
  recorded: RecordPackageResult;
  ingest: Pick<IngestedPackage, "r2Writes" | "blobsWritten" | "ignored">;
  /** The follow-up sync: its result, or `deferred` when the lock was busy (cron picks it up). */
  sync: SyncResult | "deferred" | null;
}

async function markSource(env: Env, workspaceId: string, id: string, set: Partial<PluginSourceRow>): Promise<void> {
  await makeDb(env.DB)
    .update(pluginSources)
    .set({ ...set, updatedAt: Date.now() })
    .where(and(eq(pluginSources.workspaceId, workspaceId), eq(pluginSources.id, id)))
    .run();
}

/**
 * Record a new upstream snapshot of every plugin in `archiveBytes`, fetched from the Gitea source
 * `pluginSourceId`. Parsing, hashing and storing happen before the lock; recording takes it.
 */
export async function recordUpstreamFromArchive(
  env: Env,
  workspaceId: string,
  pluginSourceId: string,
  archiveBytes: Uint8Array,
  meta: UpstreamMeta,
): Promise<RecordedUpstream> {
  if (!(await getSource(env, workspaceId, pluginSourceId))) throw notFound(`Plugin source '${pluginSourceId}'`);
  try {
    const epochBefore = await storeEpoch(env, workspaceId);
    // A repository that no longer holds a plugin manifest provides no plugins: its plugins go missing.
    const pkg = await ingestPackage(env, workspaceId, archiveBytes, "empty");
    const recorded = await runLocked(
      env,
      workspaceId,
      { kind: "record_package", epoch: epochBefore, input: { origin: "gitea", sourceId: pluginSourceId, pkg, actor: meta.actor } },
      meta.lock,
    );
    await markSource(env, workspaceId, pluginSourceId, {
      lastFetchedAt: Date.now(),
      lastCommit: meta.commit ?? null,
      lastStatus: "ok",
      lastError: null,
    });
    let sync: RecordedUpstream["sync"] = null;
    if (recorded.plugins.some((p) => p.enabled && p.changed) || recorded.missing.length > 0) {
      try {
        sync = await runLocked(env, workspaceId, { kind: "sync_plugins" }, "try");
      } catch (e) {
        if (!(e instanceof AppError && e.code === "busy")) throw e;
        sync = "deferred";
      }
    }
    return { recorded, ingest: { r2Writes: pkg.r2Writes, blobsWritten: pkg.blobsWritten, ignored: pkg.ignored }, sync };
  } catch (e) {
    const message = e instanceof Error ? e.message : String(e);
    // A busy workspace is no fault of the source: the cron fetches the same commit again.
    const lastStatus = e instanceof AppError && e.code === "busy" ? "deferred" : "error";
    await markSource(env, workspaceId, pluginSourceId, {
      lastFetchedAt: Date.now(),
      lastCommit: meta.commit ?? null,
      lastStatus,
      lastError: message.slice(0, 1000),
    });
    throw e;
  }
}

/** A source whose repository or ref is gone: its plugins become `missing` (current skills stay). */
async function recordSourceMissing(
  env: Env,
  workspaceId: string,
  pluginSourceId: string,
  actor: string,
  lock?: LockMode,
): Promise<RecordPackageResult> {
  const recorded = await runLocked(
    env,
    workspaceId,
    {
      kind: "record_package",
      epoch: await storeEpoch(env, workspaceId),
      input: { origin: "gitea", sourceId: pluginSourceId, pkg: EMPTY_PACKAGE, actor },
    },
    lock,
  );
  await markSource(env, workspaceId, pluginSourceId, {
    lastFetchedAt: Date.now(),
    lastStatus: "error",
    lastError: "repository or ref not found (404)",
  });
  return recorded;
}

async function giteaSettings(env: Env, workspaceId: string): Promise<{ baseUrl: string; token?: string; timeoutMs: number }> {
  const connection = giteaConnectionOf(await loadConfig(env, workspaceId));
  if (!connection)
    throw new AppError(
      "unprocessable",
      "No Gitea configured: set toolchain.gitea_base_url (and toolchain.gitea_token_secret) in the workspace configuration",
    );
  const token = connection.tokenSecret ? await resolveSecret(env, workspaceId, connection.tokenSecret) : undefined;
  return { baseUrl: connection.baseUrl, ...(token ? { token } : {}), timeoutMs: connection.timeoutMs };
}

/** Fetch `ref` (default: the source's configured ref) of a source's repository and record it. */
export async function fetchSource(
  env: Env,
  workspaceId: string,
  sourceId: string,
  opts: { ref?: string; actor: string; fetchImpl?: FetchFn; lock?: LockMode },
): Promise<RecordedUpstream | { missing: RecordPackageResult }> {
  const source = await getSource(env, workspaceId, sourceId);
  if (!source) throw notFound(`Plugin source '${sourceId}'`);
  const settings = await giteaSettings(env, workspaceId);
  const ref = opts.ref ?? source.ref;
  const got = await fetchGiteaArchive(
    { ...settings, owner: source.owner, repo: source.repo, ref, maxBytes: DEFAULT_ARCHIVE_LIMITS.maxArchiveBytes },
    opts.fetchImpl ?? outboundFetch(env),
  );
  if (got.status === "not_found") return { missing: await recordSourceMissing(env, workspaceId, sourceId, opts.actor, opts.lock) };
  return recordUpstreamFromArchive(env, workspaceId, sourceId, got.bytes, {
    commit: ref,
    actor: opts.actor,
    ...(opts.lock ? { lock: opts.lock } : {}),
  });
}

/** What the toolchain's webhook intake hands over for a `push` event (a subset of Gitea's payload). */
export interface GiteaPushPayload {
  ref?: string;
  after?: string;
  repository?: { full_name?: string; name?: string; owner?: { login?: string; username?: string } };
}

export interface PushHandled {
  sourceId: string;
  outcome: "recorded" | "missing" | "error";
  message?: string;
}

/**
 * The plugin side of a Gitea `push`: for every source watching that repository and branch, fetch
 * the pushed commit's archive and record it. Never throws: failures are returned (and kept on the
 * source row), so the webhook delivery itself still succeeds.
 */
export async function handleGiteaPushForPlugins(
  env: Env,
  workspaceId: string,
  payload: GiteaPushPayload,
  fetchImpl?: FetchFn,
): Promise<PushHandled[]> {
  const fullName = payload.repository?.full_name?.toLowerCase();
  const branch = payload.ref?.replace(/^refs\/(heads|tags)\//, "");
  if (!fullName || !branch || !payload.after || /^0+$/.test(payload.after)) return [];
  const sources = (await listSources(env, workspaceId)).filter(
    (s) => `${s.owner}/${s.repo}`.toLowerCase() === fullName && s.ref === branch,
  );
  const out: PushHandled[] = [];
  for (const s of sources) {
    try {
      const r = await fetchSource(env, workspaceId, s.id, { ref: payload.after, actor: "gitea-push", ...(fetchImpl ? { fetchImpl } : {}) });
      out.push({ sourceId: s.id, outcome: "missing" in r ? "missing" : "recorded" });
    } catch (e) {
      out.push({ sourceId: s.id, outcome: "error", message: e instanceof Error ? e.message : String(e) });
    }
  }
  return out;
}

/**
 * The hook the webhook route calls for an authenticated, first-time `push` delivery: parse the raw
 * body and hand it to `handleGiteaPushForPlugins`. Never throws (it runs in `waitUntil`).
 */
export async function handleGiteaPushDelivery(
  env: Env,
  workspaceId: string,
  body: Uint8Array,
  fetchImpl?: FetchFn,
): Promise<PushHandled[]> {
  try {
    const payload = JSON.parse(new TextDecoder().decode(body)) as GiteaPushPayload;
    const handled = await handleGiteaPushForPlugins(env, workspaceId, payload, fetchImpl);
    for (const h of handled)
      if (h.outcome === "error")
        log.error("plugin source push failed", { workspace_id: workspaceId, source_id: h.sourceId, message: h.message });
    return handled;
  } catch (e) {
    log.error("plugin push hook failed", { workspace_id: workspaceId, ...errorFields(e) });
    return [];
  }
}
