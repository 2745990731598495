/**
 * A run's receipt, derived from its replicated events (docs/learning.md, "Run receipts"). Pure: the
 * store reads the run row, its events, the session's metadata and, for a toolchain run, its task, and
 * this turns them into the receipt. Deriving twice from the same facts gives the same receipt, so the
 * job that writes receipts may repeat itself safely.
 */
import type { PersistentEvent, Usage } from "../../../runtime/index.ts";

export type RunEndStatus = "completed" | "failed" | "cancelled";
export type Verification = "pending" | "verified" | "failed" | "cancelled" | "superseded";
export type Outcome = "success" | "failure" | "cancelled" | "pending";

export interface ReceiptSkill {
  name: string;
  version: string;
  content_hash: string | null;
  reason: string | null;
}

export interface ReceiptTool {
  name: string;
  calls: number;
  errors: number;
  /** Calls a person (or the approval timeout) denied. */
  denied: number;
}

/** What the receipt keeps beside its indexed columns (stored as JSON). */
export interface ReceiptBody {
  skills: ReceiptSkill[];
  tools: ReceiptTool[];
  usage: Usage;
  provider: string | null;
  model: string | null;
  tool_iterations: number;
  error: { code: string; message: string } | null;
  task_id: string | null;
}

export interface Receipt {
  run_id: string;
  session_id: string;
  agent_id: string | null;
  status: RunEndStatus;
  verification: Verification | null;
  outcome: Outcome;
  ended_at: number;
  body: ReceiptBody;
}

export interface ReceiptFacts {
  run: { id: string; sessionId: string; status: RunEndStatus; endedAt: number; result: Record<string, unknown> | null };
  /** The run's persistent events, any order. */
  events: PersistentEvent[];
  sessionMetadata: Record<string, unknown>;
  /** The toolchain task of a toolchain run (session metadata `task_type: "toolchain"`), when found. */
  task: { id: string; status: string; runId: string | null } | null;
}

const ZERO: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
/** Error messages are kept short: the log has the whole text. */
const ERROR_CHARS = 500;

export function deriveReceipt(f: ReceiptFacts): Receipt {
  const events = [...f.events].sort((a, b) => a.seq - b.seq);
  const skills: ReceiptSkill[] = [];
  const tools = new Map<string, ReceiptTool>();
  const tool = (name: string) => {
    let t = tools.get(name);
    if (!t) tools.set(name, (t = { name, calls: 0, errors: 0, denied: 0 }));
    return t;
  };
  let failedError: { code: string; message: string } | null = null;
  const stepUsage: Usage = { ...ZERO };
  for (const e of events) {
    if (e.type === "skill_activation_snapshotted") {
      for (const s of e.skills)
        if (!skills.some((k) => k.name === s.name))
          skills.push({ name: s.name, version: s.version, content_hash: s.content_hash ?? null, reason: s.reason ?? null });
    } else if (e.type === "message" && e.message.role === "assistant") {
      for (const c of e.message.tool_calls) tool(c.name).calls++;
      if (e.message.usage) {
        stepUsage.input_tokens += e.message.usage.input_tokens;
        stepUsage.output_tokens += e.message.usage.output_tokens;
        stepUsage.total_tokens += e.message.usage.total_tokens;
      }
    } else if (e.type === "message" && e.message.role === "tool_result") {
      if (e.message.is_error) tool(e.message.tool_name).errors++;
    } else if (e.type === "tool_approval_decided") {
      if (e.decision === "deny") tool(e.tool_name).denied++;
    } else if (e.type === "run_failed") {
      failedError = e.error;
    }
  }
  const result = f.run.result ?? {};
  const usage = isUsage(result.usage) ? result.usage : stepUsage;
  const error = isError(result.error) ? result.error : failedError;
  const isToolchain = f.sessionMetadata.task_type === "toolchain";
  const verification = isToolchain ? verificationOf(f.run.id, f.task) : null;
  return {
    run_id: f.run.id,
    session_id: f.run.sessionId,
    agent_id: typeof f.sessionMetadata.agent_id === "string" ? f.sessionMetadata.agent_id : null,
    status: f.run.status,
    verification,
    outcome: outcomeOf(f.run.status, verification),
    ended_at: f.run.endedAt,
    body: {
      skills: skills.sort((a, b) => a.name.localeCompare(b.name)),
      tools: [...tools.values()].sort((a, b) => a.name.localeCompare(b.name)),
      usage,
      provider: typeof result.provider === "string" ? result.provider : null,
      model: typeof result.model === "string" ? result.model : null,
      tool_iterations: typeof result.tool_iterations === "number" ? result.tool_iterations : 0,
      error: error ? { code: error.code, message: error.message.slice(0, ERROR_CHARS) } : null,
      task_id: isToolchain && typeof f.sessionMetadata.task_id === "string" ? f.sessionMetadata.task_id : null,
    },
  };
}

/**
 * A toolchain run is verified by its task's outcome, which the dispatcher decides after the run from
 * evidence (docs/toolchain.md): only the task's latest run gets it; an earlier attempt or reminder run
 * of the same task is `superseded`. A task still open leaves it `pending` (the receipt is re-derived).
 */
function verificationOf(runId: string, task: ReceiptFacts["task"]): Verification {
  if (!task) return "superseded";
  if (task.runId !== runId) return task.status === "pending" || task.status === "working" ? "pending" : "superseded";
  if (task.status === "done") return "verified";
  if (task.status === "failed") return "failed";
  if (task.status === "cancelled") return "cancelled";
  return "pending";
}

function outcomeOf(status: RunEndStatus, verification: Verification | null): Outcome {
  if (verification === "verified") return "success";
  if (verification === "failed") return "failure";
  if (verification === "pending") return "pending";
  if (verification === "cancelled" || status === "cancelled") return "cancelled";
  return status === "completed" ? "success" : "failure";
}

/** The rating a verification counts as (docs/learning.md, "Feedback"): verified is up, failed is down. */
export function verificationRating(v: Verification | null): "up" | "down" | null {
  return v === "verified" ? "up" : v === "failed" ? "down" : null;
}

function isUsage(v: unknown): v is Usage {
  const u = v as Partial<Usage> | null;
  return typeof u === "object" && u !== null && typeof u.input_tokens === "number" && typeof u.total_tokens === "number";
}

function isError(v: unknown): v is { code: string; message: string } {
  const e = v as { code?: unknown; message?: unknown } | null;
  return typeof e === "object" && e !== null && typeof e.code === "string" && typeof e.message === "string";
}
