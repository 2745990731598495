/**
 * Composition root, evaluation: what the EvaluationDO is built with (docs/evaluation.md) — the same
 * model factory runs use, for the judge, and the observer told when an evaluation reaches a verdict.
 * A verdict goes to the review pipeline's auto-publish decision (docs/learning.md), which publishes
 * only when the workspace turned it on and every gate passes.
 */
import type { EvaluationObjectOptions } from "../domains/learning/evaluation/evaluation-do.ts";
import { providerModel, type ModelFactory } from "../runtime/index.ts";
import { onEvaluationFinished } from "../domains/governance/learning-drafts.ts";

export function evaluationOptions(modelFactory: ModelFactory = providerModel): EvaluationObjectOptions {
  return {
    modelFactory,
    onFinished: async (env, { workspaceId, draftId, verdict }) => {
      await onEvaluationFinished(env, workspaceId, draftId, verdict);
    },
  };
}
