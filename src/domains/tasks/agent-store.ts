/**
 * Storage of toolchain agents in D1, always scoped to one workspace. A duplicate id or Gitea user
 * name is a conflict (409), never a silent overwrite.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { toolchainAgents } from "../../storage/db/schema.ts";
import { AppError, notFound } from "../../kernel/errors.ts";
import { RevisionCache } from "../../kernel/revision-cache.ts";
import type { ModelEntry } from "../../storage/config/schema.ts";
import type { Agent, AgentRole, CreateAgentInput, PatchAgentInput } from "./agents.ts";

function fromRow(row: typeof toolchainAgents.$inferSelect): Agent {
  return {
    id: row.id,
    giteaUsername: row.giteaUsername,
    roles: JSON.parse(row.roles) as AgentRole[],
    model: row.model ? (JSON.parse(row.model) as ModelEntry) : null,
    giteaTokenSecret: row.giteaTokenSecret,
    skills: row.skills ? (JSON.parse(row.skills) as string[]) : [],
    enabled: row.enabled === 1,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function listAgents(env: Env, workspaceId: string): Promise<Agent[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainAgents)
    .where(eq(toolchainAgents.workspaceId, workspaceId))
    .orderBy(toolchainAgents.id)
    .all();
  return rows.map(fromRow);
}

/** Agent lists per isolate under the workspace revision they were read at (agent changes change it: migration 0009). */
const agentLists = new RevisionCache<readonly Agent[]>();

/** `listAgents`, reusing the list read under the same workspace revision (null: unknown, read now); treat the agents as read-only. */
export async function listAgentsAt(env: Env, workspaceId: string, revision: string | null): Promise<Agent[]> {
  return [...(await agentLists.get(workspaceId, revision, () => listAgents(env, workspaceId)))];
}

/** The row of `agentsStatement`: a `toolchain_agents` row under the drizzle row's names. */
export type AgentRow = typeof toolchainAgents.$inferSelect;

/**
 * `listAgents`' query as a prepared statement, for a caller that reads it in one D1 batch with the
 * workspace revision (webhook intake, docs/toolchain.md "Webhook intake"); `rememberAgentsAt` keeps its rows.
 */
export function agentsStatement(env: Env, workspaceId: string): D1PreparedStatement {
  return env.DB.prepare(
    `SELECT workspace_id AS workspaceId, id, gitea_username AS giteaUsername, username_key AS usernameKey, roles, model,
       gitea_token_secret AS giteaTokenSecret, skills, enabled, created_at AS createdAt, updated_at AS updatedAt
      FROM toolchain_agents WHERE workspace_id = ?1 ORDER BY id`,
  ).bind(workspaceId);
}

/** Keeps `agentsStatement`'s rows, read in the same batch as `revision`, as the workspace's agents at that revision. */
export function rememberAgentsAt(workspaceId: string, revision: string | null, rows: readonly AgentRow[]): void {
  agentLists.put(workspaceId, revision, rows.map(fromRow));
}

/** The agents this isolate holds for the workspace at `revision`, or null: never reads (webhook intake before its answer). */
export function cachedAgentsAt(workspaceId: string, revision: string | null): Agent[] | null {
  const kept = agentLists.peek(workspaceId, revision);
  return kept && [...kept];
}

export async function getAgent(env: Env, workspaceId: string, id: string): Promise<Agent | null> {
  const row = await makeDb(env.DB)
    .select()
    .from(toolchainAgents)
    .where(and(eq(toolchainAgents.workspaceId, workspaceId), eq(toolchainAgents.id, id)))
    .get();
  return row ? fromRow(row) : null;
}

async function usernameTaken(env: Env, workspaceId: string, username: string, exceptId?: string): Promise<boolean> {
  const row = await makeDb(env.DB)
    .select({ id: toolchainAgents.id })
    .from(toolchainAgents)
    .where(and(eq(toolchainAgents.workspaceId, workspaceId), eq(toolchainAgents.usernameKey, username.toLowerCase())))
    .get();
  return Boolean(row && row.id !== exceptId);
}

/** Why an agent with this id or user name cannot be written, or null when nothing stands in the way. */
async function conflictFor(
  env: Env,
  workspaceId: string,
  id: string | null,
  username: string | undefined,
  exceptId?: string,
): Promise<AppError | null> {
  if (id && (await getAgent(env, workspaceId, id))) return new AppError("conflict", `Agent '${id}' already exists`);
  if (username && (await usernameTaken(env, workspaceId, username, exceptId)))
    return new AppError("conflict", `Gitea user '${username}' already belongs to another agent`);
  return null;
}

export async function createAgent(env: Env, workspaceId: string, input: CreateAgentInput, now = Date.now()): Promise<Agent> {
  const conflict = await conflictFor(env, workspaceId, input.id, input.gitea_username);
  if (conflict) throw conflict;
  const row = {
    workspaceId,
    id: input.id,
    giteaUsername: input.gitea_username,
    usernameKey: input.gitea_username.toLowerCase(),
    roles: JSON.stringify([...new Set(input.roles)]),
    model: input.model ? JSON.stringify(input.model) : null,
    giteaTokenSecret: input.gitea_token_secret ?? null,
    skills: input.skills && input.skills.length > 0 ? JSON.stringify([...new Set(input.skills)]) : null,
    enabled: input.enabled ? 1 : 0,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await makeDb(env.DB).insert(toolchainAgents).values(row).run();
  } catch (err) {
    // Two creates at once: the primary key or the user-name index refused this one. Which is read from the data, not the error text.
    throw (await conflictFor(env, workspaceId, input.id, input.gitea_username)) ?? err;
  }
  return fromRow(row);
}

export async function patchAgent(env: Env, workspaceId: string, id: string, patch: PatchAgentInput, now = Date.now()): Promise<Agent> {
  const current = await getAgent(env, workspaceId, id);
  if (!current) throw notFound(`Agent '${id}'`);
  const conflict = await conflictFor(env, workspaceId, null, patch.gitea_username, id);
  if (conflict) throw conflict;
  const set: Partial<typeof toolchainAgents.$inferInsert> = { updatedAt: now };
  if (patch.gitea_username !== undefined) {
    set.giteaUsername = patch.gitea_username;
    set.usernameKey = patch.gitea_username.toLowerCase();
  }
  if (patch.roles !== undefined) set.roles = JSON.stringify([...new Set(patch.roles)]);
  if (patch.model !== undefined) set.model = patch.model ? JSON.stringify(patch.model) : null;
  if (patch.gitea_token_secret !== undefined) set.giteaTokenSecret = patch.gitea_token_secret;
  if (patch.skills !== undefined) set.skills = patch.skills.length > 0 ? JSON.stringify([...new Set(patch.skills)]) : null;
  if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
  try {
    await makeDb(env.DB)
      .update(toolchainAgents)
      .set(set)
      .where(and(eq(toolchainAgents.workspaceId, workspaceId), eq(toolchainAgents.id, id)))
      .run();
  } catch (err) {
    throw (await conflictFor(env, workspaceId, null, patch.gitea_username, id)) ?? err;
  }
  return (await getAgent(env, workspaceId, id))!;
}
