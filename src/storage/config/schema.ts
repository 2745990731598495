/**
 * The workspace configuration: the core sections (models, runtime) are defined here; domains add
 * their own sections (for example `toolchain`), registered at the composition root (src/app/config.ts),
 * which builds the one strict schema a write is checked against, so an unknown key anywhere is
 * rejected with its dotted path (`runtime.foo: Unsupported key`). Defaults are applied on read; each
 * domain reads its own section with its own schema (docs/layering.md).
 */
import { z } from "zod";
import { isTimeZone } from "../../kernel/time-zone.ts";
import { deepFreeze } from "../../kernel/memo.ts";
import type { Env } from "../env.ts";

export const PROVIDERS = ["openai-compatible", "openai", "anthropic", "google", "workers-ai"] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

/** Names of secrets look like environment variables, so a Worker secret of the same name can back them where the operator lends it (secrets/store.ts). */
export const SecretNameSchema = z
  .string()
  .regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be 1-64 letters, digits or underscores, not starting with a digit");

export const ModelEntrySchema = z.strictObject({
  provider: z.enum(PROVIDERS),
  id: z.string().min(1).max(200),
  base_url: z.url({ protocol: /^https?$/ }).optional(),
  api_key_secret: SecretNameSchema.optional(),
  context_window: z.number().int().positive().optional(),
  max_tokens: z.number().int().positive().optional(),
});
export type ModelEntry = z.infer<typeof ModelEntrySchema>;

export const RuntimeConfigSchema = z.strictObject({
  max_tool_iterations: z.number().int().min(1).max(100).default(8),
  max_context_messages: z.number().int().min(1).max(10_000).default(100),
  timezone: z.string().refine(isTimeZone, "must be an IANA time zone such as Europe/Berlin").default("UTC"),
  /** Extra instructions appended to the base system prompt. */
  system_prompt: z.string().max(20_000).optional(),
  /** Share of the model's `context_window` the system prompt may take (docs/agent-loop.md, "Prompt budget"). */
  system_prompt_budget_share: z.number().min(0.01).max(0.9).default(0.15),
  /**
   * Tools every run is offered whatever the limits, when its tool set has them (docs/agent-loop.md,
   * "Tool assembly"; seed tools-blueprint: the configured default always names).
   */
  always_tools: z
    .array(z.string().min(1).max(128))
    .max(64)
    .default(() => ["memory", "session_search", "skill_view"]),
  /** At most this many tools are offered to the model per run (always and hinted tools count, and are never cut). */
  max_tools: z.number().int().min(1).max(256).default(24),
  /** Estimated tokens the selected tools' declarations may take (always and hinted tools are never cut). */
  tool_budget_tokens: z.number().int().min(100).max(100_000).default(3_000),
  /**
   * Compact the history (docs/sessions.md, "Compaction") when it would take more than this share of
   * its token window (the context window minus system prompt, tools and output); only with a known window.
   */
  compact_at_share: z.number().min(0.1).max(1).default(0.8),
  /**
   * A tool call waiting for approval (docs/approvals.md) is denied when nobody answers within this
   * many milliseconds (1 s to 7 days; default 15 minutes).
   */
  approval_timeout_ms: z
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3_600_000)
    .default(15 * 60_000),
  /**
   * Tokens one run may spend, its own and its delegated children's (`usage` + `delegated_usage`,
   * total tokens); checked before each model step, a run past it fails `run_token_budget`. A
   * `delegate` call splits what is left among its children as their own cap (docs/delegation.md,
   * "Usage"). Absent: no cap.
   */
  max_run_tokens: z.number().int().min(1).max(1_000_000_000).optional(),
  /** How many tasks one `delegate` call may run at once (docs/delegation.md); more in one call is a tool error. */
  max_parallel_delegates: z.number().int().min(1).max(16).default(3),
  /** How deep delegation may nest: a session at this depth is not offered `delegate` (0: no delegation). */
  max_delegation_depth: z.number().int().min(0).max(5).default(2),
});

const coreShape = {
  /** Extensions turned on or off for this workspace by name (docs/extensions.md); one not named is on. */
  extensions: z
    .record(z.string().regex(/^[a-z][a-z0-9_-]{0,63}$/, "must be an extension name"), z.strictObject({ enabled: z.boolean() }))
    .optional(),
  model: ModelEntrySchema.optional(),
  fallback_model: ModelEntrySchema.optional(),
  auxiliary_model: ModelEntrySchema.optional(),
  /** Embeds skills and messages for skill selection (docs/skills-and-plugins.md, "Skills in a run"); absent = lexical only. */
  embedding_model: ModelEntrySchema.optional(),
  runtime: RuntimeConfigSchema.default(() => RuntimeConfigSchema.parse({})),
};

/** A section a domain adds to the workspace configuration under its own key (absent = its defaults). */
export interface ConfigSection {
  key: string;
  schema: z.ZodType;
  /**
   * Checks that need the workspace's other data (a team's members must be registered agents), run on
   * `PUT /api/config` after the schema passed: each problem becomes a 400 `validation_failed` detail.
   */
  check?(value: unknown, ctx: { env: Env; workspaceId: string }): Promise<{ path: string; message: string }[]>;
}

/** The strict schema of a whole configuration: the core sections plus the registered ones. */
export function composeConfigSchema(sections: readonly ConfigSection[]) {
  const extra: Record<string, z.ZodOptional<z.ZodType>> = {};
  for (const section of sections) {
    if (section.key in coreShape || section.key in extra) throw new Error(`config section '${section.key}' registered twice`);
    extra[section.key] = section.schema.optional();
  }
  return z.strictObject({ ...coreShape, ...extra });
}

/**
 * A stored configuration as the core reads it: its own sections typed and defaulted, the
 * registered sections kept as they were stored (validated on write) for their domains to read.
 */
const StoredConfigSchema = z.looseObject(coreShape);

export type WorkspaceConfig = z.infer<typeof StoredConfigSchema>;

/** Shared by every workspace without a config row: frozen, like every cached config (store.ts). */
export const DEFAULT_CONFIG: WorkspaceConfig = deepFreeze(StoredConfigSchema.parse({}));

/** Reads a stored configuration; anything unreadable yields the defaults. */
export function readStoredConfig(raw: unknown): WorkspaceConfig {
  const parsed = StoredConfigSchema.safeParse(raw);
  return parsed.success ? parsed.data : DEFAULT_CONFIG;
}
