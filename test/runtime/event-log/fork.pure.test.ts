// forkEvents (src/runtime/session/fork.ts; docs/sessions.md, "Fork"): the branch root → event with new
// ids, parents and compaction references rewritten, other branches and run facts left behind.
import { describe, expect, it } from "vitest";
import { LogBuilder } from "../../support/log-builder.ts";
import { forkEvents } from "../../../src/runtime/session/fork.ts";
import { SessionTree } from "../../../src/runtime/session/tree.ts";
import type { NewPersistent, PersistentEvent } from "../../../src/runtime/session/events.ts";

/** The fork's events numbered the way SessionLog.append would, to check they form a valid tree. */
function replay(events: NewPersistent[]): SessionTree {
  return SessionTree.fromEvents(events.map((e, i) => ({ ...e, seq: i + 1, session_id: "ses_fork", ts: i }) as unknown as PersistentEvent));
}

describe("forkEvents", () => {
  it("copies only the path to the event, with new ids and rewritten references", () => {
    const log = new LogBuilder();
    const q1 = log.user("first");
    log.hidden("run_started");
    const a1 = log.assistant("one");
    log.user("second");
    log.assistant("two");
    const compact = log.compact("summary of first", a1.id);
    log.rewind(a1.id);
    const other = log.user("another branch");

    const copied = forkEvents(log.tree, compact.id);
    expect(copied.map((e) => e.type)).toEqual(["message", "message", "message", "message", "compact"]);
    const ids = copied.map((e) => e.id!);
    expect(ids).not.toContain(q1.id);
    expect(new Set(ids).size).toBe(5);
    expect(copied[0]!.parent_id).toBeNull();
    expect(copied.slice(1).map((e) => e.parent_id)).toEqual(ids.slice(0, -1));
    expect((copied[4] as Extract<NewPersistent, { type: "compact" }>).compacted_through).toBe(ids[1]);
    // Run ids stay: the workspace's recorded trees are keyed by them.
    expect(copied.every((e) => e.run_id === "run_1")).toBe(true);
    // The other branch's event is referenced nowhere (compared as ids: the log builder's short ids, such as
    // "e8", can occur inside the random new ids, so a substring search of the JSON failed now and then).
    const references = copied.flatMap((e) => [e.id, e.parent_id, "compacted_through" in e ? e.compacted_through : null]);
    expect(references).not.toContain(other.id);
    expect(JSON.stringify(copied)).not.toContain("another branch");
    expect(replay(copied).size).toBe(5);
  });

  it("an empty session forks to nothing", () => {
    expect(forkEvents(new LogBuilder().tree, null)).toEqual([]);
  });
});
