/**
 * Recording a received package under the workspace lock: each plugin it declares becomes (or
 * updates) a discovered plugin row — never an enabled one — and each valid skill tree becomes an
 * immutable upstream snapshot. A plugin id already provided by another origin is refused; plugins
 * that a Gitea source no longer provides are marked `missing`.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { plugins, upstreamSnapshots } from "../../storage/db/schema.ts";
import { AppError } from "../../kernel/errors.ts";
import { sha256Hex } from "../../kernel/hash.ts";
import type { EnsureStored } from "../skills/publish.ts";
import { runBatch, type Statement } from "../skills/batch.ts";
import type { IngestedPackage, PackagePluginRecord } from "./ingest.ts";
import { getPlugin, listPluginRows, updatePlugin } from "./state.ts";

export interface RecordPackageInput {
  origin: "upload" | "gitea";
  sourceId: string | null;
  pkg: IngestedPackage;
  actor: string;
}

export interface RecordedPlugin {
  id: string;
  packageStatus: "present" | "invalid";
  changed: boolean;
  enabled: boolean;
}

export interface RecordPackageResult {
  plugins: RecordedPlugin[];
  missing: string[];
}

/** Identity of a package's content for one plugin: version, skills and their trees, validity. */
export async function packageDigest(p: PackagePluginRecord): Promise<string> {
  return sha256Hex(
    JSON.stringify({
      v: p.version,
      s: p.skills.map((s) => [s.name, s.path, s.treeHash]),
      e: p.problems.map((x) => [x.path, x.field ?? "", x.message]),
    }),
  );
}

const originLabel = (origin: string, sourceId: string | null) => (origin === "gitea" ? `Gitea source '${sourceId}'` : "upload");

export async function recordPackage(
  env: Env,
  workspaceId: string,
  input: RecordPackageInput,
  ensureStored: EnsureStored,
): Promise<RecordPackageResult> {
  const db = makeDb(env.DB);
  const conflicts: { plugin_id: string; provided_by: string }[] = [];
  const existing = new Map<string, Awaited<ReturnType<typeof getPlugin>>>();
  for (const p of input.pkg.plugins) {
    const row = await getPlugin(db, workspaceId, p.id);
    existing.set(p.id, row);
    if (row && (row.origin !== input.origin || row.sourceId !== input.sourceId))
      conflicts.push({ plugin_id: p.id, provided_by: originLabel(row.origin, row.sourceId) });
  }
  if (conflicts.length > 0) {
    throw new AppError(
      "conflict",
      `Plugin '${conflicts[0]!.plugin_id}' is already provided by ${conflicts[0]!.provided_by}; remove that package first`,
      { details: { conflicts } },
    );
  }
  for (const p of input.pkg.plugins) for (const s of p.skills) await ensureStored(s.treeHash);

  const now = Date.now();
  const results: RecordedPlugin[] = [];
  const statements: Statement[] = [];
  for (const p of input.pkg.plugins) {
    const digest = await packageDigest(p);
    const row = existing.get(p.id);
    const changed = !row || row.packageDigest !== digest || row.packageStatus === "missing";
    const status = p.problems.length > 0 ? "invalid" : "present";
    results.push({ id: p.id, packageStatus: status, changed, enabled: row?.enabled ?? false });
    const discovered = {
      name: p.name,
      description: p.description,
      manifestKind: p.manifestKind,
      manifestPath: `plugins/${p.id}/${p.manifestPath}`,
      packageStatus: status,
      packageErrors: JSON.stringify(p.problems),
      packageWarnings: JSON.stringify(p.warnings),
      discoveredVersion: p.version,
      discoveredSkills: JSON.stringify(p.skills),
      packageDigest: digest,
      discoveredAt: changed ? now : (row?.discoveredAt ?? now),
      updatedAt: now,
    };
    statements.push(
      db
        .insert(plugins)
        .values({
          workspaceId,
          id: p.id,
          origin: input.origin,
          sourceId: input.sourceId,
          enabled: false,
          updatesPaused: false,
          ...discovered,
        })
        .onConflictDoUpdate({ target: [plugins.workspaceId, plugins.id], set: discovered }),
    );
    for (const s of p.skills) {
      statements.push(
        db
          .insert(upstreamSnapshots)
          .values({
            workspaceId,
            pluginId: p.id,
            skillName: s.name,
            treeHash: s.treeHash,
            contentHash: s.contentHash,
            pluginVersion: p.version,
            sourcePath: s.path,
            createdAt: now,
          })
          .onConflictDoNothing(),
      );
    }
  }
  const missing: string[] = [];
  if (input.origin === "gitea") {
    const provided = new Set(input.pkg.plugins.map((p) => p.id));
    for (const row of await listPluginRows(db, workspaceId)) {
      if (row.origin === "gitea" && row.sourceId === input.sourceId && !provided.has(row.id) && row.packageStatus !== "missing") {
        missing.push(row.id);
        statements.push(updatePlugin(db, workspaceId, row.id, { packageStatus: "missing" }, now));
      }
    }
  }
  await runBatch(db, statements);
  return { plugins: results, missing };
}

/** The package of an uploaded plugin was withdrawn: a never-enabled plugin is forgotten, an enabled one goes `missing`. */
export async function removePackage(
  env: Env,
  workspaceId: string,
  pluginId: string,
): Promise<{ id: string; packageStatus: "missing" | "removed" }> {
  const db = makeDb(env.DB);
  const row = await getPlugin(db, workspaceId, pluginId);
  if (!row) throw new AppError("not_found", `Plugin '${pluginId}' not found`);
  const everEnabled = row.enabledAt !== null;
  if (!everEnabled) {
    await db
      .delete(plugins)
      .where(and(eq(plugins.workspaceId, workspaceId), eq(plugins.id, pluginId)))
      .run();
    return { id: pluginId, packageStatus: "removed" };
  }
  await updatePlugin(db, workspaceId, pluginId, { packageStatus: "missing" }, Date.now()).run();
  return { id: pluginId, packageStatus: "missing" };
}
