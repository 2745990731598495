/**
 * The two-way live channel (docs/sessions.md, "Two-way live channel"): what the session WebSocket does
 * with one client frame. A message (plain, steer or follow-up) is submitted like `POST …/messages`,
 * with its channel recorded (`channel_inject`) and counted against the same rate limits; a cancel and
 * an approval decision go the way their routes go. Every frame is answered on the socket — an `ack`
 * with what the route would have answered, or an error frame — and the socket stays open. The
 * SessionDO hands in its own methods, so the channel reuses them rather than repeating them.
 */
import type { Env } from "../../storage/env.ts";
import { limitsOf } from "../../storage/limits.ts";
import { withinRateLimit } from "../../storage/rate-limits.ts";
import { newId } from "../../kernel/ids.ts";
import { success, type Outcome, type WireError } from "../../kernel/outcome.ts";
import type { SubmitRunInput } from "./contract.ts";
import type { SubmitOutcome } from "./run-queue.ts";
import type { RunRow } from "./do-storage.ts";
import type { WsAttachment } from "./live-clients.ts";
import type { ApprovalDecision } from "./approvals.ts";
import { errorFrame, parseClientFrame, type ClientFrame } from "./client-frames.ts";

/** What the channel may do in the session, as the SessionDO's own methods. */
export interface LiveChannelDeps {
  env: Env;
  /** The session's workspace; null when the session does not exist. */
  workspaceId(): string | null;
  submit(input: SubmitRunInput): Outcome<SubmitOutcome>;
  cancel(workspaceId: string): Outcome<{ run_id: string; status: RunRow["status"] } | null>;
  decide(workspaceId: string, approvalId: string, decision: ApprovalDecision, clientId: string): Outcome<{ run_id: string }>;
}

/** Handles one frame from `ws` (whose settings are `att`) and answers it on the socket. */
export async function handleClientFrame(
  deps: LiveChannelDeps,
  ws: WebSocket,
  att: WsAttachment | null,
  message: string | ArrayBuffer,
): Promise<void> {
  const send = (text: string) => {
    try {
      ws.send(text);
    } catch {
      // closing under us
    }
  };
  const parsed = parseClientFrame(message, limitsOf(deps.env).message_bytes);
  if (!parsed.ok) return send(errorFrame(parsed.error));
  if (!att?.may_send)
    return send(errorFrame({ code: "forbidden", message: "This stream may only read: sending needs a member or admin token" }));
  const workspaceId = deps.workspaceId();
  if (workspaceId === null) return send(errorFrame({ code: "not_found", message: "Session not found" }));
  // A message starts (or joins) a run: the same per-token and per-workspace limits as POST …/messages.
  if (parsed.frame.type === "message") {
    const limited = await rateLimited(deps.env, att, workspaceId);
    if (limited) return send(errorFrame(limited));
  }
  const outcome = act(deps, parsed.frame, att, workspaceId);
  send(outcome.ok ? JSON.stringify({ type: "ack", frame: parsed.frame.type, ...outcome.value }) : errorFrame(outcome.error));
}

async function rateLimited(env: Env, att: WsAttachment, workspaceId: string): Promise<WireError | null> {
  const over = (scope: "token" | "workspace"): WireError => ({
    code: "rate_limited",
    message: `Too many messages for this ${scope}; retry later`,
    details: { scope, retry_after: limitsOf(env).rate_limit_period_seconds },
  });
  if (att.token_id !== undefined && !(await withinRateLimit(env, "RATE_LIMIT_TOKEN", `token:${att.token_id}`))) return over("token");
  if (!(await withinRateLimit(env, "RATE_LIMIT_WORKSPACE", `workspace:${workspaceId}`))) return over("workspace");
  return null;
}

function act(deps: LiveChannelDeps, frame: ClientFrame, att: WsAttachment, workspaceId: string): Outcome<Record<string, unknown>> {
  switch (frame.type) {
    case "message": {
      const input: SubmitRunInput = {
        workspace_id: workspaceId,
        content: frame.content,
        client_id: frame.client_id ?? att.client_id,
        ...(frame.mode === "steer" ? { source: "steer" as const } : frame.mode === "follow_up" ? { source: "followUp" as const } : {}),
        // The device: the stream URL's `device_id`, else the stream's client id; the message's own id, else a new one.
        channel: { channel: "websocket", device_id: att.device_id ?? att.client_id, external_id: frame.client_id ?? newId("msg") },
      };
      const submitted = deps.submit(input);
      return submitted.ok ? success({ ...submitted.value }) : submitted;
    }
    case "cancel": {
      const cancelled = deps.cancel(workspaceId);
      return cancelled.ok ? success({ run: cancelled.value }) : cancelled;
    }
    case "approve":
    case "deny": {
      const decided = deps.decide(workspaceId, frame.approval_id, frame.type, att.client_id);
      return decided.ok ? success({ approval_id: frame.approval_id, decision: frame.type, run_id: decided.value.run_id }) : decided;
    }
  }
}
