/**
 * The workspace configuration: one zod schema, strict at every level, so an unknown key anywhere is
 * rejected with its dotted path (`runtime.foo: Unsupported key`). Defaults are applied on read.
 */
import { z } from "zod";
import { ToolchainConfigSchema } from "../../domains/toolchain/config.ts";
import { isTimeZone } from "../../kernel/time-zone.ts";

export const PROVIDERS = ["openai-compatible", "openai", "anthropic", "google", "workers-ai"] as const;
export type ProviderKind = (typeof PROVIDERS)[number];

/** Names of secrets look like environment variables, so a Worker var of the same name can back them. */
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
});

export const WorkspaceConfigSchema = z.strictObject({
  model: ModelEntrySchema.optional(),
  fallback_model: ModelEntrySchema.optional(),
  auxiliary_model: ModelEntrySchema.optional(),
  runtime: RuntimeConfigSchema.default(() => RuntimeConfigSchema.parse({})),
  toolchain: ToolchainConfigSchema.optional(),
});

export type WorkspaceConfig = z.infer<typeof WorkspaceConfigSchema>;
export type WorkspaceConfigInput = z.input<typeof WorkspaceConfigSchema>;

export const DEFAULT_CONFIG: WorkspaceConfig = WorkspaceConfigSchema.parse({});
