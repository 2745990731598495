/**
 * Workspace secrets: write-only values encrypted at rest. `resolveSecret` is how the rest of Beaver
 * reads one (model API keys, Gitea tokens, webhook secrets): the workspace's own secret first, then —
 * only where the operator lends it — a Worker secret of the same name (README, Worker secrets).
 */
import { and, eq } from "drizzle-orm";
import { readEnvString, type Env } from "../env.ts";
import { makeDb } from "../db/client.ts";
import { secrets } from "../db/schema.ts";
import { seal, unseal } from "./crypto.ts";
import { notFound } from "../../kernel/errors.ts";
import { RevisionCache } from "../../kernel/revision-cache.ts";

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

/**
 * The value of secret `name` for a workspace, or undefined. A name the workspace has not stored falls
 * back to the Worker secret of that name only when the operator lends it: the name is listed in
 * `BEAVER_SHARED_SECRETS` and the workspace in `BEAVER_SHARED_SECRETS_WORKSPACES` (default: `default`).
 * Any other name answers undefined whether or not such a Worker var exists, so a tenant can neither
 * borrow the operator's keys (pointing a model's base_url at its own server) nor probe which exist.
 */
export async function resolveSecret(env: Env, workspaceId: string, name: string): Promise<string | undefined> {
  const row = await makeDb(env.DB)
    .select()
    .from(secrets)
    .where(and(eq(secrets.workspaceId, workspaceId), eq(secrets.name, name)))
    .get();
  if (row) return unseal(env.BEAVER_SECRETS_KEY, aadOf(workspaceId, name), row);
  return lendsWorkerSecret(env, workspaceId, name) ? readEnvString(env, name) : undefined;
}

/**
 * Secrets resolved per isolate under the workspace revision they were read at (any change to a
 * workspace's secrets or config gives it a new revision: migration 0009), for callers on a hot path
 * that read the revision anyway (webhook intake; docs/performance.md, "Webhook intake"). Saves the D1
 * read and the AES-GCM open per request; the plaintext stays in this isolate's memory, as it does in
 * the provider clients built with it.
 */
const resolvedSecrets = new RevisionCache<string | undefined>(256);

/** `resolveSecret`, reusing the value resolved under the same revision (null: unknown, read now). */
export function resolveSecretAt(env: Env, workspaceId: string, name: string, revision: string | null): Promise<string | undefined> {
  return resolvedSecrets.get(JSON.stringify([workspaceId, name]), revision, () => resolveSecret(env, workspaceId, name));
}

/** Workspaces Worker secrets are lent to when `BEAVER_SHARED_SECRETS_WORKSPACES` is not set. */
export const DEFAULT_SHARED_SECRETS_WORKSPACES = ["default"];

/** True when the operator lends the Worker secret `name` to this workspace. */
export function lendsWorkerSecret(env: Env, workspaceId: string, name: string): boolean {
  // Beaver's own Worker secrets (admin token, encryption key, these lists) are never lent, even if listed.
  if (name.startsWith("BEAVER_")) return false;
  const workspaces =
    env.BEAVER_SHARED_SECRETS_WORKSPACES === undefined
      ? DEFAULT_SHARED_SECRETS_WORKSPACES
      : commaList(env.BEAVER_SHARED_SECRETS_WORKSPACES);
  return commaList(env.BEAVER_SHARED_SECRETS).includes(name) && workspaces.includes(workspaceId);
}

/** `"A, B,,C"` → `["A", "B", "C"]`; an unset or empty var is an empty list. */
function commaList(value: string | undefined): string[] {
  return (value ?? "")
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");
}
