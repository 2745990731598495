/** Load and save a workspace's configuration row; a workspace without one gets the defaults. */
import { eq } from "drizzle-orm";
import type { Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { workspaceConfigs } from "../db/schema.ts";
import { DEFAULT_CONFIG, readStoredConfig, type WorkspaceConfig } from "./schema.ts";

export async function loadConfig(env: Env, workspaceId: string): Promise<WorkspaceConfig> {
  const row = await makeDb(env.DB).select().from(workspaceConfigs).where(eq(workspaceConfigs.workspaceId, workspaceId)).get();
  if (!row) return DEFAULT_CONFIG;
  // Stored configs were validated on write; re-parsing applies defaults added since.
  return readStoredConfig(JSON.parse(row.config));
}

export async function saveConfig(env: Env, workspaceId: string, config: WorkspaceConfig): Promise<void> {
  const now = Date.now();
  await makeDb(env.DB)
    .insert(workspaceConfigs)
    .values({ workspaceId, config: JSON.stringify(config), updatedAt: now })
    .onConflictDoUpdate({ target: workspaceConfigs.workspaceId, set: { config: JSON.stringify(config), updatedAt: now } })
    .run();
}
