/**
 * Storage of toolchain agents in D1, always scoped to one workspace. A duplicate id or Gitea user
 * name is a conflict (409), never a silent overwrite.
 */
import { and, eq } from "drizzle-orm";
import type { Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { toolchainAgents } from "../db/schema.ts";
import { AppError, notFound } from "../http/errors.ts";
import type { ModelEntry } from "../config/schema.ts";
import type { Agent, AgentRole, CreateAgentInput, PatchAgentInput } from "./agents.ts";

function fromRow(row: typeof toolchainAgents.$inferSelect): Agent {
  return {
    id: row.id,
    giteaUsername: row.giteaUsername,
    roles: JSON.parse(row.roles) as AgentRole[],
    model: row.model ? (JSON.parse(row.model) as ModelEntry) : null,
    giteaTokenSecret: row.giteaTokenSecret,
    enabled: row.enabled === 1,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
  };
}

export async function listAgents(env: Env, workspaceId: string): Promise<Agent[]> {
  const rows = await makeDb(env.DB).select().from(toolchainAgents).where(eq(toolchainAgents.workspaceId, workspaceId)).orderBy(toolchainAgents.id).all();
  return rows.map(fromRow);
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

function isUniqueViolation(err: unknown): boolean {
  return err instanceof Error && /UNIQUE constraint failed/i.test(`${err.message} ${String((err as { cause?: unknown }).cause ?? "")}`);
}

export async function createAgent(env: Env, workspaceId: string, input: CreateAgentInput, now = Date.now()): Promise<Agent> {
  if (await getAgent(env, workspaceId, input.id)) throw new AppError("conflict", `Agent '${input.id}' already exists`);
  if (await usernameTaken(env, workspaceId, input.gitea_username)) {
    throw new AppError("conflict", `Gitea user '${input.gitea_username}' already belongs to another agent`);
  }
  const row = {
    workspaceId,
    id: input.id,
    giteaUsername: input.gitea_username,
    usernameKey: input.gitea_username.toLowerCase(),
    roles: JSON.stringify([...new Set(input.roles)]),
    model: input.model ? JSON.stringify(input.model) : null,
    giteaTokenSecret: input.gitea_token_secret ?? null,
    enabled: input.enabled ? 1 : 0,
    createdAt: now,
    updatedAt: now,
  };
  try {
    await makeDb(env.DB).insert(toolchainAgents).values(row).run();
  } catch (err) {
    // Two concurrent creates: the primary key or username index decides, we report the conflict.
    if (isUniqueViolation(err)) throw new AppError("conflict", `Agent '${input.id}' or Gitea user '${input.gitea_username}' already exists`);
    throw err;
  }
  return fromRow(row);
}

export async function patchAgent(env: Env, workspaceId: string, id: string, patch: PatchAgentInput, now = Date.now()): Promise<Agent> {
  const current = await getAgent(env, workspaceId, id);
  if (!current) throw notFound(`Agent '${id}'`);
  if (patch.gitea_username && (await usernameTaken(env, workspaceId, patch.gitea_username, id))) {
    throw new AppError("conflict", `Gitea user '${patch.gitea_username}' already belongs to another agent`);
  }
  const set: Partial<typeof toolchainAgents.$inferInsert> = { updatedAt: now };
  if (patch.gitea_username !== undefined) {
    set.giteaUsername = patch.gitea_username;
    set.usernameKey = patch.gitea_username.toLowerCase();
  }
  if (patch.roles !== undefined) set.roles = JSON.stringify([...new Set(patch.roles)]);
  if (patch.model !== undefined) set.model = patch.model ? JSON.stringify(patch.model) : null;
  if (patch.gitea_token_secret !== undefined) set.giteaTokenSecret = patch.gitea_token_secret;
  if (patch.enabled !== undefined) set.enabled = patch.enabled ? 1 : 0;
  try {
    await makeDb(env.DB)
      .update(toolchainAgents)
      .set(set)
      .where(and(eq(toolchainAgents.workspaceId, workspaceId), eq(toolchainAgents.id, id)))
      .run();
  } catch (err) {
    if (isUniqueViolation(err)) throw new AppError("conflict", `Gitea user '${patch.gitea_username}' already belongs to another agent`);
    throw err;
  }
  return (await getAgent(env, workspaceId, id))!;
}
