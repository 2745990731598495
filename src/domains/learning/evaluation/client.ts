/**
 * How routes, the gates and tests reach a draft's EvaluationDO (docs/evaluation.md): one object per
 * workspace and draft, its `Outcome`s turned back into values or AppErrors. Starting plans the
 * evaluation here (D1 and R2 reads in the Worker), then hands the plan to the object.
 */
import type { Env } from "../../../storage/env.ts";
import { AppError } from "../../../kernel/errors.ts";
import { newId } from "../../../kernel/ids.ts";
import { unwrap, type Outcome } from "../../../kernel/outcome.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import type { EvaluationObject, EvaluationView } from "./evaluation-do.ts";
import { MAX_CONCURRENCY, evaluationConfigOf } from "./config.ts";
import { loadDraft, planEvaluation } from "./plan.ts";

export type { EvaluationView };

/** What the gates read (docs/evaluation.md, "Verdict for the gates"). */
export type EvaluationVerdict = "none" | "running" | "passed" | "failed" | "cancelled";

export function evaluationStub(env: Env, workspaceId: string, draftId: string): DurableObjectStub<EvaluationObject> {
  if (!env.EVALUATIONS) throw new AppError("server_misconfigured", "The EVALUATIONS Durable Object binding is missing");
  const ns = env.EVALUATIONS as unknown as DurableObjectNamespace<EvaluationObject>;
  return ns.get(ns.idFromName(`${workspaceId}/${draftId}`));
}

// workers-types maps RPC results through `Serializable`; the views are plain JSON (see `SessionResult` in src/runtime/session/client.ts).
const view = async (p: Promise<unknown>): Promise<EvaluationView> => unwrap(await (p as Promise<Outcome<EvaluationView>>));

/** Starts (or restarts) the draft's evaluation; `concurrency` defaults to the workspace's `evaluation.concurrency`. */
export async function startEvaluation(
  env: Env,
  workspaceId: string,
  draftId: string,
  options: { concurrency?: number } = {},
): Promise<EvaluationView> {
  const draft = await loadDraft(env, workspaceId, draftId);
  const config = evaluationConfigOf(await loadConfig(env, workspaceId));
  const plan = await planEvaluation(env, workspaceId, draft, {
    concurrency: Math.min(MAX_CONCURRENCY, options.concurrency ?? config.concurrency),
    maxSteps: config.max_steps,
    maxRecorded: config.max_recorded_cases,
  });
  return view(evaluationStub(env, workspaceId, draftId).start({ evaluationId: newId("evl"), ...plan }));
}

/** The draft's latest evaluation; 404 when the draft does not exist or was never evaluated. */
export async function getEvaluation(env: Env, workspaceId: string, draftId: string): Promise<EvaluationView> {
  await loadDraft(env, workspaceId, draftId);
  return view(evaluationStub(env, workspaceId, draftId).view(workspaceId));
}

export async function cancelEvaluation(env: Env, workspaceId: string, draftId: string): Promise<EvaluationView> {
  await loadDraft(env, workspaceId, draftId);
  return view(evaluationStub(env, workspaceId, draftId).cancel(workspaceId));
}

/**
 * The verdict of the draft's latest evaluation, for the publish gates: `none` when it was never
 * evaluated. Reads the EvaluationDO, the evaluation's only store.
 */
export async function latestEvaluationVerdict(env: Env, workspaceId: string, draftId: string): Promise<EvaluationVerdict> {
  return (await latestEvaluationView(env, workspaceId, draftId))?.status ?? "none";
}

/** The draft's latest evaluation (progress, cases and report), or null when it was never evaluated. */
export async function latestEvaluationView(env: Env, workspaceId: string, draftId: string): Promise<EvaluationView | null> {
  const out = (await (evaluationStub(env, workspaceId, draftId).view(workspaceId) as Promise<unknown>)) as Outcome<EvaluationView>;
  if (!out.ok && out.error.code === "not_found") return null;
  return unwrap(out);
}
