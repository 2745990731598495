/** Calling the workspace write lock from a Worker: one stub per workspace, outcomes back to AppErrors. */
import type { Env } from "../../storage/env.ts";
import { unwrap, type Outcome } from "../../kernel/outcome.ts";
import type { LockMode, Measured, WorkspaceDO } from "./workspace-do.ts";
import type { OpKind, OpResults, WorkspaceOp } from "./ops.ts";

/** The WORKSPACES binding, typed by the class this domain owns (Env itself names no class). */
export function workspaceNamespace(env: Env): DurableObjectNamespace<WorkspaceDO> {
  return env.WORKSPACES as unknown as DurableObjectNamespace<WorkspaceDO>;
}

export function workspaceStub(env: Env, workspaceId: string) {
  return workspaceNamespace(env).get(workspaceNamespace(env).idFromName(workspaceId));
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
  // The RPC stub widens the generic result; the DO returns exactly Outcome<OpResults[K]>.
  const outcome = (await workspaceStub(env, workspaceId).run(workspaceId, op, mode)) as unknown as Outcome<Measured<OpResults[K]>>;
  return unwrap(outcome);
}

/** The GC epoch to pass along with content stored before calling `runLocked`. */
export async function storeEpoch(env: Env, workspaceId: string): Promise<number> {
  return workspaceStub(env, workspaceId).gcEpoch();
}
