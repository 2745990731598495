/**
 * The one way toolchain tasks and mail change status: a conditional UPDATE (`WHERE status IN
 * (…)`) and its history row in the same D1 batch, the history row written only when the update
 * applied (`changes() > 0` of the statement before it; a batch is one transaction). So two
 * dispatchers never both claim a task, and no change goes unrecorded.
 */
import type { Env } from "../../storage/env.ts";
import { newId } from "../../kernel/ids.ts";

/** Where a kind of task lives: its table, its history table and the history's task column. */
export interface StatusTables {
  table: "toolchain_tasks" | "mail_tasks";
  history: "toolchain_task_history" | "mail_task_history";
  historyKey: "task_id" | "mail_id";
  historyIdPrefix: string;
}

export interface StatusChange<S extends string, P extends object> {
  from: S[];
  to: S;
  /** Columns to set with the status, by their SQL names. */
  set?: P;
  event: string;
  detail?: Record<string, unknown>;
  now?: number;
}

/**
 * Move row `id` from one of `from` to `to` (possibly the same status, to update its columns).
 * False when it was not in `from` (someone else moved it first): then nothing changed and nothing
 * was recorded.
 */
export async function changeStatus<S extends string, P extends object>(
  env: Env,
  t: StatusTables,
  workspaceId: string,
  id: string,
  c: StatusChange<S, P>,
): Promise<boolean> {
  const now = c.now ?? Date.now();
  const patch = { ...c.set, status: c.to, updated_at: now } as Record<string, string | number | null>;
  const cols = Object.keys(patch);
  const update = env.DB.prepare(
    `UPDATE ${t.table} SET ${cols.map((col) => `${col} = ?`).join(", ")} WHERE workspace_id = ? AND id = ? AND status IN (${c.from.map(() => "?").join(", ")})`,
  ).bind(...cols.map((col) => patch[col] ?? null), workspaceId, id, ...c.from);
  const history = env.DB.prepare(
    `INSERT INTO ${t.history} (id, ${t.historyKey}, workspace_id, event, from_status, to_status, detail, at) SELECT ?, ?, ?, ?, ?, ?, ?, ? WHERE changes() > 0`,
  ).bind(newId(t.historyIdPrefix), id, workspaceId, c.event, c.from.join("|"), c.to, JSON.stringify(c.detail ?? {}), now);
  const [res] = await env.DB.batch([update, history]);
  return (res?.meta.changes ?? 0) > 0;
}
