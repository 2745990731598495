/**
 * The pure parts of receipts (docs/learning.md, "Run receipts", "Skill stats"): how a toolchain task's
 * state becomes a run's verification and outcome (only the task's latest run is judged), what a failed
 * run's receipt keeps, and how grouped counts become rates with the baseline limited to the same agents.
 */
import { describe, expect, it } from "vitest";
import { deriveReceipt, type ReceiptFacts } from "../../../src/domains/learning/receipts/derive.ts";
import { shapeStats } from "../../../src/domains/learning/receipts/stats.ts";
import type { PersistentEvent } from "../../../src/runtime/session/events.ts";

const base = { session_id: "task:t1", client_id: "x", parent_id: null, ts: 1, run_id: "run_1" };
const failedEvents: PersistentEvent[] = [
  { ...base, id: "e2", seq: 2, type: "run_failed", error: { code: "provider_error", message: "x".repeat(900) } },
  {
    ...base,
    id: "e1",
    seq: 1,
    type: "skill_activation_snapshotted",
    skills: [
      { name: "b", version: "v0002" },
      { name: "a", version: "v0001", content_hash: "h", reason: "pinned" },
    ],
  },
];

const facts = (task: ReceiptFacts["task"], status: "completed" | "failed" = "completed"): ReceiptFacts => ({
  run: { id: "run_1", sessionId: "task:t1", status, endedAt: 5, result: null },
  events: failedEvents,
  sessionMetadata: { task_type: "toolchain", task_id: "t1", agent_id: "coder" },
  task,
});

describe("deriveReceipt", () => {
  it("maps the task's state to the verification of its latest run only", () => {
    const v = (task: ReceiptFacts["task"]) => {
      const r = deriveReceipt(facts(task));
      return [r.verification, r.outcome];
    };
    expect(v({ id: "t1", status: "done", runId: "run_1" })).toEqual(["verified", "success"]);
    expect(v({ id: "t1", status: "failed", runId: "run_1" })).toEqual(["failed", "failure"]);
    expect(v({ id: "t1", status: "working", runId: "run_1" })).toEqual(["pending", "pending"]);
    expect(v({ id: "t1", status: "cancelled", runId: "run_1" })).toEqual(["cancelled", "cancelled"]);
    expect(v({ id: "t1", status: "working", runId: "run_2" })).toEqual(["pending", "pending"]);
    expect(v({ id: "t1", status: "done", runId: "run_2" })).toEqual(["superseded", "success"]);
    expect(v(null)).toEqual(["superseded", "success"]);
  });

  it("keeps skills sorted with their versions and a failed run's error, shortened", () => {
    const r = deriveReceipt({ ...facts(null, "failed"), sessionMetadata: {} });
    expect(r.verification).toBeNull();
    expect(r.outcome).toBe("failure");
    expect(r.agent_id).toBeNull();
    expect(r.body.skills).toEqual([
      { name: "a", version: "v0001", content_hash: "h", reason: "pinned" },
      { name: "b", version: "v0002", content_hash: null, reason: null },
    ]);
    expect(r.body.error?.code).toBe("provider_error");
    expect(r.body.error?.message).toHaveLength(500);
    expect(r.body.usage).toEqual({ input_tokens: 0, output_tokens: 0, total_tokens: 0 });
  });
});

describe("shapeStats", () => {
  it("compares with the same agents' runs only and gives null rates without evidence", () => {
    const s = shapeStats(
      "notes",
      [
        { version: "v0001", agentId: "coder", outcome: "success", rating: "up", runs: 3 },
        { version: "v0001", agentId: "coder", outcome: "failure", rating: null, runs: 1 },
        { version: "v0002", agentId: "coder", outcome: "pending", rating: null, runs: 2 },
      ],
      [
        { agentId: "coder", outcome: "failure", rating: "down", runs: 2 },
        { agentId: null, outcome: "success", rating: "up", runs: 50 },
      ],
    );
    expect(s.runs).toBe(6);
    expect(s.versions.map((v) => [v.version, v.runs, v.success_rate, v.feedback.up_rate])).toEqual([
      ["v0001", 4, 0.75, 1],
      ["v0002", 2, null, null],
    ]);
    expect(s.baseline).toMatchObject({ runs: 2, success_rate: 0, feedback: { down: 2, up_rate: 0 } });
    expect(s.by_agent.map((a) => a.agent_id)).toEqual(["coder"]);
  });
});
