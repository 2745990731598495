/**
 * How routes and the `schedule` tool reach a workspace's ScheduleDO (docs/schedules.md): one object
 * per workspace, addressed by the workspace id, its `Outcome`s turned back into values or AppErrors.
 * A schedule naming a session is only accepted when that session is the caller's workspace's.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { unwrap, type Outcome } from "../../kernel/outcome.ts";
import { SessionClient, assertMessageSize } from "../../runtime/index.ts";
import { limitsOf } from "../../storage/limits.ts";
import type { ScheduleObject } from "./schedule-do.ts";
import { newSchedule, type ScheduleInput, type ScheduleView } from "./spec.ts";

/** Schedule ids as issued (`sch_…`); anything else is simply not found. */
export const SCHEDULE_ID_PATTERN = /^sch_[a-z0-9]{20}$/;

export function scheduleStub(env: Env, workspaceId: string): DurableObjectStub<ScheduleObject> {
  if (!env.SCHEDULES) throw new AppError("server_misconfigured", "The SCHEDULES Durable Object binding is missing");
  const ns = env.SCHEDULES as unknown as DurableObjectNamespace<ScheduleObject>;
  return ns.get(ns.idFromName(workspaceId));
}

// workers-types maps RPC results through `Serializable`; the views are plain JSON (see `SessionResult` in src/runtime/session/client.ts).
type Wire<T> = Promise<Outcome<T>>;
const view = async (p: Promise<unknown>): Promise<ScheduleView> => unwrap(await (p as Wire<ScheduleView>));

export async function createSchedule(env: Env, workspaceId: string, input: ScheduleInput, createdBy: string): Promise<ScheduleView> {
  assertMessageSize(input.message, limitsOf(env).message_bytes, "message");
  const spec = newSchedule(input, createdBy);
  if (spec.session_id !== null) await SessionClient.of(env, spec.session_id).view(workspaceId);
  return view(scheduleStub(env, workspaceId).create(workspaceId, spec));
}

export async function listSchedules(env: Env, workspaceId: string, sessionId?: string): Promise<ScheduleView[]> {
  return unwrap(await (scheduleStub(env, workspaceId).list(workspaceId, sessionId) as unknown as Wire<ScheduleView[]>));
}

/**
 * The API's list: a `sessionId` filter naming another workspace's (or no) session answers 404, as creating
 * with it does, rather than an empty list (issue 25). The `schedule` tool lists its own session's directly.
 */
export async function listSchedulesChecked(env: Env, workspaceId: string, sessionId?: string): Promise<ScheduleView[]> {
  if (sessionId !== undefined) await SessionClient.of(env, sessionId).view(workspaceId);
  return listSchedules(env, workspaceId, sessionId);
}

export async function getSchedule(env: Env, workspaceId: string, id: string, sessionId?: string): Promise<ScheduleView> {
  if (!SCHEDULE_ID_PATTERN.test(id)) throw new AppError("not_found", `Schedule '${id}' not found`);
  return view(scheduleStub(env, workspaceId).get(workspaceId, id, sessionId));
}

export async function deleteSchedule(env: Env, workspaceId: string, id: string, sessionId?: string): Promise<ScheduleView> {
  if (!SCHEDULE_ID_PATTERN.test(id)) throw new AppError("not_found", `Schedule '${id}' not found`);
  return view(scheduleStub(env, workspaceId).delete(workspaceId, id, sessionId));
}
