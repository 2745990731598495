/**
 * The toolchain task as code sees it (parsed from its row) and as the HTTP API shows it, plus the
 * comment types the application accepts (validated here, not by a CHECK constraint, so a new type
 * needs no migration; docs/toolchain.md, "Dispatch and task runs").
 */
import type { toolchainTasks } from "../../storage/db/schema.ts";
import type { ActionType } from "./scenarios.ts";
import type { MustHaves } from "./task-drafts.ts";

export const TASK_STATUSES = ["pending", "working", "done", "failed", "cancelled"] as const;
export type TaskStatus = (typeof TASK_STATUSES)[number];
export const OPEN_STATUSES: TaskStatus[] = ["pending", "working"];

export const COMMENT_TYPES = [
  "general",
  "handoff",
  "observation",
  "review",
  "rebuttal",
  "rebuttal_response",
  "debate_argument",
  "debate_rebuttal",
  "debate_judgment",
  "action_report",
] as const;
export type CommentType = (typeof COMMENT_TYPES)[number];

export function isCommentType(value: string): value is CommentType {
  return (COMMENT_TYPES as readonly string[]).includes(value);
}

export type FailureKind = "business" | "system" | "infrastructure";

export interface ToolchainTask {
  id: string;
  workspaceId: string;
  deliveryId: string | null;
  agentId: string;
  title: string;
  description: string;
  eventType: string;
  actionType: ActionType;
  mustHaves: MustHaves;
  repo: string | null;
  number: number | null;
  dedupeKey: string | null;
  status: TaskStatus;
  attempts: number;
  businessFailures: number;
  reminderSent: boolean;
  notBefore: number;
  deadlineAt: number | null;
  sessionId: string | null;
  runId: string | null;
  failureKind: FailureKind | null;
  lastError: string | null;
  originTaskId: string | null;
  createdAt: number;
  updatedAt: number;
  completedAt: number | null;
}

export interface TaskComment {
  id: string;
  author: string;
  commentType: string;
  body: string;
  createdAt: number;
}

export interface TaskOutput {
  id: string;
  type: string;
  content: string;
  createdAt: number;
}

export interface TaskHistoryEntry {
  id: string;
  event: string;
  fromStatus: string | null;
  toStatus: string | null;
  detail: Record<string, unknown>;
  at: number;
}

export function taskFromRow(row: typeof toolchainTasks.$inferSelect): ToolchainTask {
  return {
    id: row.id,
    workspaceId: row.workspaceId,
    deliveryId: row.deliveryId,
    agentId: row.agentId,
    title: row.title,
    description: row.description,
    eventType: row.eventType,
    actionType: row.actionType as ActionType,
    mustHaves: JSON.parse(row.mustHaves) as MustHaves,
    repo: row.repo,
    number: row.number,
    dedupeKey: row.dedupeKey,
    status: row.status as TaskStatus,
    attempts: row.attempts,
    businessFailures: row.businessFailures,
    reminderSent: row.reminderSent === 1,
    notBefore: row.notBefore,
    deadlineAt: row.deadlineAt,
    sessionId: row.sessionId,
    runId: row.runId,
    failureKind: row.failureKind as FailureKind | null,
    lastError: row.lastError,
    originTaskId: row.originTaskId,
    createdAt: row.createdAt,
    updatedAt: row.updatedAt,
    completedAt: row.completedAt,
  };
}

export function taskView(t: ToolchainTask) {
  return {
    id: t.id,
    agent_id: t.agentId,
    title: t.title,
    description: t.description,
    event_type: t.eventType,
    action_type: t.actionType,
    must_haves: t.mustHaves,
    repo: t.repo,
    number: t.number,
    status: t.status,
    attempts: t.attempts,
    business_failures: t.businessFailures,
    reminder_sent: t.reminderSent,
    not_before: t.notBefore,
    deadline_at: t.deadlineAt,
    session_id: t.sessionId,
    run_id: t.runId,
    failure_kind: t.failureKind,
    last_error: t.lastError,
    origin_task_id: t.originTaskId,
    delivery_id: t.deliveryId,
    created_at: t.createdAt,
    updated_at: t.updatedAt,
    completed_at: t.completedAt,
  };
}

export const commentView = (c: TaskComment) => ({
  id: c.id,
  author: c.author,
  comment_type: c.commentType,
  body: c.body,
  created_at: c.createdAt,
});
export const outputView = (o: TaskOutput) => ({ id: o.id, type: o.type, content: o.content, created_at: o.createdAt });
export const historyView = (h: TaskHistoryEntry) => ({
  id: h.id,
  event: h.event,
  from_status: h.fromStatus,
  to_status: h.toStatus,
  detail: h.detail,
  at: h.at,
});
