/**
 * Storage of toolchain tasks and their comments, outputs and history in D1. Status changes go
 * through `changeStatus` (conditional, recorded in the same batch).
 */
import { and, desc, eq, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb, type Db } from "../../storage/db/client.ts";
import { toolchainTaskComments, toolchainTaskHistory, toolchainTaskOutputs, toolchainTasks } from "../../storage/db/schema.ts";
import { newId } from "../../kernel/ids.ts";
import type { TaskDraft } from "./task-drafts.ts";
import { changeStatus, type StatusChange, type StatusTables } from "../tasks/status-transition.ts";
import { afterCursor, type PageCursor } from "../tasks/page-cursor.ts";
import {
  OPEN_STATUSES,
  taskFromRow,
  type TaskComment,
  type TaskHistoryEntry,
  type TaskOutput,
  type TaskStatus,
  type ToolchainTask,
} from "./task-model.ts";

export const TASK_ID_PREFIX = "tct";
export const newTaskId = () => newId(TASK_ID_PREFIX);

/**
 * Insert statements for new tasks and their `created` history rows (to run inside a batch): one
 * statement per row, because D1 binds at most 100 values per statement and a delivery may name
 * many agents.
 */
export function taskInsertStatements(
  env: Env,
  workspaceId: string,
  drafts: TaskDraft[],
  deliveryId: string | null,
  now: number,
): D1PreparedStatement[] {
  // Prepared statements, not the query builder: every webhook delivery that creates work runs them
  // (docs/performance.md, "Webhook intake"). The SQL names the tables of storage/db/schema/toolchain.ts.
  return drafts.flatMap((d) => [
    env.DB.prepare(
      `INSERT INTO toolchain_tasks (id, workspace_id, delivery_id, agent_id, title, description, event_type, action_type,
         must_haves, repo, number, dedupe_key, status, attempts, business_failures, reminder_sent, not_before,
         origin_task_id, created_at, updated_at)
       VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, 'pending', 0, 0, 0, ?13, ?14, ?13, ?13)`,
    ).bind(
      d.id,
      workspaceId,
      deliveryId,
      d.agentId,
      d.title,
      d.description,
      d.mustHaves.event_type,
      d.actionType,
      JSON.stringify(d.mustHaves),
      d.repo,
      d.number,
      d.dedupeKey,
      now,
      d.originTaskId,
    ),
    env.DB.prepare(
      `INSERT INTO toolchain_task_history (id, task_id, workspace_id, event, from_status, to_status, detail, at)
       VALUES (?1, ?2, ?3, 'created', NULL, 'pending', ?4, ?5)`,
    ).bind(
      newId("tch"),
      d.id,
      workspaceId,
      JSON.stringify({ agent_id: d.agentId, action_type: d.actionType, delivery_id: deliveryId, origin_task_id: d.originTaskId }),
      now,
    ),
  ]);
}

/**
 * Insert one task Beaver creates itself (no delivery). False when an open task already holds its
 * dedupe key (the unique index refused it; nothing was written).
 */
export async function insertOpenTask(env: Env, workspaceId: string, draft: TaskDraft, now: number): Promise<boolean> {
  try {
    await env.DB.batch(taskInsertStatements(env, workspaceId, [draft], null, now));
    return true;
  } catch (err) {
    // Which constraint stopped the batch is read from the data, not from the error's wording.
    if (draft.dedupeKey && (await openDedupeKeys(env, workspaceId, [draft.dedupeKey])).size) return false;
    throw err;
  }
}

export async function loadTask(env: Env, workspaceId: string, id: string): Promise<ToolchainTask | null> {
  const row = await makeDb(env.DB)
    .select()
    .from(toolchainTasks)
    .where(and(eq(toolchainTasks.workspaceId, workspaceId), eq(toolchainTasks.id, id)))
    .get();
  return row ? taskFromRow(row) : null;
}

export interface TaskFilter extends PageCursor {
  status?: TaskStatus;
  agentId?: string;
  actionType?: string;
  repo?: string;
  limit: number;
}

export async function listTasks(env: Env, workspaceId: string, f: TaskFilter): Promise<ToolchainTask[]> {
  const where: SQL[] = [eq(toolchainTasks.workspaceId, workspaceId)];
  if (f.status) where.push(eq(toolchainTasks.status, f.status));
  if (f.agentId) where.push(eq(toolchainTasks.agentId, f.agentId));
  if (f.actionType) where.push(eq(toolchainTasks.actionType, f.actionType));
  if (f.repo) where.push(eq(toolchainTasks.repo, f.repo));
  const page = afterCursor(toolchainTasks.createdAt, toolchainTasks.id, f);
  if (page) where.push(page);
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTasks)
    .where(and(...where))
    .orderBy(desc(toolchainTasks.createdAt), desc(toolchainTasks.id))
    .limit(f.limit)
    .all();
  return rows.map(taskFromRow);
}

/** Dedupe keys among `keys` that already belong to an open task. */
export async function openDedupeKeys(env: Env, workspaceId: string, keys: string[]): Promise<Set<string>> {
  if (!keys.length) return new Set();
  const rows = await makeDb(env.DB)
    .select({ key: toolchainTasks.dedupeKey })
    .from(toolchainTasks)
    .where(
      and(
        eq(toolchainTasks.workspaceId, workspaceId),
        inArray(toolchainTasks.dedupeKey, keys),
        inArray(toolchainTasks.status, OPEN_STATUSES),
      ),
    )
    .all();
  return new Set(rows.map((r) => r.key).filter((k): k is string => k !== null));
}

/** An open task with this dedupe key, if any (used to fold repeated infrastructure failures into one). */
export async function openTaskByDedupeKey(env: Env, workspaceId: string, key: string): Promise<ToolchainTask | null> {
  const row = await makeDb(env.DB)
    .select()
    .from(toolchainTasks)
    .where(
      and(eq(toolchainTasks.workspaceId, workspaceId), eq(toolchainTasks.dedupeKey, key), inArray(toolchainTasks.status, OPEN_STATUSES)),
    )
    .get();
  return row ? taskFromRow(row) : null;
}

export async function loadComments(env: Env, workspaceId: string, taskId: string): Promise<TaskComment[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTaskComments)
    .where(and(eq(toolchainTaskComments.workspaceId, workspaceId), eq(toolchainTaskComments.taskId, taskId)))
    .orderBy(toolchainTaskComments.createdAt, sql`rowid`)
    .all();
  return rows.map((r) => ({ id: r.id, author: r.author, commentType: r.commentType, body: r.body, createdAt: r.createdAt }));
}

export async function loadOutputs(env: Env, workspaceId: string, taskId: string): Promise<TaskOutput[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTaskOutputs)
    .where(and(eq(toolchainTaskOutputs.workspaceId, workspaceId), eq(toolchainTaskOutputs.taskId, taskId)))
    .orderBy(toolchainTaskOutputs.createdAt, sql`rowid`)
    .all();
  return rows.map((r) => ({ id: r.id, type: r.type, content: r.content, createdAt: r.createdAt }));
}

export async function loadHistory(env: Env, workspaceId: string, taskId: string): Promise<TaskHistoryEntry[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTaskHistory)
    .where(and(eq(toolchainTaskHistory.workspaceId, workspaceId), eq(toolchainTaskHistory.taskId, taskId)))
    // rowid: insertion order, for entries written within the same millisecond.
    .orderBy(toolchainTaskHistory.at, sql`rowid`)
    .all();
  return rows.map((r) => ({
    id: r.id,
    event: r.event,
    fromStatus: r.fromStatus,
    toStatus: r.toStatus,
    detail: JSON.parse(r.detail) as Record<string, unknown>,
    at: r.at,
  }));
}

export interface NewComment {
  author: string;
  commentType: string;
  body: string;
}

/** The insert statement for a comment (to run inside a batch). */
export function commentInsertQuery(db: Db, workspaceId: string, taskId: string, c: NewComment, now: number) {
  return db
    .insert(toolchainTaskComments)
    .values({ id: newId("tcc"), taskId, workspaceId, author: c.author, commentType: c.commentType, body: c.body, createdAt: now });
}

export async function addComment(env: Env, workspaceId: string, taskId: string, c: NewComment, now = Date.now()): Promise<TaskComment> {
  const [row] = await commentInsertQuery(makeDb(env.DB), workspaceId, taskId, c, now).returning();
  return { id: row!.id, author: row!.author, commentType: row!.commentType, body: row!.body, createdAt: now };
}

export async function addOutput(
  env: Env,
  workspaceId: string,
  taskId: string,
  o: { type: string; content: string },
  now = Date.now(),
): Promise<TaskOutput> {
  const row = { id: newId("tco"), taskId, workspaceId, type: o.type, content: o.content, createdAt: now };
  await makeDb(env.DB).insert(toolchainTaskOutputs).values(row).run();
  return { id: row.id, type: row.type, content: row.content, createdAt: now };
}

export async function addHistory(
  env: Env,
  workspaceId: string,
  taskId: string,
  event: string,
  detail: Record<string, unknown>,
  now = Date.now(),
): Promise<void> {
  await makeDb(env.DB)
    .insert(toolchainTaskHistory)
    .values({ id: newId("tch"), taskId, workspaceId, event, fromStatus: null, toStatus: null, detail: JSON.stringify(detail), at: now })
    .run();
}

/** Columns a transition may set, by their SQL names. */
export interface TaskPatch {
  attempts?: number;
  business_failures?: number;
  reminder_sent?: number;
  not_before?: number;
  deadline_at?: number | null;
  session_id?: string | null;
  run_id?: string | null;
  failure_kind?: string | null;
  last_error?: string | null;
  completed_at?: number | null;
}

export type Transition = StatusChange<TaskStatus, TaskPatch>;

const TASK_TABLES: StatusTables = {
  table: "toolchain_tasks",
  history: "toolchain_task_history",
  historyKey: "task_id",
  historyIdPrefix: "tch",
};

/** Move a task between statuses and record it (see `changeStatus`); false if someone else moved it first. */
export function transition(env: Env, workspaceId: string, taskId: string, t: Transition): Promise<boolean> {
  return changeStatus(env, TASK_TABLES, workspaceId, taskId, t);
}

/** Pending tasks whose backoff has passed, oldest first. */
export async function readyTasks(env: Env, workspaceId: string, now: number, limit: number): Promise<ToolchainTask[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTasks)
    .where(and(eq(toolchainTasks.workspaceId, workspaceId), eq(toolchainTasks.status, "pending"), lte(toolchainTasks.notBefore, now)))
    .orderBy(toolchainTasks.notBefore, toolchainTasks.createdAt)
    .limit(limit)
    .all();
  return rows.map(taskFromRow);
}

export async function workingTasks(env: Env, workspaceId: string): Promise<ToolchainTask[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(toolchainTasks)
    .where(and(eq(toolchainTasks.workspaceId, workspaceId), eq(toolchainTasks.status, "working")))
    .all();
  return rows.map(taskFromRow);
}

/** Workspaces that have toolchain work to dispatch or to watch. */
export async function workspacesWithOpenTasks(env: Env, now: number): Promise<string[]> {
  const rows = await makeDb(env.DB)
    .selectDistinct({ ws: toolchainTasks.workspaceId })
    .from(toolchainTasks)
    .where(sql`${toolchainTasks.status} = 'working' OR (${toolchainTasks.status} = 'pending' AND ${toolchainTasks.notBefore} <= ${now})`)
    .all();
  return rows.map((r) => r.ws);
}
