/**
 * The pure parts of evidence learning (docs/learning.md, "New-skill candidates", "From candidate to
 * draft"): message similarity by the skill activation's lexical thresholds, deterministic grouping,
 * and the bounds on evidence transcripts.
 */
import { describe, expect, it } from "vitest";
import { clusterBySimilarity, sharedTerms, termsOf } from "../../../src/domains/learning/improvement/similarity.ts";
import { newSkillEvidence } from "../../../src/domains/learning/improvement/new-skill.ts";
import { describeEvidence, formatTranscript, TRANSCRIPT_LIMITS } from "../../../src/domains/learning/improvement/transcripts.ts";

describe("similarity", () => {
  it("needs two shared content terms covering half of the smaller message", () => {
    expect(sharedTerms(termsOf("Summarize the standup notes for team alpha"), termsOf("summarize standup notes, team beta"))).toEqual([
      "note",
      "standup",
      "summarize",
      "team",
    ]);
    expect(sharedTerms(termsOf("standup notes"), termsOf("the weather in Tokyo and standup"))).toBeNull();
    expect(sharedTerms(termsOf("hello there"), termsOf("hello there"))).toBeNull(); // stop words only
  });

  it("groups greedily in input order, the same way every time", () => {
    const runs = ["deploy the api service", "what time is it in Tokyo", "deploy api service to staging", "redeploy"].map((p, i) => ({
      runId: `r${i}`,
      terms: termsOf(p),
    }));
    const a = clusterBySimilarity(runs).map((c) => c.members.map((m) => m.runId));
    expect(a).toEqual([["r0", "r2"], ["r1"], ["r3"]]);
    expect(clusterBySimilarity(runs).map((c) => c.members.map((m) => m.runId))).toEqual(a);
  });

  it("turns groups of at least min_runs into evidence with sorted run ids", () => {
    const runs = ["z9", "a1", "m5"].map((runId) => ({ runId, prompt: "rotate the api keys of service" }));
    const out = newSkillEvidence([...runs, { runId: "b2", prompt: "unrelated question about lunch" }], { window_runs: 200, min_runs: 3 });
    expect(out).toEqual([
      { runs: ["a1", "m5", "z9"], terms: ["api", "key", "rotate", "service"], considered: 4, threshold: { window_runs: 200, min_runs: 3 } },
    ]);
    expect(newSkillEvidence(runs, { window_runs: 200, min_runs: 4 })).toEqual([]);
  });
});

describe("evidence transcripts", () => {
  it("are cut per message, per run and in all", () => {
    const long = "x".repeat(10_000);
    const t = formatTranscript([
      { role: "user", content: long },
      { role: "assistant", text: "ok", tool_calls: [{ id: "c", name: "echo", args: { text: long } }] },
      { role: "tool_result", tool_call_id: "c", tool_name: "echo", content: long, is_error: true },
    ]);
    expect(t.length).toBeLessThan(TRANSCRIPT_LIMITS.perRun + 100);
    expect(t).toContain("TOOL RESULT echo (error)");
    const runs = Array.from({ length: 12 }, (_, i) => ({
      run_id: `run_${i}`,
      session_id: "s",
      prompt: "p",
      outcome: "failure",
      rating: "down",
      comment: null,
      transcript: "y".repeat(TRANSCRIPT_LIMITS.perRun),
    }));
    const all = describeEvidence(runs);
    expect(all.length).toBeLessThan(TRANSCRIPT_LIMITS.total + 500);
    expect(all).toContain("more runs left out");
    expect(all).not.toContain("run_11");
  });
});
