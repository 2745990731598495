// Transcript grouping of the console's chat (console/src/chat/turns.ts, docs/console.md).
import { describe, expect, it } from "vitest";
import { groupTurns, type TurnItem } from "../../console/src/chat/turns.ts";

const item = (event_id: string, kind: string, run_id: string | null, extra: Record<string, unknown> = {}): TurnItem => ({
  event_id,
  kind,
  type: kind,
  text: "",
  run_id,
  ...extra,
});

describe("groupTurns", () => {
  it("puts a run's steps and tool results in one answer, each result by its call", () => {
    const turns = groupTurns([
      item("u1", "user", "r1"),
      item("a1", "assistant", "r1", { tool_calls: [{ id: "c1" }] }),
      item("t1", "tool_result", "r1", { tool_call_id: "c1" }),
      item("a2", "assistant", "r1"),
      item("u2", "user", "r2"),
      item("a3", "assistant", "r2"),
    ]);
    expect(turns.map((t) => t.kind)).toEqual(["single", "answer", "single", "answer"]);
    const answer = turns[1];
    if (answer?.kind !== "answer") throw new Error("expected an answer");
    expect(answer.steps.map((s) => s.event_id)).toEqual(["a1", "a2"]);
    expect(answer.results.get("c1")?.event_id).toBe("t1");
  });
  it("keeps a tool result without its answer, and notices, on their own", () => {
    const turns = groupTurns([item("t0", "tool_result", "r0", { tool_call_id: "c0" }), item("n1", "notice", null)]);
    expect(turns.map((t) => t.kind)).toEqual(["single", "single"]);
  });
  it("starts a new answer when the run changes", () => {
    const turns = groupTurns([item("a1", "assistant", "r1"), item("a2", "assistant", "r2")]);
    expect(turns).toHaveLength(2);
  });
});
