/**
 * The pure parts of replay evaluation (docs/evaluation.md): parsing `evals/cases.jsonl` with its
 * limits and line-numbered errors, combining file and recorded cases, the report's verdict rules and
 * cost, and the judge's structured answer (schema sent, answer validated, one retry, then a clean failure).
 */
import { describe, expect, it } from "vitest";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { AppError } from "../../../src/kernel/errors.ts";
import { MAX_CASES, combineCases, parseCasesJsonl, type EvalCase } from "../../../src/domains/learning/evaluation/cases.ts";
import { buildReport, type CaseResult, type FinishedCase } from "../../../src/domains/learning/evaluation/report.ts";
import { JUDGE_ATTEMPTS, judgeCase } from "../../../src/domains/learning/evaluation/judge.ts";

function thrown(fn: () => unknown): AppError {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error("did not throw");
}

describe("evals/cases.jsonl", () => {
  it("reads one case per line, skipping blank lines, with an optional expectation", () => {
    const text = '{"prompt":"Greet Ada","expect":"mentions Ada"}\n\n  {"prompt": "Greet Bob"}  \r\n';
    expect(parseCasesJsonl(text)).toEqual([
      { source: "cases_file", prompt: "Greet Ada", expect: "mentions Ada" },
      { source: "cases_file", prompt: "Greet Bob" },
    ]);
    expect(parseCasesJsonl("")).toEqual([]);
  });

  it("names the bad line: invalid JSON, a missing prompt, an unknown key, a too-long prompt", () => {
    const bad = thrown(() => parseCasesJsonl('{"prompt":"ok"}\n\n{"prompt": nope}\n'));
    expect(bad).toMatchObject({ code: "validation_failed", details: { line: 3 } });
    expect(bad.message).toMatch(/^evals\/cases\.jsonl line 3: not valid JSON/);
    expect(thrown(() => parseCasesJsonl('{"expect":"x"}')).message).toMatch(/line 1: prompt: /);
    expect(thrown(() => parseCasesJsonl('{"prompt":"a","weight":2}')).message).toMatch(/line 1: .*weight/);
    expect(thrown(() => parseCasesJsonl(JSON.stringify({ prompt: "x".repeat(8_001) }))).details).toMatchObject({ line: 1 });
    expect(thrown(() => parseCasesJsonl('{"prompt":"   "}')).message).toMatch(/line 1: prompt/);
  });

  it("refuses more than the case limit, naming the first line over it", () => {
    const lines = Array.from({ length: MAX_CASES + 1 }, (_, i) => JSON.stringify({ prompt: `case ${i}` }));
    expect(thrown(() => parseCasesJsonl(lines.join("\n")))).toMatchObject({ details: { line: MAX_CASES + 1, limit: MAX_CASES } });
  });

  it("combines file cases first, then recorded prompts the file does not already hold", () => {
    const file: EvalCase[] = [{ source: "cases_file", prompt: "A" }];
    const recorded: EvalCase[] = [
      { source: "recorded_session", prompt: "A", origin: { session_id: "s1", run_id: "r1" } },
      { source: "recorded_session", prompt: "B", origin: { session_id: "s2", run_id: "r2" } },
      { source: "recorded_session", prompt: "B", origin: { session_id: "s3", run_id: "r3" } },
    ];
    expect(combineCases(file, recorded).map((c) => [c.source, c.prompt])).toEqual([
      ["cases_file", "A"],
      ["recorded_session", "B"],
    ]);
  });
});

const usage = (n: number) => ({ input_tokens: n, output_tokens: n, total_tokens: 2 * n });
const arm = (output: string, calls = 1) => ({
  session_id: "s",
  run_id: "r",
  status: "completed",
  output,
  model_calls: calls,
  usage: usage(10),
});
const judged = (b: number, c: number): CaseResult => ({
  baseline: arm("b"),
  candidate: arm("c", 2),
  judgement: { baseline_score: b, candidate_score: c, winner: c > b ? "candidate" : c < b ? "baseline" : "tie", reason: `${b} vs ${c}` },
  judge_usage: { calls: 1, input_tokens: 3, output_tokens: 2, total_tokens: 5 },
});
const finished = (results: CaseResult[]): FinishedCase[] =>
  results.map((result, index) => ({ index, source: "cases_file", prompt: `p${index}`, result }));

describe("report and verdict", () => {
  it("passes when the candidate holds its ground, with per-case scores, summary and cost", () => {
    const report = buildReport(finished([judged(6, 8), judged(7, 7), judged(8, 7)]));
    expect(report.verdict).toBe("passed");
    expect(report.reasons).toEqual([]);
    expect(report.summary).toEqual({
      cases: 3,
      judged: 3,
      errored: 0,
      baseline_mean: 7,
      candidate_mean: 7.33,
      candidate_wins: 1,
      baseline_wins: 1,
      ties: 1,
    });
    expect(report.cases[0]).toMatchObject({
      index: 0,
      state: "done",
      baseline_score: 6,
      candidate_score: 8,
      winner: "candidate",
      reason: "6 vs 8",
    });
    // 3 cases × (1 baseline + 2 candidate model calls) + 3 judge calls; tokens of runs and judge.
    expect(report.cost).toEqual({ model_calls: 12, judge_calls: 3, input_tokens: 69, output_tokens: 66, total_tokens: 135 });
  });

  it("fails on a lower mean, on one large regression, on an unscored case, and with no cases", () => {
    expect(buildReport(finished([judged(8, 7), judged(8, 7)])).reasons).toEqual([
      expect.stringMatching(/mean score 7 is below the baseline's 8/),
    ]);
    const regression = buildReport(finished([judged(5, 9), judged(5, 9), judged(9, 5)]));
    expect(regression.verdict).toBe("failed");
    expect(regression.reasons).toEqual([expect.stringMatching(/cases 2 lose more than 3 points/)]);
    const broken: CaseResult = { ...judged(5, 5), judgement: null, error: "judge failed: nope (after 2 attempts)" };
    const withError = buildReport(finished([judged(5, 6), broken]));
    expect(withError).toMatchObject({ verdict: "failed", summary: { judged: 1, errored: 1 } });
    expect(withError.cases[1]).toMatchObject({ state: "error", baseline_score: null, reason: "judge failed: nope (after 2 attempts)" });
    expect(buildReport([])).toMatchObject({ verdict: "failed", reasons: [expect.stringMatching(/^no cases/)] });
  });
});

function judgeModel(answers: string[]) {
  const calls: LanguageModelV4CallOptions[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      calls.push(options);
      const text = answers[Math.min(calls.length - 1, answers.length - 1)]!;
      return {
        content: [{ type: "text", text }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: {
          inputTokens: { total: 11, noCache: 11, cacheRead: undefined, cacheWrite: undefined },
          outputTokens: { total: 4, text: 4, reasoning: undefined },
        },
        warnings: [],
      };
    },
  });
  return { model, calls };
}

const VALID = JSON.stringify({ baseline_score: 4, candidate_score: 9, winner: "candidate", reason: "B follows the expectation." });
const INPUT = { prompt: "Greet Ada", expect: "mentions Ada by name", baseline: "Hello.", candidate: "Hello, Ada!" };

describe("judge", () => {
  it("sends the rubric, the expectation, both answers and the JSON schema, and returns the validated answer", async () => {
    const { model, calls } = judgeModel([VALID]);
    const out = await judgeCase(model, INPUT);
    expect(out).toEqual({
      ok: true,
      answer: { baseline_score: 4, candidate_score: 9, winner: "candidate", reason: "B follows the expectation." },
      usage: { calls: 1, input_tokens: 11, output_tokens: 4, total_tokens: 15 },
    });
    const format = calls[0]!.responseFormat as { type: string; schema?: { properties?: Record<string, unknown> } };
    expect(format.type).toBe("json");
    expect(Object.keys(format.schema?.properties ?? {})).toEqual(["baseline_score", "candidate_score", "winner", "reason"]);
    const prompt = JSON.stringify(calls[0]!.prompt);
    for (const part of ["Score each answer from 0 to 10", "mentions Ada by name", "Hello, Ada!", "Answer A (baseline)"])
      expect(prompt).toContain(part);
  });

  it("asks once more after an invalid answer", async () => {
    const outOfRange = JSON.stringify({ baseline_score: 11, candidate_score: 9, winner: "candidate", reason: "x" });
    const { model, calls } = judgeModel([outOfRange, VALID]);
    const out = await judgeCase(model, INPUT);
    expect(out).toMatchObject({ ok: true, answer: { candidate_score: 9 }, usage: { calls: 2 } });
    expect(calls).toHaveLength(2);
  });

  it("fails the case cleanly after two invalid answers", async () => {
    const { model, calls } = judgeModel(["not json at all", JSON.stringify({ winner: "both" })]);
    const out = await judgeCase(model, INPUT);
    expect(out.ok).toBe(false);
    expect(calls).toHaveLength(JUDGE_ATTEMPTS);
    if (!out.ok) expect(out.error).toMatch(/after 2 attempts/);
  });
});
