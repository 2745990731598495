/**
 * Workspace secrets: write-only values encrypted at rest. `resolveSecret` is how the rest of Beaver
 * reads one: the workspace's own secret first, then a Worker secret/var of the same name.
 */
import { and, eq } from "drizzle-orm";
import { readEnvString, type Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { secrets } from "../db/schema.ts";
import { seal, unseal } from "./crypto.ts";
import { notFound } from "../../kernel/errors.ts";

const aadOf = (workspaceId: string, name: string) => `${workspaceId}\u0000${name}`;

export async function putSecret(env: Env, workspaceId: string, name: string, value: string): Promise<{ created: boolean }> {
  const sealed = await seal(env.BEAVER_SECRETS_KEY, aadOf(workspaceId, name), value);
  const db = makeDb(env.DB);
  const now = Date.now();
  const existing = await db
    .select({ name: secrets.name })
    .from(secrets)
    .where(and(eq(secrets.workspaceId, workspaceId), eq(secrets.name, name)))
    .get();
  await db
    .insert(secrets)
    .values({ workspaceId, name, ...sealed, createdAt: now, updatedAt: now })
    .onConflictDoUpdate({ target: [secrets.workspaceId, secrets.name], set: { ...sealed, updatedAt: now } })
    .run();
  return { created: !existing };
}

export async function listSecrets(env: Env, workspaceId: string) {
  return makeDb(env.DB)
    .select({ name: secrets.name, createdAt: secrets.createdAt, updatedAt: secrets.updatedAt })
    .from(secrets)
    .where(eq(secrets.workspaceId, workspaceId))
    .orderBy(secrets.name)
    .all();
}

export async function deleteSecret(env: Env, workspaceId: string, name: string): Promise<void> {
  const db = makeDb(env.DB);
  const gone = await db
    .delete(secrets)
    .where(and(eq(secrets.workspaceId, workspaceId), eq(secrets.name, name)))
    .returning({ name: secrets.name })
    .all();
  if (gone.length === 0) throw notFound(`Secret '${name}'`);
}

/** The value of secret `name` for a workspace, or a Worker secret/var of that name, or undefined. */
export async function resolveSecret(env: Env, workspaceId: string, name: string): Promise<string | undefined> {
  const row = await makeDb(env.DB)
    .select()
    .from(secrets)
    .where(and(eq(secrets.workspaceId, workspaceId), eq(secrets.name, name)))
    .get();
  if (row) return unseal(env.BEAVER_SECRETS_KEY, aadOf(workspaceId, name), row);
  // Beaver's own Worker secrets (admin token, encryption key) are never lent to a workspace.
  if (name.startsWith("BEAVER_")) return undefined;
  return readEnvString(env, name);
}
