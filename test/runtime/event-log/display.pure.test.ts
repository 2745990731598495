// Transcripts: the active path with navigation notices, and the whole log in seq order.
import { describe, expect, it } from "vitest";
import { buildLogTranscript, buildTranscript, toDisplayItems, type DisplayItem } from "../../../src/runtime/session/display.ts";
import { LogBuilder } from "../../support/log-builder.ts";

const brief = (items: DisplayItem[]) => items.map((i) => `${i.kind === "notice" ? `notice/${i.notice}` : i.kind}:${i.text}`);

function branchySession() {
  const log = new LogBuilder();
  log.hidden("run_started");
  log.channel("telegram", "tg-9");
  const u1 = log.user("q1");
  const a1 = log.assistant("a1");
  log.hidden("run_completed");
  log.user("q2");
  const a2 = log.assistant("a2");
  const rw = log.rewind(a1.id);
  log.user("q2 again");
  log.user("shorter please", "steer");
  const a3 = log.assistant("a3");
  return { log, u1, a1, a2, rw, a3 };
}

describe("buildTranscript (active path)", () => {
  it("shows the path's events with a rewind notice right after the event rewound to", () => {
    const { log, rw } = branchySession();
    const items = buildTranscript(log.tree, log.leaf);
    expect(brief(items)).toEqual([
      "notice/channel:From telegram",
      "user:q1",
      "assistant:a1",
      "notice/rewind:Rewound to “a1”",
      "user:q2 again",
      "user:shorter please",
      "assistant:a3",
    ]);
    expect(items[3]).toMatchObject({ event_id: rw.id, target_event_id: rw.target_event_id });
    expect(items[5]).toMatchObject({ kind: "user", source: "steer" });
    expect(items.some((i) => i.type === "run_started" || i.type === "run_completed")).toBe(false);
  });

  it("follows a branch switch and marks where it landed, without the rewind this branch predates", () => {
    const { log, a2 } = branchySession();
    log.branch(a2.id);
    expect(brief(buildTranscript(log.tree, log.leaf))).toEqual([
      "notice/channel:From telegram",
      "user:q1",
      "assistant:a1",
      "user:q2",
      "assistant:a2",
      "notice/branch:Switched to the branch ending at “a2”",
    ]);
  });

  it("ends with the rewind notice right after rewinding", () => {
    const log = new LogBuilder();
    log.user("q1");
    const a1 = log.assistant("a1");
    log.user("q2");
    log.rewind(a1.id);
    expect(brief(buildTranscript(log.tree, log.leaf))).toEqual(["user:q1", "assistant:a1", "notice/rewind:Rewound to “a1”"]);
  });

  it("shows a compaction as a notice and keeps the history before it", () => {
    const log = new LogBuilder();
    log.user("old");
    log.compact("we said old things");
    log.user("new");
    expect(brief(buildTranscript(log.tree, log.leaf))).toEqual(["user:old", "notice/compact:we said old things", "user:new"]);
  });

  it("returns only the most recent items with limit", () => {
    const { log } = branchySession();
    expect(brief(buildTranscript(log.tree, log.leaf, { limit: 3 }))).toEqual(["user:q2 again", "user:shorter please", "assistant:a3"]);
    expect(brief(buildTranscript(log.tree, log.leaf, { limit: 4 }))[0]).toBe("notice/rewind:Rewound to “a1”");
    expect(() => buildTranscript(log.tree, log.leaf, { limit: 0 })).toThrow(RangeError);
  });

  it("is empty for an empty session", () => {
    expect(buildTranscript(new LogBuilder().tree, null)).toEqual([]);
  });
});

describe("buildLogTranscript (whole log)", () => {
  it("lists every visible event of every branch in seq order", () => {
    const { log } = branchySession();
    const items = buildLogTranscript(log.tree);
    expect(brief(items)).toEqual([
      "notice/channel:From telegram",
      "user:q1",
      "assistant:a1",
      "user:q2",
      "assistant:a2",
      "notice/rewind:Rewound to “a1”",
      "user:q2 again",
      "user:shorter please",
      "assistant:a3",
    ]);
    const seqs = items.map((i) => i.seq);
    expect(seqs).toEqual([...seqs].sort((a, b) => a - b));
  });

  it("pages with afterSeq and limit", () => {
    const { log, a2 } = branchySession();
    expect(brief(buildLogTranscript(log.tree, { afterSeq: a2.seq, limit: 2 }))).toEqual(["notice/rewind:Rewound to “a1”", "user:q2 again"]);
  });
});

describe("toDisplayItems", () => {
  it("renders any list of stored events, dropping hidden ones", () => {
    const { log } = branchySession();
    const items = toDisplayItems(log.events);
    expect(items).toHaveLength(log.events.length - 2);
    expect(items.find((i) => i.kind === "notice" && i.notice === "rewind")?.text).toMatch(/^Rewound to e\d+$/);
    const resolved = toDisplayItems(log.events, (id) => log.tree.get(id));
    expect(resolved.find((i) => i.kind === "notice" && i.notice === "rewind")?.text).toBe("Rewound to “a1”");
  });
});
