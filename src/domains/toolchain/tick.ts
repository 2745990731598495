/**
 * The toolchain's cron job (every minute): one dispatch pass over every workspace with open
 * toolchain tasks or mail. Workspaces are independent; one failing never stops the others.
 */
import type { Env } from "../../storage/env.ts";
import { dispatchMail } from "../mail/dispatcher.ts";
import { workspacesWithOpenMail } from "../mail/store.ts";
import { dispatchWorkspace } from "./dispatcher.ts";
import { workspacesWithOpenTasks } from "./task-store.ts";

export async function runToolchainTick(env: Env, now: number): Promise<void> {
  const [tasks, mail] = await Promise.all([workspacesWithOpenTasks(env, now), workspacesWithOpenMail(env)]);
  const results = await Promise.allSettled([
    ...tasks.map((ws) => dispatchWorkspace(env, ws, now)),
    ...mail.map((ws) => dispatchMail(env, ws, now)),
  ]);
  const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
  if (failed.length) throw new AggregateError(failed.map((f) => f.reason), `${failed.length} toolchain dispatch pass(es) failed`);
}
