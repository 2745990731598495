// SessionTree: building, walks, leaves, the active-leaf fold and rewind/branch target checks.
import { describe, expect, it } from "vitest";
import type { PersistentEvent } from "../../../src/runtime/session/events.ts";
import {
  SessionTree,
  SessionTreeError,
  activeLeafAfter,
  describeRejection,
  foldActiveLeaf,
  validateBranchTarget,
  validateRewindTarget,
} from "../../../src/runtime/session/tree.ts";
import { LogBuilder, prng } from "../../support/log-builder.ts";

const ids = (events: { id: string }[]) => events.map((e) => e.id);

/** u1 → a1 → u2 → a2, then rewind to a1 and continue with u3 → a3. */
function rewoundSession() {
  const log = new LogBuilder();
  log.hidden("run_started");
  const u1 = log.user("first question");
  const a1 = log.assistant("first answer");
  log.hidden("run_completed");
  const u2 = log.user("second question");
  const a2 = log.assistant("second answer");
  const rw = log.rewind(a1.id);
  const u3 = log.user("another second question");
  const a3 = log.assistant("another second answer");
  return { log, u1, a1, u2, a2, rw, u3, a3 };
}

describe("SessionTree building", () => {
  it("links visible events by parent and leaves hidden run facts out", () => {
    const { log, u1, a1, u2, a2, rw, u3, a3 } = rewoundSession();
    const tree = log.tree;
    expect(tree.size).toBe(7);
    expect(tree.contains(u1.id)).toBe(true);
    expect(tree.contains("e1")).toBe(false); // run_started
    expect(tree.isHiddenEvent("e1")).toBe(true);
    expect(tree.get(a1.id)).toBe(a1);
    expect(ids([...tree.children(a1.id)])).toEqual([u2.id, u3.id]);
    expect(ids([...tree.children(a2.id)])).toEqual([rw.id]);
    expect(ids(tree.pathToRoot(a3.id))).toEqual([u1.id, a1.id, u3.id, a3.id]);
    expect(ids([...tree.ancestors(a3.id)])).toEqual([a3.id, u3.id, a1.id, u1.id]);
    expect(ids(tree.events())).toEqual(ids(log.events.filter((e) => tree.contains(e.id))));
  });

  it("builds the same tree from a shuffled log", () => {
    const { log } = rewoundSession();
    const random = prng(7);
    const shuffled = [...log.events].sort(() => random() - 0.5);
    const rebuilt = SessionTree.fromEvents(shuffled);
    expect(ids(rebuilt.events())).toEqual(ids(log.tree.events()));
    expect(ids(rebuilt.leaves())).toEqual(ids(log.tree.leaves()));
    for (const event of log.tree.events()) {
      expect(ids([...rebuilt.children(event.id)])).toEqual(ids([...log.tree.children(event.id)]));
    }
  });

  it("knows leaves: message ends of every branch, never rewind/branch markers", () => {
    const { log, a2, rw, a3 } = rewoundSession();
    expect(ids(log.tree.leaves())).toEqual([a2.id, a3.id]);
    expect(log.tree.isLeaf(a2.id)).toBe(true); // its only child is the rewind marker
    expect(log.tree.isLeaf(rw.id)).toBe(false);
    expect(log.tree.isMarker(rw.id)).toBe(true);
    expect(log.tree.isMarker(a2.id)).toBe(false);
  });

  it("treats a node reached only through a marker as no longer a leaf", () => {
    const log = new LogBuilder();
    const u1 = log.user("q");
    const rw = log.rewind(u1.id);
    // An event hung under the marker itself (not what the SessionDO does, but a valid tree).
    const odd = log.push({ type: "custom", kind: "note", data: null }, { parent: rw.id });
    expect(ids(log.tree.leaves())).toEqual([odd.id]);
    expect(ids(log.tree.pathToRoot(odd.id))).toEqual([u1.id, rw.id, odd.id]);
  });

  it("accepts a replayed event once and refuses a conflicting one", () => {
    const { log, a1 } = rewoundSession();
    expect(log.tree.add(a1)).toBe(false);
    expect(log.tree.add(log.events[0]!)).toBe(false); // hidden replay
    const clash = { ...a1, seq: 999 };
    expect(() => log.tree.add(clash)).toThrow(SessionTreeError);
    try {
      log.tree.add(clash);
    } catch (error) {
      expect(error).toMatchObject({ reason: "duplicate_id", eventId: a1.id });
    }
  });

  it("refuses a visible event whose parent is unknown or hidden", () => {
    const log = new LogBuilder();
    const hidden = log.hidden("run_started");
    const orphan: PersistentEvent = { ...log.user("x"), id: "zz", parent_id: "nope", seq: 100 };
    expect(() => log.tree.add(orphan)).toThrow(expect.objectContaining({ reason: "unknown_parent" }));
    const underHidden: PersistentEvent = { ...orphan, id: "zy", parent_id: hidden.id, seq: 101 };
    expect(() => log.tree.add(underHidden)).toThrow(expect.objectContaining({ reason: "hidden_parent" }));
  });

  it("walks nothing from a null leaf and refuses an unknown one", () => {
    const tree = new SessionTree();
    expect(tree.pathToRoot(null)).toEqual([]);
    expect(() => tree.pathToRoot("missing")).toThrow(expect.objectContaining({ reason: "unknown_event" }));
  });
});

describe("active leaf fold", () => {
  it("moves to each visible event, to a rewind's target, a branch's leaf, and ignores hidden facts", () => {
    const { log, a1, a2, u3, a3 } = rewoundSession();
    expect(log.leaf).toBe(a3.id);
    expect(u3.parent_id).toBe(a1.id); // the new message attaches to the rewind target
    expect(foldActiveLeaf(log.events)).toBe(a3.id);
    expect(foldActiveLeaf([...log.events].reverse())).toBe(a3.id); // folded by seq, not list order
    const branch = log.branch(a2.id);
    expect(activeLeafAfter(a3.id, branch)).toBe(a2.id);
    expect(log.leaf).toBe(a2.id);
    const hidden = log.hidden("run_failed");
    expect(activeLeafAfter(a2.id, hidden)).toBe(a2.id);
    expect(activeLeafAfter(null, hidden)).toBeNull();
    const info = log.sessionInfo({ title: "t" });
    expect(info.parent_id).toBe(a2.id);
    expect(log.leaf).toBe(info.id);
  });
});

describe("rewind and branch targets", () => {
  it("accepts any visible place for a rewind and only leaves for a branch", () => {
    const { log, u1, a2, a3 } = rewoundSession();
    expect(validateRewindTarget(log.tree, u1.id)).toEqual({ ok: true, event: u1 });
    expect(validateRewindTarget(log.tree, a2.id)).toEqual({ ok: true, event: a2 });
    expect(validateBranchTarget(log.tree, a2.id)).toEqual({ ok: true, event: a2 });
    expect(validateBranchTarget(log.tree, a3.id)).toEqual({ ok: true, event: a3 });
    expect(validateBranchTarget(log.tree, u1.id)).toEqual({ ok: false, reason: "not_a_leaf" });
  });

  it("names why a target is refused", () => {
    const { log, rw } = rewoundSession();
    expect(validateRewindTarget(log.tree, "nope")).toEqual({ ok: false, reason: "not_found" });
    expect(validateRewindTarget(log.tree, "e1")).toEqual({ ok: false, reason: "hidden" });
    expect(validateRewindTarget(log.tree, rw.id)).toEqual({ ok: false, reason: "marker" });
    expect(validateBranchTarget(log.tree, "nope")).toEqual({ ok: false, reason: "not_found" });
    expect(validateBranchTarget(log.tree, "e1")).toEqual({ ok: false, reason: "hidden" });
    expect(validateBranchTarget(log.tree, rw.id)).toEqual({ ok: false, reason: "marker" });
    for (const reason of ["not_found", "hidden", "marker", "not_a_leaf"] as const) {
      expect(describeRejection(reason).length).toBeGreaterThan(10);
    }
  });
});

describe("large sessions", () => {
  it("holds a 10,000-event session and walks only as deep as asked", () => {
    const log = new LogBuilder();
    for (let i = 0; i < 2_500; i++) {
      log.hidden("run_started");
      log.user(`question ${i}`);
      log.assistant(`answer ${i}`);
      log.hidden("run_completed");
    }
    expect(log.events).toHaveLength(10_000);
    expect(log.tree.size).toBe(5_000);
    expect(ids(log.tree.leaves())).toEqual([log.leaf!]);
    const walk = log.tree.ancestors(log.leaf);
    expect(walk.next().value?.id).toBe(log.leaf);
    expect(log.tree.pathToRoot(log.leaf)).toHaveLength(5_000);
  });
});
