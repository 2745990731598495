/**
 * The workspace's `evaluation` configuration section (docs/evaluation.md, "Configuration"): how many
 * cases run at once, how many model steps one case's run may take, and how many recorded sessions
 * become cases. Registered at the composition root (src/app/config.ts); read with defaults applied.
 */
import { z } from "zod";
import type { ConfigSection, WorkspaceConfig } from "../../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../../kernel/memo.ts";

/** The most cases that ever run at once, whatever a request or the configuration asks for. */
export const MAX_CONCURRENCY = 8;

export const EvaluationConfigSchema = z.strictObject({
  /** Cases run in parallel when `POST /api/drafts/:id/evaluate` names no concurrency. */
  concurrency: z.number().int().min(1).max(MAX_CONCURRENCY).default(3),
  /** Tool iterations one case's run may take (its own budget of model calls: at most this + 1 per arm). */
  max_steps: z.number().int().min(1).max(20).default(4),
  /** Recorded sessions in which the skill was activated that are replayed as cases (0: only evals/cases.jsonl). */
  max_recorded_cases: z.number().int().min(0).max(50).default(10),
});

export type EvaluationConfig = z.infer<typeof EvaluationConfigSchema>;

export const evaluationConfigSection: ConfigSection = { key: "evaluation", schema: EvaluationConfigSchema };

/** The section with defaults applied; a stored one that no longer parses counts as unset. */
export const evaluationConfigOf: (config: WorkspaceConfig) => EvaluationConfig = memoByObject((config) => {
  const parsed = EvaluationConfigSchema.safeParse((config as Record<string, unknown>).evaluation ?? {});
  return deepFreeze(parsed.success ? parsed.data : EvaluationConfigSchema.parse({}));
});
