/**
 * The decisions of the `delegate` tool (docs/delegation.md), as pure functions over data: what a call
 * may ask for (depth, parallel limit, tools, agents), the deterministic ids of its child sessions, the
 * child's first message and what the parent reads back. The tool (delegate-tool.ts) does the I/O.
 */
import { z } from "zod";
import { sha256Hex } from "../../kernel/hash.ts";
import type { RunResult, Usage } from "../../runtime/index.ts";

/** The tool's name, also what a child at the depth limit is no longer offered. */
export const DELEGATE_TOOL = "delegate";

/** Characters of a child's answer the parent reads (the rest is in the child's session). */
export const MAX_ANSWER_CHARS = 16_000;

export const DelegateTaskSchema = z.strictObject({
  agent: z.string().min(1).max(64).optional().describe("A registered agent's id; absent = the same configuration as this run"),
  task: z.string().min(1).max(20_000).describe("What the child should do; it sees nothing of this conversation but this and `context`"),
  context: z.string().max(50_000).optional().describe("Facts the child needs, since it does not see this conversation"),
  tools: z.array(z.string().min(1).max(128)).max(64).optional().describe("Tool names the child may use (at most yours; default: yours)"),
});
export type DelegateTask = z.infer<typeof DelegateTaskSchema>;

export const DelegateInputSchema = z.strictObject({ tasks: z.array(DelegateTaskSchema).min(1).max(16) });
export type DelegateInput = z.infer<typeof DelegateInputSchema>;

/** Where a run stands in a delegation tree: kept in its `tool_data` (so only delegation reads it) and in its session's metadata. */
export interface DelegationMark {
  depth: number;
  parent_session_id: string;
  parent_run_id: string;
}

/** The mark of the run a tool runs in (depth 0 for a run nobody delegated). */
export function delegationOf(data: Readonly<Record<string, unknown>>): DelegationMark | null {
  const mark = data.delegation;
  if (typeof mark !== "object" || mark === null) return null;
  const depth = (mark as { depth?: unknown }).depth;
  return typeof depth === "number" ? (mark as DelegationMark) : null;
}

/** What the parent run offers its children: its tools, limits and the agents the workspace knows. */
export interface DelegationScope {
  depth: number;
  maxDepth: number;
  maxParallel: number;
  parentTools: readonly string[];
  /** Enabled agents by id. */
  agents: ReadonlySet<string>;
}

/** One child to start: its task, agent and the tools it is offered. */
export interface ChildPlan {
  index: number;
  task: DelegateTask;
  tools: string[];
}

export type Plan = { ok: true; children: ChildPlan[] } | { ok: false; code: string; message: string };

/** Checks a call against the rules (docs/delegation.md, "Rules"); the first broken one is the model's error. */
export function planDelegation(input: DelegateInput, scope: DelegationScope): Plan {
  if (scope.depth >= scope.maxDepth)
    return {
      ok: false,
      code: "delegation_depth",
      message: `This session is at delegation depth ${scope.depth}, the limit (runtime.max_delegation_depth = ${scope.maxDepth}); do the work yourself`,
    };
  if (input.tasks.length > scope.maxParallel)
    return {
      ok: false,
      code: "too_many_tasks",
      message: `At most ${scope.maxParallel} tasks at once (runtime.max_parallel_delegates); this call has ${input.tasks.length}. Split them over several calls`,
    };
  const children: ChildPlan[] = [];
  const childDepth = scope.depth + 1;
  for (const [index, task] of input.tasks.entries()) {
    if (task.agent !== undefined && !scope.agents.has(task.agent)) {
      const known = [...scope.agents].sort();
      return {
        ok: false,
        code: "unknown_agent",
        message: `Task ${index}: there is no enabled agent '${task.agent}'. ${known.length > 0 ? `Agents: ${known.join(", ")}` : "The workspace has no agents; leave `agent` out to use your own configuration"}`,
      };
    }
    const lacking = (task.tools ?? []).filter((t) => !scope.parentTools.includes(t));
    if (lacking.length > 0)
      return {
        ok: false,
        code: "tools_not_allowed",
        message: `Task ${index}: a child may use only your tools; you lack ${lacking.map((t) => `'${t}'`).join(", ")}. Your tools: ${scope.parentTools.join(", ")}`,
      };
    const wanted = task.tools ?? [...scope.parentTools];
    // A child at the depth limit is not offered `delegate`: it could only fail.
    const tools = childDepth >= scope.maxDepth ? wanted.filter((t) => t !== DELEGATE_TOOL) : wanted;
    children.push({ index, task, tools: [...new Set(tools)] });
  }
  return { ok: true, children };
}

/** The child's session id: derived from the parent run and tool call, so a resumed parent finds the same child. */
export async function childSessionId(parentRunId: string, toolCallId: string, index: number): Promise<string> {
  return `dlg_${(await sha256Hex(`${parentRunId}\u0000${toolCallId}\u0000${index}`)).slice(0, 32)}`;
}

/** Names one child: `<parent run>/<tool call>/<task index>` (its `channel_inject` external id). */
export function childRef(parentRunId: string, toolCallId: string, index: number): string {
  return `${parentRunId}/${toolCallId}/${index}`;
}

/** The child's run's idempotency key, derived like its session id: a resumed parent submits the same run. */
export function childIdempotencyKey(parentRunId: string, toolCallId: string, index: number): string {
  return `delegate:${childRef(parentRunId, toolCallId, index)}`;
}

/** The child's first (and only) message: the task, then the context the parent passed. */
export function childMessage(task: DelegateTask): string {
  return task.context ? `${task.task}\n\n## Context\n${task.context}` : task.task;
}

/** The system prompt section a child run gets. */
export function childInstructions(parentSessionId: string): string {
  return [
    "## Delegated task",
    `Another agent (session ${parentSessionId}) handed you this task. You see only what it passed you.`,
    "Do the task and end with a final answer that stands on its own: that answer is all the other agent reads.",
  ].join("\n");
}

/** What the parent reads about one child. */
export interface ChildOutcome {
  index: number;
  agent: string | null;
  session_id: string;
  run_id: string;
  status: RunResult["status"];
  answer: string;
  error?: { code: string; message: string };
}

export function childOutcome(plan: ChildPlan, sessionId: string, result: RunResult): ChildOutcome {
  const answer =
    result.output_text.length > MAX_ANSWER_CHARS
      ? `${result.output_text.slice(0, MAX_ANSWER_CHARS)}… [cut; the rest is in session ${sessionId}]`
      : result.output_text;
  return {
    index: plan.index,
    agent: plan.task.agent ?? null,
    session_id: sessionId,
    run_id: result.run_id,
    status: result.status,
    answer,
    ...(result.error ? { error: result.error } : {}),
  };
}

/** Everything the children spent: their own usage and what they delegated in turn. */
export function treeUsage(results: readonly RunResult[]): Usage {
  let total: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for (const r of results) for (const u of [r.usage, r.delegated_usage]) if (u) total = sum(total, u);
  return total;
}

function sum(a: Usage, b: Usage): Usage {
  return {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
}
