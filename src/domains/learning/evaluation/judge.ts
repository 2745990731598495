/**
 * The judge of an evaluation case (docs/evaluation.md, "Judging"): the auxiliary model (the main one
 * when none is configured) reads the case's prompt, its expectation if any, and the baseline's and the
 * candidate's answers, and scores both against a fixed rubric. The answer is structured output: the
 * JSON schema goes to the provider (`Output.object`; for openai-compatible servers as
 * `response_format: json_schema`, src/runtime/agent/providers.ts) and what comes back is validated with
 * zod. An invalid answer is asked for once more; a second failure fails the case, not the evaluation.
 */
import type { LanguageModel } from "ai";
import { aiSdk } from "../../../runtime/index.ts";
import { z } from "zod";

/** The judge sees at most this many characters of each answer. */
export const MAX_ANSWER_CHARS = 6_000;
/** Attempts per case: the first answer and one retry. */
export const JUDGE_ATTEMPTS = 2;

export const JudgeAnswer = z.strictObject({
  baseline_score: z.number().int().min(0).max(10).describe("Score of answer A (baseline), 0-10, by the rubric"),
  candidate_score: z.number().int().min(0).max(10).describe("Score of answer B (candidate), 0-10, by the rubric"),
  winner: z.enum(["baseline", "candidate", "tie"]).describe("Which answer is better overall"),
  reason: z.string().min(1).max(1_000).describe("One to three sentences: what decided the scores"),
});
export type JudgeAnswer = z.infer<typeof JudgeAnswer>;

export const RUBRIC = [
  "Score each answer from 0 to 10:",
  "- 9-10: fully does what the request asks (and meets the expectation when one is given), correct, follows the skill's instructions;",
  "- 6-8: mostly right, with small omissions or inaccuracies;",
  "- 3-5: partly right, misses important parts of the request or the expectation;",
  "- 0-2: wrong, off-topic, empty, or an error.",
  "Judge only what the answers say, not their length or style. Tool calls in these runs were dry runs and did not take effect; do not penalise that.",
].join("\n");

export interface JudgeInput {
  prompt: string;
  expect?: string;
  baseline: string;
  candidate: string;
}

export interface JudgeUsage {
  calls: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}

export type JudgeOutcome = { ok: true; answer: JudgeAnswer; usage: JudgeUsage } | { ok: false; error: string; usage: JudgeUsage };

const clip = (text: string) => (text.length > MAX_ANSWER_CHARS ? `${text.slice(0, MAX_ANSWER_CHARS)}…[cut]` : text);

export function judgePrompt(input: JudgeInput): string {
  return [
    `Request:\n${input.prompt}`,
    input.expect ? `Expectation (what a good answer does):\n${input.expect}` : "No explicit expectation: judge by the request alone.",
    `Answer A (baseline):\n${clip(input.baseline) || "(empty)"}`,
    `Answer B (candidate):\n${clip(input.candidate) || "(empty)"}`,
  ].join("\n\n");
}

/** Scores one case; never throws except on cancellation (`signal`). */
export async function judgeCase(model: LanguageModel, input: JudgeInput, signal?: AbortSignal): Promise<JudgeOutcome> {
  const usage: JudgeUsage = { calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  let lastError = "";
  for (let attempt = 1; attempt <= JUDGE_ATTEMPTS; attempt++) {
    signal?.throwIfAborted();
    usage.calls++;
    try {
      // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
      const { generateText, Output } = await aiSdk();
      const result = await generateText({
        model,
        output: Output.object({ schema: JudgeAnswer, name: "judgement", description: "Scores of the two answers by the rubric" }),
        system: `You compare two answers an AI agent gave to the same request: A with the current version of a skill, B with a proposed new version.\n${RUBRIC}`,
        prompt: judgePrompt(input),
        maxRetries: 1,
        ...(signal ? { abortSignal: signal } : {}),
      });
      usage.input_tokens += result.usage.inputTokens ?? 0;
      usage.output_tokens += result.usage.outputTokens ?? 0;
      usage.total_tokens += result.usage.totalTokens ?? 0;
      // Output.object validated already; checked again here so the guarantee does not rest on the SDK alone.
      const parsed = JudgeAnswer.safeParse(result.output);
      if (parsed.success) return { ok: true, answer: parsed.data, usage };
      lastError = `invalid judge answer: ${parsed.error.issues.map((i) => `${i.path.join(".")}: ${i.message}`).join("; ")}`;
    } catch (e) {
      if (signal?.aborted) throw e;
      lastError = `judge failed: ${e instanceof Error ? e.message : String(e)}`.slice(0, 500);
    }
  }
  return { ok: false, error: `${lastError} (after ${JUDGE_ATTEMPTS} attempts)`, usage };
}
