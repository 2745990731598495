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

export const LearningConfigSchema = z.strictObject({
  auto_publish: AutoPublishSchema.default({ enabled: false, min_confidence: 0.8 }),
});

export type LearningConfig = z.infer<typeof LearningConfigSchema>;

export const learningConfigSection: ConfigSection = { key: "learning", schema: LearningConfigSchema };

/** The workspace's learning settings, defaults applied; a stored section that no longer parses counts as unset. */
export const learningConfigOf: (config: WorkspaceConfig) => LearningConfig = memoByObject((config) => {
  const parsed = LearningConfigSchema.safeParse((config as Record<string, unknown>).learning ?? {});
  return deepFreeze(parsed.success ? parsed.data : LearningConfigSchema.parse({}));
});
