/**
 * The D1 half of deleting a session (docs/sessions.md, "Rename, archive, delete"): its replicated
 * events (the search index follows through migration 0004's delete trigger), its runs and its list
 * row, in one batch, only in the caller's workspace. Run after the session's Durable Object wiped its
 * log (`SessionClient.purge`), so the replicator has nothing left to copy back; a retried delete finds the
 * rows a failed batch left and removes them.
 */
import type { Env } from "../../storage/env.ts";

/** Deletes the session's rows in D1; true when there was a list row to delete. */
export async function deleteSessionCopy(env: Env, workspaceId: string, sessionId: string): Promise<boolean> {
  const d1 = env.DB;
  const [, , listRow] = await d1.batch([
    d1.prepare(`DELETE FROM session_events WHERE session_id = ? AND workspace_id = ?`).bind(sessionId, workspaceId),
    d1.prepare(`DELETE FROM session_runs WHERE session_id = ? AND workspace_id = ?`).bind(sessionId, workspaceId),
    d1.prepare(`DELETE FROM sessions WHERE id = ? AND workspace_id = ?`).bind(sessionId, workspaceId),
  ]);
  return (listRow?.meta.changes ?? 0) > 0;
}
