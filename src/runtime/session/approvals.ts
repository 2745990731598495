/**
 * Tool approval inside the SessionDO (docs/approvals.md). The log is the record: a call that needs a
 * person gets a `tool_approval_requested` event and a row in the `approvals` table in one transaction;
 * the decision (a person over HTTP or the live channel, the timeout from the alarm, or the run ending
 * first) is a `tool_approval_decided` event and the row's decision, again in one transaction. A run
 * waiting for a decision holds nothing but an in-memory waiter, so an eviction loses nothing: the
 * resumed run finds the request in the table and waits again (or goes on if it was decided meanwhile).
 */
import { AppError, notFound } from "../../kernel/errors.ts";
import type { ApprovalRow } from "./do-storage.ts";
import type { PersistentEvent, ToolApprovalDecidedEvent } from "./events.ts";
import type { SessionLog } from "./session-log.ts";

export type ApprovalDecision = "approve" | "deny";
export type DecidedBy = ToolApprovalDecidedEvent["decided_by"];

export interface DecisionOutcome {
  decision: ApprovalDecision;
  decided_by: DecidedBy;
}

/** Runs waiting in memory for a decision, by approval id. */
export class ApprovalWaiters {
  readonly #waiting = new Map<string, (outcome: DecisionOutcome) => void>();
  #onWait: (() => void)[] = [];

  get size(): number {
    return this.#waiting.size;
  }

  /** Resolves with the decision; rejects with the signal's reason when the run is cancelled first. */
  wait(approvalId: string, signal: AbortSignal): Promise<DecisionOutcome> {
    return new Promise<DecisionOutcome>((resolve, reject) => {
      if (signal.aborted) return reject(signal.reason);
      const onAbort = () => {
        this.#waiting.delete(approvalId);
        reject(signal.reason);
      };
      signal.addEventListener("abort", onAbort, { once: true });
      this.#waiting.set(approvalId, (outcome) => {
        signal.removeEventListener("abort", onAbort);
        this.#waiting.delete(approvalId);
        resolve(outcome);
      });
      const notify = this.#onWait;
      this.#onWait = [];
      for (const fn of notify) fn();
    });
  }

  /**
   * Resolves when some run is (or next becomes) idle, waiting for a person; `stop` forgets the
   * request (so callers that stopped caring leave nothing behind).
   */
  whenSomeoneWaits(): { promise: Promise<void>; stop(): void } {
    if (this.#waiting.size > 0) return { promise: Promise.resolve(), stop: () => undefined };
    let done!: () => void;
    const promise = new Promise<void>((resolve) => (done = resolve));
    this.#onWait.push(done);
    return { promise, stop: () => (this.#onWait = this.#onWait.filter((fn) => fn !== done)) };
  }

  /** Hands a decision to the run waiting for it; false when none waits in this instance (it was evicted). */
  resolve(approvalId: string, outcome: DecisionOutcome): boolean {
    const done = this.#waiting.get(approvalId);
    done?.(outcome);
    return done !== undefined;
  }
}

/**
 * Records a decision: 404 for an id this session never issued, 409 when it was decided already.
 * Returns the decided event; the caller hands the outcome to the waiting run (or wakes the queue).
 */
export function recordDecision(
  log: SessionLog,
  approvalId: string,
  decision: ApprovalDecision,
  decidedBy: DecidedBy,
  clientId: string,
): { event: PersistentEvent; row: ApprovalRow } {
  const row = log.store.approval(approvalId);
  if (!row) throw notFound("Approval");
  if (row.decision !== null)
    throw new AppError("conflict", `Approval ${approvalId} was already decided (${row.decision})`, {
      details: { approval_id: approvalId, decision: row.decision },
    });
  const now = Date.now();
  const event = log.appendOne(
    {
      type: "tool_approval_decided",
      run_id: row.run_id,
      client_id: clientId,
      approval_id: approvalId,
      tool_call_id: row.tool_call_id,
      tool_name: row.tool_name,
      decision,
      decided_by: decidedBy,
    },
    () => log.store.decideApproval(approvalId, decision, decidedBy, now),
  );
  return { event, row: { ...row, decision, decided_by: decidedBy, decided_at: now } };
}

/** The tool error the model reads when its call was not approved. */
export function deniedText(toolName: string, decidedBy: DecidedBy): string {
  switch (decidedBy) {
    case "timeout":
      return `The call to '${toolName}' needed approval and nobody answered in time, so it was denied and not run. Do not retry it unasked; tell the user.`;
    case "cancelled":
      return `The call to '${toolName}' was waiting for approval when the run ended; it was not run.`;
    case "person":
      return `A person denied the call to '${toolName}'; it was not run. Do not retry it unasked; continue without it or ask the user.`;
  }
}
