/**
 * The evaluation report and its verdict (docs/evaluation.md, "Report and verdict"): pure aggregation
 * of finished case results into per-case scores, summary, cost and an overall `passed` | `failed`.
 */
import type { Usage } from "../../../runtime/index.ts";
import type { CaseSource } from "./cases.ts";
import type { JudgeAnswer, JudgeUsage } from "./judge.ts";

/** The candidate's mean score may trail the baseline's by at most this much. */
export const MEAN_TOLERANCE = 0.5;
/** No single case may lose more than this many points against the baseline. */
export const MAX_CASE_REGRESSION = 3;

export interface ArmResult {
  session_id: string;
  run_id: string;
  status: string;
  output: string;
  /** Model calls of the run: one per step (tool iterations + the final answer). */
  model_calls: number;
  usage: Usage;
  error?: string;
}

/** What one finished case holds (persisted as soon as the case ends). */
export interface CaseResult {
  baseline: ArmResult | null;
  candidate: ArmResult | null;
  judgement: JudgeAnswer | null;
  judge_usage: JudgeUsage;
  /** Why the case could not be scored (a run failed, the judge gave no valid answer). */
  error?: string;
}

export interface ReportCase {
  index: number;
  source: CaseSource;
  prompt: string;
  expect?: string;
  state: "done" | "error";
  baseline_score: number | null;
  candidate_score: number | null;
  winner: JudgeAnswer["winner"] | null;
  reason: string;
  baseline: ArmResult | null;
  candidate: ArmResult | null;
}

export interface Cost {
  model_calls: number;
  judge_calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export interface EvaluationReport {
  verdict: "passed" | "failed";
  reasons: string[];
  summary: {
    cases: number;
    judged: number;
    errored: number;
    baseline_mean: number | null;
    candidate_mean: number | null;
    candidate_wins: number;
    baseline_wins: number;
    ties: number;
  };
  cases: ReportCase[];
  cost: Cost;
}

export interface FinishedCase {
  index: number;
  source: CaseSource;
  prompt: string;
  expect?: string;
  result: CaseResult;
}

const mean = (xs: number[]) => (xs.length === 0 ? null : Math.round((xs.reduce((a, b) => a + b, 0) / xs.length) * 100) / 100);

export function costOf(results: readonly CaseResult[]): Cost {
  const cost: Cost = { model_calls: 0, judge_calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const r of results) {
    for (const arm of [r.baseline, r.candidate]) {
      if (!arm) continue;
      cost.model_calls += arm.model_calls;
      cost.input_tokens += arm.usage.input_tokens;
      cost.output_tokens += arm.usage.output_tokens;
      cost.total_tokens += arm.usage.total_tokens;
    }
    cost.judge_calls += r.judge_usage.calls;
    cost.model_calls += r.judge_usage.calls;
    cost.input_tokens += r.judge_usage.input_tokens;
    cost.output_tokens += r.judge_usage.output_tokens;
    cost.total_tokens += r.judge_usage.total_tokens;
  }
  return cost;
}

/** The report of an evaluation whose every case finished (in case order). */
export function buildReport(finished: readonly FinishedCase[]): EvaluationReport {
  const cases = [...finished].sort((a, b) => a.index - b.index).map(reportCase);
  const judged = cases.filter((c) => c.state === "done");
  const errored = cases.filter((c) => c.state === "error");
  const baselineMean = mean(judged.map((c) => c.baseline_score!));
  const candidateMean = mean(judged.map((c) => c.candidate_score!));
  const reasons: string[] = [];
  if (cases.length === 0) reasons.push("no cases: the skill has no evals/cases.jsonl and no recorded session activated it");
  if (errored.length > 0) reasons.push(`${errored.length} of ${cases.length} cases could not be scored`);
  if (baselineMean !== null && candidateMean !== null && candidateMean < baselineMean - MEAN_TOLERANCE)
    reasons.push(`the candidate's mean score ${candidateMean} is below the baseline's ${baselineMean} by more than ${MEAN_TOLERANCE}`);
  const regressed = judged.filter((c) => c.candidate_score! < c.baseline_score! - MAX_CASE_REGRESSION).map((c) => c.index);
  if (regressed.length > 0) reasons.push(`cases ${regressed.join(", ")} lose more than ${MAX_CASE_REGRESSION} points against the baseline`);
  return {
    verdict: reasons.length === 0 ? "passed" : "failed",
    reasons,
    summary: {
      cases: cases.length,
      judged: judged.length,
      errored: errored.length,
      baseline_mean: baselineMean,
      candidate_mean: candidateMean,
      candidate_wins: judged.filter((c) => c.winner === "candidate").length,
      baseline_wins: judged.filter((c) => c.winner === "baseline").length,
      ties: judged.filter((c) => c.winner === "tie").length,
    },
    cases,
    cost: costOf(finished.map((f) => f.result)),
  };
}

function reportCase(f: FinishedCase): ReportCase {
  const j = f.result.judgement;
  const ok = j !== null && f.result.error === undefined;
  return {
    index: f.index,
    source: f.source,
    prompt: f.prompt,
    ...(f.expect !== undefined ? { expect: f.expect } : {}),
    state: ok ? "done" : "error",
    baseline_score: ok ? j.baseline_score : null,
    candidate_score: ok ? j.candidate_score : null,
    winner: ok ? j.winner : null,
    reason: ok ? j.reason : (f.result.error ?? "not scored"),
    baseline: f.result.baseline,
    candidate: f.result.candidate,
  };
}
