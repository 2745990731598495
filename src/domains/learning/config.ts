/**
 * The `learning` section of the workspace configuration (docs/learning.md, "Gates"): whether drafts
 * that pass every gate publish themselves, and above which merge confidence. Off by default: a
 * workspace opts in. The evaluation settings of the learning pipeline belong in this same section.
 */
import { z } from "zod";
import type { ConfigSection, WorkspaceConfig } from "../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../kernel/memo.ts";

export const AutoPublishSchema = z.strictObject({
  enabled: z.boolean().default(false),
  /** A draft's merge confidence must be at least this (drafts no merge made count as 1). */
  min_confidence: z.number().min(0).max(1).default(0.8),
});

/**
 * When the `improvement` cron job proposes an improvement candidate for a skill (docs/learning.md,
 * "Improvement candidates"): among the last `window_runs` decided runs of its current version, at least
 * `min_runs`, and a share of at least `bad_share` failed or were rated down.
 */
export const ImprovementSchema = z.strictObject({
  enabled: z.boolean().default(true),
  window_runs: z.number().int().min(1).max(500).default(20),
  min_runs: z.number().int().min(1).max(500).default(5),
  bad_share: z.number().min(0).max(1).default(0.5),
});

/**
 * When the evidence pass proposes a new skill (docs/learning.md, "New-skill candidates"): among the
 * last `window_runs` successful runs that activated no skill, at least `min_runs` similar ones.
 */
export const NewSkillSchema = z.strictObject({
  enabled: z.boolean().default(true),
  window_runs: z.number().int().min(1).max(2_000).default(200),
  min_runs: z.number().int().min(2).max(100).default(3),
});

export const LearningConfigSchema = z.strictObject({
  auto_publish: AutoPublishSchema.default({ enabled: false, min_confidence: 0.8 }),
  improvement: ImprovementSchema.default({ enabled: true, window_runs: 20, min_runs: 5, bad_share: 0.5 }),
  new_skill: NewSkillSchema.default({ enabled: true, window_runs: 200, min_runs: 3 }),
});

export type LearningConfig = z.infer<typeof LearningConfigSchema>;

export const learningConfigSection: ConfigSection = { key: "learning", schema: LearningConfigSchema };

/** The workspace's learning settings, defaults applied; a stored section that no longer parses counts as unset. */
export const learningConfigOf: (config: WorkspaceConfig) => LearningConfig = memoByObject((config) => {
  const parsed = LearningConfigSchema.safeParse((config as Record<string, unknown>).learning ?? {});
  return deepFreeze(parsed.success ? parsed.data : LearningConfigSchema.parse({}));
});
