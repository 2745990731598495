/**
 * Every size limit, list budget and workspace quota Beaver enforces, with its default, in one place
 * (docs/limits.md). The operator overrides any of them with the Worker var `BEAVER_LIMITS`, a JSON
 * object of the names below: one var checked by one strict schema, so a misspelt name is an error
 * rather than a silently ignored override. It lives in storage because it reads the environment.
 * Rate limits are not here: they are the platform's Rate Limiting bindings (wrangler.toml).
 */
import { z } from "zod";
import type { Env } from "./env.ts";
import { AppError, zodIssues } from "../kernel/errors.ts";

const KiB = 1024;
const MiB = 1024 * KiB;
/** A whole number from `min` to `max`: every limit's override is one. */
const intRange = (min: number, max: number) => z.number().int().min(min).max(max);

/** Defaults, in UTF-8 bytes (sizes, budgets) or rows per workspace (quotas). */
export const DEFAULT_LIMITS = {
  /** A session's `title`. */
  session_title_bytes: 1 * KiB,
  /** A session's `metadata`, serialised as JSON. */
  session_metadata_bytes: 16 * KiB,
  /** A message's `content` (`POST /api/sessions/:id/messages`, `POST /api/chat`). */
  message_bytes: 64 * KiB,
  /** An agent's `model` override, serialised as JSON. */
  agent_model_bytes: 4 * KiB,
  /** Short labels: a token's or a workspace's `name`. */
  label_bytes: 200,
  /** A mail's `subject`. */
  mail_subject_bytes: 1 * KiB,
  /** A mail's (or a reply's) `body`. */
  mail_body_bytes: 64 * KiB,
  /** A toolchain task comment's `body`. */
  task_comment_bytes: 64 * KiB,
  /** A toolchain task output's `content`. */
  task_output_bytes: 256 * KiB,
  /** The workspace configuration (`PUT /api/config`), serialised as JSON. */
  config_bytes: 64 * KiB,
  /** One uploaded plugin package (the archive's bytes). */
  plugin_package_bytes: 32 * MiB,
  /** The serialised items of one list response; a longer page stops early and hands back a cursor. */
  list_page_bytes: 1 * MiB,
  /** Sessions per workspace (nothing deletes a session; closing one keeps its log). */
  sessions: 10_000,
  /** Skills per workspace (managed and plugin-origin). */
  skills: 500,
  /** Plugins per workspace (uploaded or from sources). */
  plugins: 100,
  /** Plugin sources (Gitea repositories) per workspace. */
  plugin_sources: 50,
  /** Toolchain agents per workspace. */
  agents: 100,
  /** Characters the `notes` memory store may hold per scope (docs/memory.md). */
  memory_notes_chars: 2_200,
  /** Characters the `profile` memory store may hold per scope (docs/memory.md). */
  memory_profile_chars: 1_375,
  /** Schedules per workspace (`/api/schedules` and the `schedule` tool; docs/schedules.md). */
  schedules: 100,
  /** `Retry-After` of a 429 `rate_limited`: the period of the rate limit bindings in wrangler.toml. */
  rate_limit_period_seconds: 60,
  /** A session workspace's total file bytes (docs/workspace.md): a 50 MB repository fits. */
  workspace_bytes: 200 * MiB,
  /** Files in a session workspace. */
  workspace_files: 20_000,
  /** One file in a session workspace. */
  workspace_file_bytes: 10 * MiB,
  /** What one workspace tool (`read_file`, `grep`, `list_files`, `bash` stdout and stderr each) hands the model. */
  workspace_tool_output_bytes: 32 * KiB,
  /** Wall time of one `bash` command in a session workspace, in milliseconds. */
  shell_time_ms: 20_000,
  /** Characters of one tool result the model reads: the central cap over each tool's `maxResultChars` (docs/agent-loop.md). */
  tool_result_chars: 100_000,
  /**
   * Bytes one `git clone` may download (its packfile, held in memory while isomorphic-git indexes it;
   * docs/workspace.md, "Git"): a 50 MB repository's pack fits, the 128 MB isolate still has room.
   */
  git_clone_bytes: 64 * MiB,
  /**
   * Wall time of one `git clone`, `fetch` or `push` in the shell, in milliseconds: its own cap instead of
   * `shell_time_ms`, since a 5,000-file clone takes tens of seconds (docs/workspace.md, "Git").
   */
  git_network_ms: 120_000,
  /** The end of a CI job's log that `gitea_ci_logs` hands the model (docs/toolchain.md, "Code scenarios"). */
  ci_log_tail_bytes: 16 * KiB,
} as const;

export type Limits = { [K in keyof typeof DEFAULT_LIMITS]: number };
export type LimitName = keyof Limits;
export type SizeLimit = { [K in LimitName]: K extends `${string}_bytes` ? K : never }[LimitName];
export type QuotaName = "sessions" | "skills" | "plugins" | "plugin_sources" | "agents" | "schedules";

/**
 * The override's schema, built on first use: only a Worker with `BEAVER_LIMITS` set parses one, so
 * the others need not build its 30 number schemas at startup (docs/performance.md, "Startup, third pass").
 */
let overrideSchema: ReturnType<typeof buildOverrideSchema> | undefined;

function buildOverrideSchema() {
  const bytes = intRange(1, 100 * MiB);
  const count = intRange(0, 10_000_000);
  return z
    .strictObject({
      session_title_bytes: bytes,
      session_metadata_bytes: bytes,
      message_bytes: bytes,
      agent_model_bytes: bytes,
      label_bytes: bytes,
      mail_subject_bytes: bytes,
      mail_body_bytes: bytes,
      task_comment_bytes: bytes,
      task_output_bytes: bytes,
      config_bytes: bytes,
      plugin_package_bytes: bytes,
      list_page_bytes: bytes,
      sessions: count,
      skills: count,
      plugins: count,
      plugin_sources: count,
      agents: count,
      memory_notes_chars: intRange(1, 100_000),
      memory_profile_chars: intRange(1, 100_000),
      schedules: count,
      rate_limit_period_seconds: z.union([z.literal(10), z.literal(60)]),
      workspace_bytes: intRange(1, 4 * 1024 * MiB),
      workspace_files: intRange(1, 1_000_000),
      workspace_file_bytes: bytes,
      workspace_tool_output_bytes: intRange(1 * KiB, 1 * MiB),
      shell_time_ms: intRange(100, 300_000),
      tool_result_chars: intRange(1_000, 1_000_000),
      git_clone_bytes: intRange(1 * KiB, 96 * MiB),
      git_network_ms: intRange(1_000, 900_000),
      ci_log_tail_bytes: intRange(1 * KiB, 1 * MiB),
    } satisfies { [K in LimitName]: z.ZodType<number> })
    .partial();
}

/** The last override parsed; the var does not change within an isolate, so it is parsed once. */
let cached: { raw: unknown; limits: Limits } | null = null;

/**
 * The limits in force: the defaults with the operator's `BEAVER_LIMITS` applied. The var may be a
 * JSON string (`wrangler secret`/dashboard) or an object (`[vars]` in wrangler.toml). An invalid
 * override is a misconfiguration answered 500, never silently ignored.
 */
export function limitsOf(env: Env): Limits {
  const raw = env.BEAVER_LIMITS;
  if (cached && cached.raw === raw) return cached.limits;
  const limits = { ...DEFAULT_LIMITS, ...parseOverride(raw) };
  cached = { raw, limits };
  return limits;
}

function parseOverride(raw: unknown): Partial<Limits> {
  if (raw === undefined || raw === "") return {};
  let value: unknown = raw;
  if (typeof raw === "string") {
    try {
      value = JSON.parse(raw);
    } catch {
      throw new AppError("server_misconfigured", "BEAVER_LIMITS is not valid JSON");
    }
  }
  const parsed = (overrideSchema ??= buildOverrideSchema()).safeParse(value);
  if (!parsed.success) {
    throw new AppError("server_misconfigured", "BEAVER_LIMITS is invalid", { details: zodIssues(parsed.error) });
  }
  return parsed.data;
}

/** Bytes of a byte array, UTF-8 bytes of a string, or of a value serialised as JSON. */
export function byteSize(value: unknown): number {
  if (value instanceof Uint8Array) return value.byteLength;
  const text = typeof value === "string" ? value : (JSON.stringify(value) ?? "");
  return new TextEncoder().encode(text).byteLength;
}

/** 413 `payload_too_large` naming the field when `value` is over its limit; absent values pass. */
export function assertFieldSize(env: Env, field: string, value: unknown, limit: SizeLimit): void {
  if (value === undefined || value === null) return;
  const max = limitsOf(env)[limit];
  const size = byteSize(value);
  if (size > max) {
    throw new AppError("payload_too_large", `${field} is ${size} bytes; the limit is ${max}`, { details: { field, limit_bytes: max } });
  }
}

/** 429 `quota_exceeded` (no Retry-After: waiting does not help) when `used + adding` would pass the quota. */
export function assertQuota(env: Env, quota: QuotaName, used: number, adding = 1): void {
  const limit = limitsOf(env)[quota];
  if (used + adding > limit) {
    throw new AppError("quota_exceeded", `The workspace has ${used} ${quota.replace("_", " ")}; the quota is ${limit}`, {
      details: { quota, limit, used },
    });
  }
}
