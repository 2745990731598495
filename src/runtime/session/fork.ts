/**
 * Forking a session (docs/sessions.md, "Fork"): the branch from the root to one event, copied as a
 * new session's history. Pure: it takes the source's tree and answers the events to append in the
 * fork. Event ids are global (D1 keys them), so every copied event gets a new id and the references
 * between copied events (`parent_id`, a compaction's `compacted_through`) follow the new ids; run ids
 * and tool call ids are kept, so the workspace's recorded trees (keyed by run and call) still apply.
 */
import type { NewPersistent, VisibleEvent } from "./events.ts";
import type { SessionTree } from "./tree.ts";
import { newId } from "../../kernel/ids.ts";

/** Where a fork came from: the source session and the event its history ends at (null: the source was empty). */
export interface ForkOrigin {
  session_id: string;
  event_id: string | null;
}

/** A fork recorded on its source session (`SessionInfo.forks`, newest last, at most MAX_RECORDED_FORKS). */
export interface ForkRecord extends ForkOrigin {
  at: number;
}

/** The source keeps this many of its newest forks in its session info; every fork is also a `session_info` event. */
export const MAX_RECORDED_FORKS = 100;

/** The fork's events: the path root → `eventId` of `tree`, with new ids and the references between them rewritten. */
export function forkEvents(tree: SessionTree, eventId: string | null): NewPersistent[] {
  const ids = new Map<string, string>();
  const out: NewPersistent[] = [];
  for (const event of tree.pathToRoot(eventId)) {
    const id = newId("evt");
    ids.set(event.id, id);
    out.push(copied(event, id, ids));
  }
  return out;
}

function copied(event: VisibleEvent, id: string, ids: ReadonlyMap<string, string>): NewPersistent {
  const { seq: _seq, session_id: _session, ts: _ts, ...rest } = event;
  const parent = event.parent_id === null ? null : (ids.get(event.parent_id) ?? null);
  const base = { ...rest, id, parent_id: parent };
  if (event.type === "compact")
    return { ...base, compacted_through: ids.get(event.compacted_through) ?? event.compacted_through } as NewPersistent;
  return base as NewPersistent;
}
