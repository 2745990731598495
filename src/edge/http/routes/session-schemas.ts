/**
 * Request and response schemas shared by the session routes (sessions, messages, stream, chat),
 * plus the one helper that resolves a path's session for the caller's workspace.
 */
import { z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../context.ts";
import { SESSION_ID_PATTERN, SessionClient, type DisplayItem, type Message, type PersistentEvent } from "../../../runtime/index.ts";

export const SessionIdParam = z.object({
  id: z
    .string()
    .regex(SESSION_ID_PATTERN, "must be a session id (letters, digits, _ . : -)")
    .openapi({ param: { name: "id", in: "path" } }),
});

export const RunIdParam = SessionIdParam.extend({
  run_id: z
    .string()
    .regex(/^[A-Za-z0-9_-]{1,64}$/, "must be a run id")
    .openapi({ param: { name: "run_id", in: "path" } }),
});

const Usage = z
  .object({
    input_tokens: z.number(),
    output_tokens: z.number(),
    total_tokens: z.number(),
    cache_read_tokens: z.number().optional().openapi({ description: "Input tokens read from the provider's prompt cache (when reported)" }),
    cache_write_tokens: z
      .number()
      .optional()
      .openapi({ description: "Input tokens written to the provider's prompt cache (when reported)" }),
    reasoning_tokens: z.number().optional().openapi({ description: "Output tokens spent on reasoning (when reported)" }),
  })
  .openapi("Usage");

const ForkOrigin = z.object({ session_id: z.string(), event_id: z.string().nullable() });

export const SessionSchema = z
  .object({
    id: z.string(),
    workspace_id: z.string(),
    title: z.string(),
    status: z
      .enum(["open", "stopping", "stopped", "closed"])
      .describe("stopping/stopped: a stop was asked (new messages answer 409 session_stopping); closed: closed after a stop"),
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.number(),
    updated_at: z.number(),
    last_seq: z.number(),
    active_leaf: z.string().nullable(),
    usage: Usage,
    active_run_id: z.string().nullable(),
    queued_runs: z.number(),
    archived_at: z.number().nullable().optional().describe("When a person archived it; absent or null when not archived"),
    channel: z.string().nullable().optional().describe("The outbound channel this session posts each run's result to"),
    forked_from: ForkOrigin.optional().describe("A fork: the session and event its history was copied from"),
    forks: z
      .array(ForkOrigin.extend({ at: z.number() }))
      .optional()
      .describe("Forks made of this session, newest last (at most 100; each is also a session_info event)"),
  })
  .openapi("Session");

export const SessionListItem = z
  .object({
    id: z.string(),
    title: z.string(),
    status: z.string(),
    metadata: z.record(z.string(), z.unknown()),
    created_at: z.number(),
    updated_at: z.number(),
    last_seq: z.number(),
    archived_at: z.number().nullable(),
    usage: Usage,
  })
  .openapi("SessionListItem");

export const RunResultSchema = z
  .object({
    session_id: z.string(),
    run_id: z.string(),
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]),
    output_text: z.string(),
    finish_reason: z.string(),
    tool_iterations: z.number(),
    provider: z.string().nullable(),
    model: z.string().nullable(),
    usage: Usage.describe("Tokens of this run's own model steps; its delegated children's are in delegated_usage, never here"),
    delegated_usage: Usage.optional().describe(
      'Tokens spent by the child runs this run delegated to, and theirs in turn (docs/delegation.md, "Usage"); not part of usage. Both count toward runtime.max_run_tokens',
    ),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .openapi("RunResult");

export const RunSchema = z
  .object({
    id: z.string(),
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]),
    created_at: z.number(),
    started_at: z.number().nullable(),
    ended_at: z.number().nullable(),
    idempotency_key: z.string().nullable(),
    source: z.enum(["steer", "followUp"]).nullable(),
    toolset: z.string().nullable(),
    retry_of: z.string().nullable().describe("A retry: the failed run whose input this run ran again"),
    result: RunResultSchema,
  })
  .openapi("Run");

/** Events are documented, not re-validated: they come from our own log in the wire format of events.ts. */
export const EventSchema = z
  .custom<PersistentEvent>((v) => typeof v === "object" && v !== null)
  .openapi("SessionEvent", {
    type: "object",
    description: "A persistent session event (id, parent_id, seq, session_id, client_id, ts, run_id, type, payload fields)",
  });

/** `skills` on a message: skills to activate for its run by name (docs/skills-and-plugins.md, "Skills in a run"). */
export const RequestedSkills = z
  .array(
    z
      .string()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "must be a skill name")
      .max(64),
  )
  .max(8)
  .describe("Skills to activate for this run by name, besides those chosen automatically (at most 8)");

export const MessageSchema = z.custom<Message>((v) => typeof v === "object" && v !== null).openapi("ContextMessage", { type: "object" });
export const DisplayItemSchema = z
  .custom<DisplayItem>((v) => typeof v === "object" && v !== null)
  .openapi("DisplayItem", { type: "object" });

export const Flag = z.enum(["true", "false"]).transform((v) => v === "true");

export const SubmitAccepted = z
  .object({ session_id: z.string(), run_id: z.string(), status: z.string(), deduplicated: z.boolean(), steered: z.boolean() })
  .openapi("SubmitAccepted");

/** The path's session, for the caller's workspace (the session answers 404 to any other). */
export function sessionFor(c: Context<AppEnv>, id: string): { session: SessionClient; workspaceId: string } {
  return { session: SessionClient.of(c.env, id), workspaceId: c.get("principal").workspaceId };
}
