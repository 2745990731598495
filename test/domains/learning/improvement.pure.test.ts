/**
 * The improvement check (docs/learning.md, "Improvement candidates"): only decided runs in the window
 * count, the minimum and the share are thresholds, and the id depends on the evidence only.
 */
import { describe, expect, it } from "vitest";
import { improvementCandidateId, improvementEvidence, type RecentRun } from "../../../src/domains/learning/improvement/detect.ts";

const T = { enabled: true, window_runs: 4, min_runs: 3, bad_share: 0.5 };
const r = (runId: string, outcome: string, rating: string | null = null): RecentRun => ({ runId, outcome, rating });

describe("improvementEvidence", () => {
  it("looks at the newest decided runs of the window only", () => {
    const recent = [
      r("a", "pending"),
      r("b", "failure"),
      r("c", "success", "down"),
      r("d", "success"),
      r("e", "success"),
      r("f", "failure"),
    ];
    expect(improvementEvidence("s", "v0001", recent, T)).toEqual({
      skill: "s",
      version: "v0001",
      runs: ["b", "c"],
      considered: 4,
      bad_share: 0.5,
      threshold: { window_runs: 4, min_runs: 3, bad_share: 0.5 },
    });
  });

  it("needs the minimum of runs and the share", () => {
    expect(improvementEvidence("s", "v1", [r("a", "failure"), r("b", "failure")], T)).toBeNull();
    expect(improvementEvidence("s", "v1", [r("a", "failure"), r("b", "success"), r("c", "success")], T)).toBeNull();
    expect(improvementEvidence("s", "v1", [r("a", "cancelled", "down"), r("b", "success"), r("c", "failure")], T)?.runs).toEqual([
      "a",
      "c",
    ]);
  });

  it("gives the same id for the same evidence and another for other evidence", async () => {
    const a = await improvementCandidateId({ skill: "s", version: "v0001", runs: ["x", "y"] });
    expect(a).toMatch(/^imp_[0-9a-f]{32}$/);
    expect(await improvementCandidateId({ skill: "s", version: "v0001", runs: ["x", "y"] })).toBe(a);
    expect(await improvementCandidateId({ skill: "s", version: "v0002", runs: ["x", "y"] })).not.toBe(a);
    expect(await improvementCandidateId({ skill: "s", version: "v0001", runs: ["x"] })).not.toBe(a);
  });
});
