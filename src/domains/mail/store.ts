/**
 * Mail between agents, stored apart from toolchain tasks (docs/toolchain.md, "Mail between agents"):
 * `inform` needs no action, `request` expects a reply (a mail whose `in_reply_to` is the request).
 * Status changes are conditional and recorded in the mail's own history in the same batch.
 */
import { and, desc, eq, inArray, lte, sql, type SQL } from "drizzle-orm";
import type { Env } from "../../storage/env.ts";
import { makeDb } from "../../storage/db/client.ts";
import { mailTaskHistory, mailTasks } from "../../storage/db/schema.ts";
import { newId } from "../../kernel/ids.ts";
import { changeStatus, type StatusChange, type StatusTables } from "../tasks/status-transition.ts";
import { afterCursor, type PageCursor } from "../tasks/page-cursor.ts";

export const PERFORMATIVES = ["inform", "request"] as const;
export type Performative = (typeof PERFORMATIVES)[number];
export type MailStatus = "pending" | "working" | "done" | "failed" | "cancelled";

export interface MailTask {
  id: string;
  workspaceId: string;
  fromAgent: string;
  toAgent: string;
  performative: Performative;
  subject: string;
  body: string;
  inReplyTo: string | null;
  status: MailStatus;
  attempts: number;
  sessionId: string | null;
  runId: string | null;
  lastError: string | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
}

function fromRow(r: typeof mailTasks.$inferSelect): MailTask {
  return {
    id: r.id,
    workspaceId: r.workspaceId,
    fromAgent: r.fromAgent,
    toAgent: r.toAgent,
    performative: r.performative as Performative,
    subject: r.subject,
    body: r.body,
    inReplyTo: r.inReplyTo,
    status: r.status as MailStatus,
    attempts: r.attempts,
    sessionId: r.sessionId,
    runId: r.runId,
    lastError: r.lastError,
    createdAt: r.createdAt,
    updatedAt: r.updatedAt,
    completedAt: r.completedAt,
  };
}

export function mailView(m: MailTask) {
  return {
    id: m.id,
    from_agent: m.fromAgent,
    to_agent: m.toAgent,
    performative: m.performative,
    subject: m.subject,
    body: m.body,
    in_reply_to: m.inReplyTo,
    status: m.status,
    attempts: m.attempts,
    session_id: m.sessionId,
    run_id: m.runId,
    last_error: m.lastError,
    created_at: m.createdAt,
    updated_at: m.updatedAt,
    completed_at: m.completedAt,
  };
}

export interface NewMail {
  fromAgent: string;
  toAgent: string;
  performative: Performative;
  subject: string;
  body: string;
  inReplyTo?: string | null;
}

export async function sendMail(env: Env, workspaceId: string, m: NewMail, now = Date.now()): Promise<MailTask> {
  const db = makeDb(env.DB);
  const row = {
    id: newId("mail"),
    workspaceId,
    fromAgent: m.fromAgent,
    toAgent: m.toAgent,
    performative: m.performative,
    subject: m.subject,
    body: m.body,
    inReplyTo: m.inReplyTo ?? null,
    status: "pending",
    attempts: 0,
    createdAt: now,
    updatedAt: now,
  };
  await db.batch([
    db.insert(mailTasks).values(row),
    db.insert(mailTaskHistory).values({
      id: newId("mlh"),
      mailId: row.id,
      workspaceId,
      event: "sent",
      fromStatus: null,
      toStatus: "pending",
      detail: JSON.stringify({ from: m.fromAgent, to: m.toAgent }),
      at: now,
    }),
  ]);
  return fromRow({ ...row, sessionId: null, runId: null, lastError: null, completedAt: null });
}

export async function loadMail(env: Env, workspaceId: string, id: string): Promise<MailTask | null> {
  const row = await makeDb(env.DB)
    .select()
    .from(mailTasks)
    .where(and(eq(mailTasks.workspaceId, workspaceId), eq(mailTasks.id, id)))
    .get();
  return row ? fromRow(row) : null;
}

export async function listMail(
  env: Env,
  workspaceId: string,
  f: PageCursor & {
    status?: MailStatus;
    toAgent?: string;
    fromAgent?: string;
    performative?: Performative;
    inReplyTo?: string;
    limit: number;
  },
): Promise<MailTask[]> {
  const where: SQL[] = [eq(mailTasks.workspaceId, workspaceId)];
  if (f.status) where.push(eq(mailTasks.status, f.status));
  if (f.toAgent) where.push(eq(mailTasks.toAgent, f.toAgent));
  if (f.fromAgent) where.push(eq(mailTasks.fromAgent, f.fromAgent));
  if (f.performative) where.push(eq(mailTasks.performative, f.performative));
  if (f.inReplyTo) where.push(eq(mailTasks.inReplyTo, f.inReplyTo));
  const page = afterCursor(mailTasks.createdAt, mailTasks.id, f);
  if (page) where.push(page);
  const rows = await makeDb(env.DB)
    .select()
    .from(mailTasks)
    .where(and(...where))
    .orderBy(desc(mailTasks.createdAt), desc(mailTasks.id))
    .limit(f.limit)
    .all();
  return rows.map(fromRow);
}

export async function mailHistory(env: Env, workspaceId: string, mailId: string) {
  const rows = await makeDb(env.DB)
    .select()
    .from(mailTaskHistory)
    .where(and(eq(mailTaskHistory.workspaceId, workspaceId), eq(mailTaskHistory.mailId, mailId)))
    .orderBy(mailTaskHistory.at, sql`rowid`)
    .all();
  return rows.map((r) => ({
    id: r.id,
    event: r.event,
    from_status: r.fromStatus,
    to_status: r.toStatus,
    detail: JSON.parse(r.detail) as unknown,
    at: r.at,
  }));
}

/** Replies to a request (mails with `in_reply_to` = it) sent by its recipient. */
export function repliesFrom(env: Env, workspaceId: string, mail: MailTask): Promise<MailTask[]> {
  return listMail(env, workspaceId, { inReplyTo: mail.id, fromAgent: mail.toAgent, limit: 50 });
}

export async function pendingMail(env: Env, workspaceId: string, now: number, limit: number): Promise<MailTask[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(mailTasks)
    .where(and(eq(mailTasks.workspaceId, workspaceId), eq(mailTasks.status, "pending"), lte(mailTasks.createdAt, now)))
    .orderBy(mailTasks.createdAt)
    .limit(limit)
    .all();
  return rows.map(fromRow);
}

export async function workingMail(env: Env, workspaceId: string): Promise<MailTask[]> {
  const rows = await makeDb(env.DB)
    .select()
    .from(mailTasks)
    .where(and(eq(mailTasks.workspaceId, workspaceId), eq(mailTasks.status, "working")))
    .all();
  return rows.map(fromRow);
}

export type MailTransition = StatusChange<
  MailStatus,
  { attempts?: number; session_id?: string | null; run_id?: string | null; last_error?: string | null; completed_at?: number | null }
>;

const MAIL_TABLES: StatusTables = { table: "mail_tasks", history: "mail_task_history", historyKey: "mail_id", historyIdPrefix: "mlh" };

/** Same contract as the toolchain's `transition`: conditional, recorded only when it applied. */
export function transitionMail(env: Env, workspaceId: string, id: string, t: MailTransition): Promise<boolean> {
  return changeStatus(env, MAIL_TABLES, workspaceId, id, t);
}

/** Workspaces with mail to dispatch or to watch. */
export async function workspacesWithOpenMail(env: Env): Promise<string[]> {
  const rows = await makeDb(env.DB)
    .selectDistinct({ ws: mailTasks.workspaceId })
    .from(mailTasks)
    .where(inArray(mailTasks.status, ["pending", "working"]))
    .all();
  return rows.map((r) => r.ws);
}
