/**
 * Calling the workspace write lock from a Worker: one stub per workspace, outcomes back to AppErrors.
 * An explicit (`wait`) call owns its bound (docs/skills-and-plugins.md, "The workspace write lock"):
 * it sends an absolute deadline with the op and races the call against its own timer, so the client
 * hears `busy` near the bound even when the object is too busy to answer. The object asks `start()`
 * before running an op; once this side has answered busy, `start()` says no and nothing runs.
 */
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { unwrap, type Outcome } from "../../kernel/outcome.ts";
import type { Measured, WorkspaceDO } from "./workspace-do.ts";
import type { OpKind, OpResults, WorkspaceOp } from "./ops.ts";
import { busyError, DEFAULT_LOCK_WAIT_MS, type LockCall, type LockMode } from "./lock.ts";

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
): Promise<OpResults[K]> {
  return (await runLockedMeasured(env, workspaceId, op, mode)).value;
}

/** `runLocked`, also returning how many R2 writes the operation made (measured, not assumed). */
export async function runLockedMeasured<K extends OpKind>(
  env: Env,
  workspaceId: string,
  op: Extract<WorkspaceOp, { kind: K }>,
  mode: LockMode = "wait",
): Promise<{ value: OpResults[K]; r2Writes: number }> {
  const stub = workspaceStub(env, workspaceId);
  // The RPC stub widens the generic result; the DO returns exactly Outcome<Measured<OpResults[K]>>.
  const rpc = (call: LockCall) => stub.run(workspaceId, op, call) as unknown as Promise<Outcome<Measured<OpResults[K]>>>;
  if (mode === "try") return unwrap(await rpc({ mode: "try" }));

  const waitMs = lockWaitMsOf(env);
  let state: "waiting" | "started" | "gave_up" = "waiting";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const call: LockCall = {
    mode: "wait",
    deadline: Date.now() + waitMs,
    waitMs,
    start: () => {
      if (state === "gave_up") return false;
      state = "started";
      clearTimeout(timer);
      return true;
    },
  };
  const gaveUp = new Promise<"gave_up">((resolve) => {
    timer = setTimeout(() => {
      if (state !== "waiting") return;
      state = "gave_up";
      resolve("gave_up");
    }, waitMs + LOCK_CALL_GRACE_MS);
  });
  const answer = rpc(call);
  // After giving up, the object's late answer (busy: `start` said no) is dropped.
  answer.catch(() => undefined);
  try {
    const first = await Promise.race([answer, gaveUp]);
    if (first === "gave_up") {
      const { message, details, retryAfter } = busyError(call);
      throw new AppError("busy", message, { details, retryAfter });
    }
    return unwrap(first);
  } finally {
    clearTimeout(timer);
  }
}

/** The GC epoch to pass along with content stored before calling `runLocked`. */
export async function storeEpoch(env: Env, workspaceId: string): Promise<number> {
  return workspaceStub(env, workspaceId).gcEpoch();
}
