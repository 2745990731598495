/**
 * The `delegate` tool (docs/delegation.md): hands tasks to child sessions, each its own SessionDO
 * running its own agent loop, all at once, and answers each child's final answer, status and session
 * id. It lives in a domain rather than the runtime because it reads the agent registry (tasks), and
 * joins every tool set at the composition root (src/app/runtime.ts).
 */
import { defineTool, fail, ok, type ToolContext, type ToolResult } from "../../runtime/index.ts";
import { DEFAULT_CONFIG } from "../../storage/config/schema.ts";
import { listAgents } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { cancelChild, runChild } from "./child-run.ts";
import { sentByOf } from "../../kernel/sent-by.ts";
import {
  DELEGATE_TOOL,
  DelegateInputSchema,
  childIdempotencyKey,
  childInstructions,
  childMessage,
  childOutcome,
  childRef,
  childSessionId,
  delegationOf,
  planDelegation,
  treeUsage,
  type ChildPlan,
  type DelegateInput,
} from "./delegation.ts";

export const delegateTool = defineTool<DelegateInput>({
  name: DELEGATE_TOOL,
  description:
    "Hand tasks to other agents, each in a fresh session that sees only the task and context you pass. " +
    "Tasks in one call run in parallel; you get each one's final answer, status and session id.",
  input: DelegateInputSchema,
  // Run again after a restart: the children's ids are derived from this call, so nothing starts twice.
  idempotent: true,
  async execute(args, ctx) {
    const runtime = (ctx.config ?? DEFAULT_CONFIG).runtime;
    const mark = delegationOf(ctx.data);
    const agents = args.tasks.some((t) => t.agent !== undefined) ? await enabledAgents(ctx) : new Map<string, Agent>();
    const plan = planDelegation(args, {
      depth: mark?.depth ?? 0,
      maxDepth: runtime.max_delegation_depth,
      maxParallel: runtime.max_parallel_delegates,
      parentTools: ctx.tools ?? [],
      agents: new Set(agents.keys()),
    });
    if (!plan.ok) return fail(plan.code, plan.message);
    // The run's token budget counts its children's tokens: each child gets an equal share of what is left.
    const share = ctx.tokensLeft === undefined ? undefined : Math.floor(ctx.tokensLeft / plan.children.length);
    if (share !== undefined && share < MIN_CHILD_TOKENS)
      return fail(
        "run_token_budget",
        `This run has ${ctx.tokensLeft} tokens left (runtime.max_run_tokens counts delegated children's tokens too): too few to share among ${plan.children.length} task(s); do the work yourself or answer`,
      );
    const children = await Promise.all(
      plan.children.map(async (child) => ({ child, id: await childSessionId(ctx.runId, ctx.toolCallId, child.index) })),
    );
    const results = await Promise.all(children.map(({ child, id }) => startAndWait(ctx, child, id, agents, (mark?.depth ?? 0) + 1, share)));
    const outcomes = children.map(({ child, id }, i) => childOutcome(child, id, results[i]!));
    const result: ToolResult = ok(JSON.stringify({ results: outcomes }));
    return { ...result, usage: treeUsage(results) };
  },
  // The parent run ended cancelled with this call open — perhaps in an instance that resumed it after an
  // eviction, with no `execute` left to pass the abort on: cancel each child by its derived id and key.
  // A child cancelled this way tells its own open `delegate` calls in turn (docs/delegation.md, "Cancel").
  async onRunCancelled(raw, ctx) {
    const args = DelegateInputSchema.safeParse(raw);
    if (!args.success) return;
    await Promise.all(
      args.data.tasks.map(async (_task, index) => {
        const sessionId = await childSessionId(ctx.runId, ctx.toolCallId, index);
        await cancelChild(ctx.env, ctx.workspaceId, sessionId, childIdempotencyKey(ctx.runId, ctx.toolCallId, index));
      }),
    );
  },
});

async function enabledAgents(ctx: ToolContext): Promise<Map<string, Agent>> {
  const all = await listAgents(ctx.env, ctx.workspaceId);
  return new Map(all.filter((a) => a.enabled).map((a) => [a.id, a]));
}

/** A child with no share of its parent's token budget would fail before its first model step. */
const MIN_CHILD_TOKENS = 1;

function startAndWait(ctx: ToolContext, child: ChildPlan, sessionId: string, agents: Map<string, Agent>, depth: number, tokens?: number) {
  const agent = child.task.agent !== undefined ? agents.get(child.task.agent) : undefined;
  const ref = childRef(ctx.runId, ctx.toolCallId, child.index);
  return runChild(
    {
      env: ctx.env,
      workspaceId: ctx.workspaceId,
      sessionId,
      title: `Delegated: ${child.task.task.replace(/\s+/g, " ").slice(0, 60)}`,
      metadata: {
        parent_session_id: ctx.sessionId,
        parent_run_id: ctx.runId,
        parent_tool_call_id: ctx.toolCallId,
        delegation_depth: depth,
        ...(agent ? { agent: agent.id } : {}),
      },
      content: childMessage(child.task),
      systemPrompt: childInstructions(ctx.sessionId),
      idempotencyKey: childIdempotencyKey(ctx.runId, ctx.toolCallId, child.index),
      ...(ctx.toolset !== undefined ? { toolset: ctx.toolset } : {}),
      tools: child.tools,
      ...(tokens !== undefined ? { maxRunTokens: tokens } : {}),
      mark: { depth, parent_session_id: ctx.sessionId, parent_run_id: ctx.runId },
      // The agent's own model and skills; without an agent, the parent's model.
      model: agent ? agent.model : (ctx.modelOverride ?? null),
      ...(agent?.skills ? { skills: agent.skills } : {}),
      channel: { channel: "delegation", device_id: ctx.sessionId, external_id: ref },
      sentBy: sentByOf(ctx.data),
    },
    ctx.signal,
  );
}
