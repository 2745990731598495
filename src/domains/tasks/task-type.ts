/**
 * A kind of agent task the cron dispatches (toolchain tasks, mail): which workspaces have open work
 * and one dispatch pass over a workspace. Each domain defines its own; the composition root
 * registers them (src/app/tasks.ts), so the task domains never import each other.
 */
import type { Env } from "../../storage/env.ts";

export interface TaskType {
  name: string;
  openWorkspaces(env: Env, now: number): Promise<string[]>;
  dispatch(env: Env, workspaceId: string, now: number): Promise<unknown>;
}

/** One dispatch pass per workspace and task type; passes are independent and one failing never stops the others. */
export async function dispatchTaskTypes(env: Env, now: number, types: readonly TaskType[]): Promise<void> {
  const passes = await Promise.all(types.map(async (type) => ({ type, workspaces: await type.openWorkspaces(env, now) })));
  const results = await Promise.allSettled(passes.flatMap(({ type, workspaces }) => workspaces.map((ws) => type.dispatch(env, ws, now))));
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed.length)
    throw new AggregateError(
      failed.map((f) => f.reason),
      `${failed.length} task dispatch pass(es) failed`,
    );
}
