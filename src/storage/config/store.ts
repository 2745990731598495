/** Load and save a workspace's configuration row; a workspace without one gets the defaults. */
import { eq } from "drizzle-orm";
import type { Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { workspaceConfigs } from "../db/schema.ts";
import { DEFAULT_CONFIG, readStoredConfig, type WorkspaceConfig } from "./schema.ts";
import { deepFreeze, setBounded } from "../../kernel/memo.ts";

export async function loadConfig(env: Env, workspaceId: string): Promise<WorkspaceConfig> {
  const row = await makeDb(env.DB).select().from(workspaceConfigs).where(eq(workspaceConfigs.workspaceId, workspaceId)).get();
  if (!row) return DEFAULT_CONFIG;
  return parsedConfig(row.config);
}

/** What a run opens with: the config, and the workspace's content revision (schema/core.ts `workspaceRevisions`; "" for no row). */
export interface ConfigAndRevision {
  config: WorkspaceConfig;
  revision: string;
}

/**
 * The config and the content revision in one D1 query: every run reads both when it opens, and with
 * the revision unchanged it reuses the skill catalog and memory it read before (docs/performance.md,
 * "Run-open reads"). A prepared statement, not the query builder: it runs once per run.
 */
export async function loadConfigAndRevision(env: Env, workspaceId: string): Promise<ConfigAndRevision> {
  return configAndRevisionOf(await readConfigAndRevision(env, workspaceId));
}

/**
 * The row `loadConfigAndRevision` parses, as D1 answers it: what the edge reads beside a run's rate
 * limits and hands to the session, which parses it where the run opens (docs/performance.md, "The
 * run's config read beside its rate limits"). Plain strings, so it crosses an RPC call as it is.
 */
export async function readConfigAndRevision(env: Env, workspaceId: string): Promise<ConfigAndRevisionRow> {
  return (await configAndRevisionStatement(env, workspaceId).first<ConfigAndRevisionRow>()) ?? { config: null, revision: null };
}

/** The row of `configAndRevisionStatement`: both columns null for a workspace without either. */
export interface ConfigAndRevisionRow {
  config: string | null;
  revision: string | null;
}

/**
 * The one query of `loadConfigAndRevision`, for a caller that sends it in one D1 batch with reads of
 * its own (webhook intake); `configAndRevisionOf` turns its row into the answer.
 */
export function configAndRevisionStatement(env: Env, workspaceId: string): D1PreparedStatement {
  return env.DB.prepare(
    `SELECT (SELECT config FROM workspace_configs WHERE workspace_id = ?1) AS config,
            (SELECT revision FROM workspace_revisions WHERE workspace_id = ?1) AS revision`,
  ).bind(workspaceId);
}

export function configAndRevisionOf(row: ConfigAndRevisionRow | null | undefined): ConfigAndRevision {
  return { config: row?.config ? parsedConfig(row.config) : DEFAULT_CONFIG, revision: row?.revision ?? "" };
}

/**
 * Parsed configs by their stored text, per isolate (docs/performance.md, "Config parsing"): every
 * run and webhook reads the row, but the same text always parses to the same config, so the zod
 * parse runs once per distinct text. Shared like DEFAULT_CONFIG: configs are never mutated.
 */
const parsed = new Map<string, WorkspaceConfig>();
const MAX_PARSED = 256;

function parsedConfig(text: string): WorkspaceConfig {
  let config = parsed.get(text);
  if (!config) {
    // Stored configs were validated on write; re-parsing applies defaults added since.
    // Frozen: the object is shared by every request of the isolate, and what is derived from it is
    // memoised per object (kernel/memo.ts), so a change would leak into both.
    config = deepFreeze(readStoredConfig(JSON.parse(text)));
    setBounded(parsed, text, config, MAX_PARSED);
  }
  return config;
}

export async function saveConfig(env: Env, workspaceId: string, config: WorkspaceConfig): Promise<void> {
  const now = Date.now();
  await makeDb(env.DB)
    .insert(workspaceConfigs)
    .values({ workspaceId, config: JSON.stringify(config), updatedAt: now })
    .onConflictDoUpdate({ target: workspaceConfigs.workspaceId, set: { config: JSON.stringify(config), updatedAt: now } })
    .run();
}
