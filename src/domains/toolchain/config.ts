/**
 * The `toolchain` section of the workspace configuration (Gitea webhook target).
 * Secrets are referenced by name (workspace secret store, falling back to lent Worker secrets: README); every
 * number has a default so a workspace only writes what it wants to change.
 */
import { z } from "zod";
import type { ConfigSection, WorkspaceConfig } from "../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../kernel/memo.ts";

const secretName = z.string().regex(/^[A-Za-z_][A-Za-z0-9_]{0,63}$/, "must be a secret name");
const agentId = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be an agent id");

/** Action types a workspace may route explicitly (the ten scenarios plus system failures). */
export const ROUTABLE_ACTIONS = [
  "review_request",
  "review_updated",
  "review_result",
  "review_comment",
  "ci_failure",
  "issue_assigned",
  "deploy_failure",
  "mention",
  "review_merged",
  "system_failure",
  "infrastructure_failure",
] as const;

function isRegex(source: string): boolean {
  try {
    new RegExp(source, "i");
    return true;
  } catch {
    return false;
  }
}

const TimeoutsSchema = z.strictObject({
  /** Every Gitea API request is aborted after this long (infrastructure failure). */
  gitea_request_ms: z.number().int().min(100).max(120_000).default(10_000),
  /** How long one dispatch waits for a run before leaving it to the cron tick. */
  run_wait_ms: z.number().int().min(1_000).max(900_000).default(120_000),
  /** A working task without a report after this long gets one reminder run, then fails. */
  report_window_ms: z
    .number()
    .int()
    .min(1_000)
    .max(7 * 24 * 3_600_000)
    .default(30 * 60_000),
});

const RetrySchema = z.strictObject({
  /** Runs per task (first run + retries after business or infrastructure failures). */
  max_attempts: z.number().int().min(1).max(10).default(3),
  /** Business failures (verification failed) in a row that make a system failure. */
  business_failures_before_system: z.number().int().min(1).max(10).default(3),
  /** Delay before a retried task becomes pending again. */
  backoff_ms: z
    .number()
    .int()
    .min(0)
    .max(24 * 3_600_000)
    .default(60_000),
});

const ConcurrencySchema = z.strictObject({
  /** Tasks of one workspace that may be `working` at the same time. */
  max_working: z.number().int().min(1).max(50).default(2),
  /** Dispatch right after intake (otherwise only the cron tick dispatches). */
  dispatch_on_intake: z.boolean().default(true),
});

/** Git in the workspace shell (docs/workspace.md, "Git"): who commits, and what a push may do. */
const GitSchema = z.strictObject({
  /** The commit e-mail; `{agent}` becomes the agent's Gitea user name (the commit's author name). */
  author_email: z
    .string()
    .min(3)
    .max(254)
    .regex(/^[^\s<>@]+@[^\s<>@]+$/, "must be an e-mail address (may contain {agent})")
    .default("{agent}@users.noreply.beaver"),
  /** Force pushes (`git push --force`) are refused unless this is true. */
  allow_force_push: z.boolean().default(false),
  /** Pushes to the repository's default branch are refused unless this is true (protected branches always are). */
  allow_default_branch_push: z.boolean().default(false),
});

export const ToolchainConfigSchema = z.strictObject({
  gitea_base_url: z.url({ protocol: /^https?$/ }).optional(),
  webhook_secret: secretName.optional(),
  gitea_token_secret: secretName.optional(),
  /** Per action type, the agents that get the task instead of the default rule. */
  routing: z.partialRecord(z.enum(ROUTABLE_ACTIONS), z.array(agentId).min(1).max(20)).default({}),
  /** A commit status context or workflow/job name matching this (case-insensitive) is a deployment. */
  deploy_pattern: z.string().min(1).max(200).refine(isRegex, "must be a valid regular expression").default("^deploy"),
  timeouts: TimeoutsSchema.default(() => TimeoutsSchema.parse({})),
  retry: RetrySchema.default(() => RetrySchema.parse({})),
  concurrency: ConcurrencySchema.default(() => ConcurrencySchema.parse({})),
  /** Tool iterations one task run may take (a chat turn's limit, runtime.max_tool_iterations, is far lower). */
  max_tool_iterations: z.number().int().min(1).max(200).default(40),
  git: GitSchema.default(() => GitSchema.parse({})),
});
export type ToolchainConfig = z.infer<typeof ToolchainConfigSchema>;

/** The `toolchain` section as registered with the workspace configuration (src/app/config.ts). */
export const toolchainConfigSection: ConfigSection = { key: "toolchain", schema: ToolchainConfigSchema };

/**
 * The toolchain section of a workspace configuration with every default applied (for workspaces that
 * never wrote one). Stored sections were validated on write; one that no longer parses (a schema that
 * tightened since) is treated as unset rather than crashing every reader. Parsed once per config
 * object (kernel/memo.ts): every webhook delivery reads it.
 */
export const toolchainConfigOf: (config: WorkspaceConfig) => ToolchainConfig = memoByObject((config) => {
  const parsed = ToolchainConfigSchema.safeParse(config.toolchain ?? {});
  return deepFreeze(parsed.success ? parsed.data : ToolchainConfigSchema.parse({}));
});
