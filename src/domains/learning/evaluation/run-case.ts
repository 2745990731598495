/**
 * One evaluation case, run (docs/evaluation.md, "Isolation" and "Judging"): the prompt goes to two
 * isolated dry-run sessions — the baseline with the skill's current version, the candidate with the
 * draft's tree as a skill override — both pinning the skill and limited to the evaluation's steps;
 * when both runs completed, the judge scores them. Session ids and run idempotency keys are derived
 * from the evaluation, case and arm, so running a case again after a crash finds the same runs.
 */
import type { Env } from "../../../storage/env.ts";
import { AppError } from "../../../kernel/errors.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import {
  cancelRun,
  createSession,
  resolveModels,
  submitRun,
  waitForRun,
  type ModelFactory,
  type RunResult,
  type SkillOverride,
} from "../../../runtime/index.ts";
import { judgeCase, type JudgeUsage } from "./judge.ts";
import type { ArmResult, CaseResult } from "./report.ts";

export type Arm = "baseline" | "candidate";

/** What every case of one evaluation shares. */
export interface CaseTarget {
  evaluationId: string;
  workspaceId: string;
  draftId: string;
  skillName: string;
  maxSteps: number;
  candidate: SkillOverride;
}

export interface CaseToRun {
  index: number;
  prompt: string;
  expect?: string;
}

/** One wait for a case's run; the case then checks for a cancel and waits again. */
const RUN_WAIT_MS = 15_000;
/** A run that has not ended after this long fails its case (its own step budget normally ends it far sooner). */
const RUN_DEADLINE_MS = 15 * 60_000;
const NO_JUDGE: JudgeUsage = { calls: 0, input_tokens: 0, output_tokens: 0, total_tokens: 0 };

/** The isolated session of one arm of one case (ids are stable, so a resumed case finds its runs again). */
export const armSessionId = (evaluationId: string, index: number, arm: Arm) => `eval:${evaluationId}:${index}:${arm}`;

/**
 * Runs one case: both arms side by side, then the judge when both completed. Throws only when
 * `signal` is aborted (a cancel); every other failure becomes the case's `error`.
 */
export async function runCase(env: Env, modelFactory: ModelFactory, t: CaseTarget, c: CaseToRun, signal: AbortSignal): Promise<CaseResult> {
  const [baseline, candidate] = await Promise.all(
    (["baseline", "candidate"] as const).map((arm) =>
      runArm(env, t, c, arm, signal).catch((e: unknown) => {
        if (signal.aborted) throw e;
        return failedArm(t, c, arm, e);
      }),
    ),
  );
  signal.throwIfAborted();
  const failed = [baseline!, candidate!].find((a) => a.status !== "completed");
  if (failed)
    return {
      baseline: baseline!,
      candidate: candidate!,
      judgement: null,
      judge_usage: NO_JUDGE,
      error: `${failed === baseline ? "baseline" : "candidate"} run ${failed.status}${failed.error ? `: ${failed.error}` : ""}`,
    };
  let model;
  try {
    const config = await loadConfig(env, t.workspaceId);
    const models = await resolveModels(env, t.workspaceId, config, { factory: modelFactory });
    model = (models.auxiliary ?? models.main).model;
  } catch (e) {
    return { baseline: baseline!, candidate: candidate!, judgement: null, judge_usage: NO_JUDGE, error: `no judge model: ${message(e)}` };
  }
  const judged = await judgeCase(
    model,
    { prompt: c.prompt, ...(c.expect ? { expect: c.expect } : {}), baseline: baseline!.output, candidate: candidate!.output },
    signal,
  );
  return judged.ok
    ? { baseline: baseline!, candidate: candidate!, judgement: judged.answer, judge_usage: judged.usage }
    : { baseline: baseline!, candidate: candidate!, judgement: null, judge_usage: judged.usage, error: judged.error };
}

/** One arm of a case: an isolated dry-run session, the case's prompt, the version under test pinned. */
async function runArm(env: Env, t: CaseTarget, c: CaseToRun, arm: Arm, signal: AbortSignal): Promise<ArmResult> {
  const sessionId = armSessionId(t.evaluationId, c.index, arm);
  await createSession(env, {
    workspaceId: t.workspaceId,
    id: sessionId,
    title: `Evaluation ${t.evaluationId} case ${c.index} (${arm})`,
    metadata: { evaluation_id: t.evaluationId, draft_id: t.draftId, case: c.index, arm },
    isolated: true,
  });
  signal.throwIfAborted();
  const { run_id } = await submitRun(env, sessionId, {
    workspace_id: t.workspaceId,
    content: c.prompt,
    client_id: "evaluation",
    idempotency_key: sessionId,
    dry_run: true,
    pinned_skills: [t.skillName],
    // Only the skill under test: no automatic choice, whose model calls the report could not count.
    skill_choice: "requested_only",
    max_tool_iterations: t.maxSteps,
    ...(arm === "candidate" ? { skill_overrides: [t.candidate] } : {}),
  });
  if (signal.aborted) {
    await stopSession(env, t.workspaceId, sessionId);
    signal.throwIfAborted();
  }
  const deadline = Date.now() + RUN_DEADLINE_MS;
  let result: RunResult = await waitForRun(env, sessionId, run_id, RUN_WAIT_MS, t.workspaceId);
  while (result.status === "queued" || result.status === "running") {
    signal.throwIfAborted();
    if (Date.now() > deadline) {
      await stopSession(env, t.workspaceId, sessionId);
      return { ...armOf(sessionId, result), status: "failed", error: "the run did not end in time" };
    }
    result = await waitForRun(env, sessionId, run_id, RUN_WAIT_MS, t.workspaceId);
  }
  return armOf(sessionId, result);
}

/** Cancels a session's run if it has one (a session never created answers not_found: nothing to stop). */
export async function stopSession(env: Env, workspaceId: string, sessionId: string): Promise<void> {
  try {
    await cancelRun(env, sessionId, workspaceId);
  } catch (e) {
    if (!(e instanceof AppError && (e.code === "not_found" || e.code === "conflict")))
      log.warn("evaluation: cancelling a case run failed", { session_id: sessionId, ...errorFields(e) });
  }
}

const message = (e: unknown) => (e instanceof Error ? e.message : String(e)).slice(0, 500);

function armOf(sessionId: string, r: RunResult): ArmResult {
  return {
    session_id: sessionId,
    run_id: r.run_id,
    status: r.status,
    output: r.output_text,
    // One model call per step: each tool iteration, plus the answer when the run completed.
    model_calls: r.tool_iterations + (r.status === "completed" ? 1 : 0),
    usage: r.usage,
    ...(r.error ? { error: r.error.message } : {}),
  };
}

function failedArm(t: CaseTarget, c: CaseToRun, arm: Arm, e: unknown): ArmResult {
  return {
    session_id: armSessionId(t.evaluationId, c.index, arm),
    run_id: "",
    status: "failed",
    output: "",
    model_calls: 0,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    error: message(e),
  };
}
