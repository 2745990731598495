/**
 * Composition root, evaluation: what the EvaluationDO is built with (docs/evaluation.md) — the same
 * model factory runs use, for the judge, and the observer told when an evaluation reaches a verdict.
 * The auto-publish decision of the review pipeline plugs in at `onFinished`; none is registered yet.
 */
import type { EvaluationObjectOptions } from "../domains/learning/evaluation/evaluation-do.ts";
import { providerModel } from "../runtime/agent/providers.ts";

export function evaluationOptions(): EvaluationObjectOptions {
  return { modelFactory: providerModel };
}
