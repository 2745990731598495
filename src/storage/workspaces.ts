/** Workspace rows: the `default` workspace is created on first use of the bootstrap token. */
import { eq } from "drizzle-orm";
import type { Env } from "./env.ts";
import { makeDb } from "./db/client.ts";
import { workspaces } from "./db/schema.ts";
import { AppError } from "../kernel/errors.ts";

export async function ensureDefaultWorkspace(env: Env): Promise<void> {
  await makeDb(env.DB).insert(workspaces).values({ id: "default", name: "Default", createdAt: Date.now() }).onConflictDoNothing().run();
}

export async function createWorkspace(env: Env, id: string, name: string) {
  const db = makeDb(env.DB);
  const existing = await db.select().from(workspaces).where(eq(workspaces.id, id)).get();
  if (existing) throw new AppError("conflict", `Workspace '${id}' already exists`);
  const row = { id, name, createdAt: Date.now() };
  await db.insert(workspaces).values(row).run();
  return row;
}

export async function getWorkspace(env: Env, id: string) {
  return makeDb(env.DB).select().from(workspaces).where(eq(workspaces.id, id)).get();
}

export async function listWorkspaces(env: Env) {
  return makeDb(env.DB).select().from(workspaces).all();
}
