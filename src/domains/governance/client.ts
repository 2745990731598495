/**
 * Calling the workspace write lock from a Worker: one stub per workspace, outcomes back to AppErrors.
 * An explicit (`wait`) call owns its bound (docs/skills-and-plugins.md, "The workspace write lock"):
 * it sends an absolute deadline with the op and races the call against its own timer, so the client
 * hears `busy` near the bound even when the object is too busy to answer. The object asks `start()`
 * before running an op; once this side has answered busy, `start()` says no and nothing runs. A
 * write that waits for other things first (epoch, quota, storing its tree) takes one budget when it
 * starts (lock-budget.ts) and spends it on every step, the lock included.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { unwrap, type Outcome } from "../../kernel/outcome.ts";
import type { Measured, WorkspaceDO } from "./workspace-do.ts";
import type { OpKind, OpResults, WorkspaceOp } from "./ops.ts";
import { busyError, DEFAULT_LOCK_WAIT_MS, type LockCall, type LockMode } from "./lock.ts";
import { busyDetails, lockBudget, stepTimerMs, type LockBudget, type LockStage } from "./lock-budget.ts";

/** How long past its deadline the caller still waits for the object's own answer (RPC latency). */
export const LOCK_CALL_GRACE_MS = 500;

/** The WORKSPACES binding, typed by the class this domain owns (Env itself names no class). */
export function workspaceNamespace(env: Env): DurableObjectNamespace<WorkspaceDO> {
  return env.WORKSPACES as unknown as DurableObjectNamespace<WorkspaceDO>;
}

export function workspaceStub(env: Env, workspaceId: string) {
  return workspaceNamespace(env).get(workspaceNamespace(env).idFromName(workspaceId));
}

/** How long explicit operations wait for the lock: `BEAVER_LOCK_WAIT_MS` when it is a positive integer, else 10 s. */
export function lockWaitMsOf(env: Env): number {
  const raw = env.BEAVER_LOCK_WAIT_MS?.trim() ?? "";
  const ms = /^\d{1,9}$/.test(raw) ? Number(raw) : 0;
  return ms > 0 ? ms : DEFAULT_LOCK_WAIT_MS;
}

/** Run `op` under the workspace lock; a busy lock or a failed op throws the AppError it carried. */
export async function runLocked<K extends OpKind>(
  env: Env,
  workspaceId: string,
  op: Extract<WorkspaceOp, { kind: K }>,
  mode: LockMode = "wait",
  budget?: LockBudget,
): Promise<OpResults[K]> {
  return (await runLockedMeasured(env, workspaceId, op, mode, budget)).value;
}

/** The budget of an explicit write, starting now (`BEAVER_LOCK_WAIT_MS`); take it once, when the request starts. */
export function startLockBudget(env: Env): LockBudget {
  return lockBudget(lockWaitMsOf(env), Date.now());
}

/** The `busy` answer of a caller that gave up in `stage`, with the wait it measured. */
function gaveUp(budget: LockBudget, stage: LockStage): AppError {
  const { message, retryAfter } = busyError({ mode: "wait", deadline: budget.deadline, waitMs: budget.waitMs, start: () => false });
  return new AppError("busy", message, { details: busyDetails(budget, Date.now(), stage), retryAfter });
}

/**
 * `work` (a step before the lock: the epoch, the quota count, storing the tree), or `busy` once the
 * budget is spent. A step given up on may still finish in the background: it changes no skill or
 * plugin state (storeTree's blobs and index rows are content-addressed and unreferenced, and the
 * orphan collector takes them), so nothing of a write that answered busy becomes visible.
 */
export async function beforeDeadline<T>(budget: LockBudget, stage: LockStage, work: () => Promise<T>): Promise<T> {
  const ms = stepTimerMs(budget, Date.now());
  if (ms === 0) throw gaveUp(budget, stage);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<"late">((resolve) => (timer = setTimeout(() => resolve("late"), ms)));
  const running = work();
  running.catch(() => undefined);
  try {
    const first = await Promise.race([running.then((value) => ({ value })), late]);
    if (first === "late") throw gaveUp(budget, stage);
    return first.value;
  } finally {
    clearTimeout(timer);
  }
}

/**
 * `runLocked`, also returning how many R2 writes the operation made (measured, not assumed). A
 * `budget` started earlier (startLockBudget) bounds the wait from the request's start, so the steps
 * before the lock count against it; without one the wait starts now.
 */
export async function runLockedMeasured<K extends OpKind>(
  env: Env,
  workspaceId: string,
  op: Extract<WorkspaceOp, { kind: K }>,
  mode: LockMode = "wait",
  budget?: LockBudget,
): Promise<{ value: OpResults[K]; r2Writes: number }> {
  const stub = workspaceStub(env, workspaceId);
  // The RPC stub widens the generic result; the DO returns exactly Outcome<Measured<OpResults[K]>>.
  const rpc = (call: LockCall) => stub.run(workspaceId, op, call) as unknown as Promise<Outcome<Measured<OpResults[K]>>>;
  if (mode === "try") return unwrap(await rpc({ mode: "try" }));

  const b = budget ?? startLockBudget(env);
  const timerMs = stepTimerMs(b, Date.now(), LOCK_CALL_GRACE_MS);
  // Spent before the lock was even asked: nothing is sent, so nothing can run.
  if (timerMs === 0) throw gaveUp(b, "lock");
  let state: "waiting" | "started" | "gave_up" = "waiting";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const call: LockCall = {
    mode: "wait",
    deadline: b.deadline,
    waitMs: b.waitMs,
    start: () => {
      if (state === "gave_up") return false;
      state = "started";
      clearTimeout(timer);
      return true;
    },
  };
  const caller = new Promise<"gave_up">((resolve) => {
    timer = setTimeout(() => {
      if (state !== "waiting") return;
      state = "gave_up";
      resolve("gave_up");
    }, timerMs);
  });
  const answer = rpc(call);
  // After giving up, the object's late answer (busy: `start` said no) is dropped.
  answer.catch(() => undefined);
  try {
    const first = await Promise.race([answer, caller]);
    if (first === "gave_up") throw gaveUp(b, "lock");
    // The object's own busy answer gets the wait measured here too.
    if (!first.ok && first.error.code === "busy") throw gaveUp(b, "lock");
    return unwrap(first);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * The GC epoch to pass along with content stored before calling `runLocked`. It is an RPC to the
 * lock's own object, which long work (a big sync) can keep from answering, so it spends `budget`
 * (a fresh one when none is given) and answers `busy` when that runs out (lock-budget.ts).
 */
export async function storeEpoch(env: Env, workspaceId: string, budget: LockBudget = startLockBudget(env)): Promise<number> {
  return beforeDeadline(budget, "epoch", () => workspaceStub(env, workspaceId).gcEpoch());
}
