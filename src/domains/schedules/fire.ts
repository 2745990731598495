/**
 * Sending one slot of a schedule (docs/schedules.md, "Firing"): the message goes to the schedule's
 * session, or to a new session made for this slot, as a run whose `idempotency_key` is the schedule
 * id and the slot time. A slot sent twice (an alarm retried after a crash, a lost answer) therefore
 * starts one run, and a per-slot session id makes the new-session case just as idempotent. The run
 * carries `client_id: schedule:<id>` and, in its `tool_data`, who scheduled it — both are in the
 * session's `run_started` event.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { SessionClient, type SubmitOutcome } from "../../runtime/index.ts";
import { enforceQuota } from "../../storage/quotas.ts";

export interface DueSlot {
  workspaceId: string;
  scheduleId: string;
  sessionId: string | null;
  message: string;
  createdBy: string;
  /** The slot time, ms since the epoch. */
  slot: number;
}

export const scheduleClientId = (scheduleId: string): string => `schedule:${scheduleId}`;

/** The run's idempotency key for one slot: same schedule, same slot → same run. */
export const slotKey = (scheduleId: string, slot: number): string => `schedule:${scheduleId}:${new Date(slot).toISOString()}`;

/** The session a new-session schedule sends one slot to. */
export const slotSessionId = (scheduleId: string, slot: number): string => `${scheduleId}-${slot}`;

/** Sends the slot; returns the session and run. Throws AppError (not_found, session_closed, quota…) or transport errors. */
export async function fireSlot(env: Env, due: DueSlot): Promise<SubmitOutcome & { session_id: string }> {
  const sessionId = due.sessionId ?? slotSessionId(due.scheduleId, due.slot);
  const session = SessionClient.of(env, sessionId);
  if (due.sessionId === null) {
    const exists = await session.view(due.workspaceId).then(
      () => true,
      (e: unknown) => {
        if (e instanceof AppError && e.code === "not_found") return false;
        throw e;
      },
    );
    if (!exists) {
      await enforceQuota(env, due.workspaceId, "sessions");
      await SessionClient.create(env, {
        workspaceId: due.workspaceId,
        id: sessionId,
        title: `Schedule ${due.scheduleId} at ${new Date(due.slot).toISOString()}`,
        metadata: { schedule_id: due.scheduleId, slot: new Date(due.slot).toISOString(), scheduled_by: due.createdBy },
      });
    }
  }
  const out = await session.submit({
    workspace_id: due.workspaceId,
    content: due.message,
    client_id: scheduleClientId(due.scheduleId),
    idempotency_key: slotKey(due.scheduleId, due.slot),
    tool_data: { schedule: { id: due.scheduleId, slot: new Date(due.slot).toISOString(), scheduled_by: due.createdBy } },
    // Not from an API client: recorded as `channel_inject` before the message (docs/channels.md).
    channel: {
      channel: "schedule",
      external_id: slotKey(due.scheduleId, due.slot),
      metadata: { schedule_id: due.scheduleId, slot: new Date(due.slot).toISOString(), scheduled_by: due.createdBy },
    },
  });
  return { ...out, session_id: sessionId };
}
