/**
 * The agent loop as a plain function over injected ports (docs/agent-loop.md, "Shape of a run"),
 * after pi-mono's `agentLoop` (packages/agent/src/agent-loop.ts): the model step, tool execution,
 * persistence, live frames, the clock and the hooks come in as ports, so the loop runs the same
 * inside the SessionDO (run-executor.ts is its Durable Object adapter) and in pure tests driven by a
 * fake stream (test/runtime/agent/agent-loop.pure.test.ts).
 *
 * Every step starts from what the store says (`progress`), never from memory, which is what makes a
 * run resumable: a tool whose result is persisted is not run again, and one that was started but has
 * no result is answered `interrupted` unless it is idempotent.
 */
import type { ModelMessage } from "ai";
import type { AssistantMessage, Message, ToolCall } from "../session/events.ts";
import type { RunProgress } from "../session/run-progress.ts";
import type { TransientInput } from "../session/session-log.ts";
import type { RunState } from "../session/do-storage.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import type { ExecutedToolCall } from "../tools/executor.ts";
import type { ToolResult } from "../tools/spec.ts";
import type { StepCallbacks, StepOutput } from "./model-step.ts";
import { fail } from "../tools/spec.ts";
import { toModelMessages } from "./model-messages.ts";
import { isAbortError } from "./model-step.ts";
import { addUsage, runTokens } from "../session/usage.ts";
import { AppError } from "../../kernel/errors.ts";
import { errorFields, log } from "../../kernel/log.ts";
import { newId } from "../../kernel/ids.ts";

const ZERO_USAGE = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };

/** How a run ended, as the loop (or its opening) decided it. */
export type LoopOutcome =
  { status: "completed" } | { status: "cancelled" } | { status: "failed"; error: { code: string; message: string } };

/** Thrown inside a run to end it with an outcome (cancel, the iteration limit, a restarted-too-often run). */
export class LoopStop extends Error {
  constructor(readonly outcome: Exclude<LoopOutcome, { status: "completed" }>) {
    super(outcome.status === "failed" ? outcome.error.message : outcome.status);
  }
}

/** Maps anything a run threw to its outcome: typed failures keep their code, anything else is `internal`. */
export function outcomeOf(err: unknown, cancelled: boolean): Exclude<LoopOutcome, { status: "completed" }> {
  if (err instanceof LoopStop) return err.outcome;
  if (cancelled || isAbortError(err)) return { status: "cancelled" };
  if (err instanceof AppError) return { status: "failed", error: { code: err.code, message: err.message } };
  log.error("run failed unexpectedly", errorFields(err));
  return { status: "failed", error: { code: "internal", message: err instanceof Error ? err.message : String(err) } };
}

/** The run facts the loop advances: the part of the run row's state it owns; the store persists them with each step. */
export type LoopState = Pick<
  RunState,
  "tool_iterations" | "steps" | "usage" | "delegated_usage" | "provider" | "model" | "output_text" | "finish_reason"
>;

/** Persistence: where the run stands and how its steps are written (the session log in the SessionDO). */
export interface LoopStore {
  /** Where the run stands, read from what is persisted (run-progress.ts). */
  progress(): RunProgress;
  /** Moves queued steer and follow-up messages into the log; how many there were. */
  takeSteers(): number;
  /** The active leaf: the parent of the next message. */
  leaf(): string | null;
  /** The session's messages for the next model step (window, compaction and skill messages applied). */
  history(): Promise<Message[]>;
  /** Persists one model step's message under `eventId`, with the loop state in the same write. */
  saveAssistant(eventId: string, parentId: string | null, message: AssistantMessage): void;
  /** The event id of a call started before (an interrupted run); undefined when it never started. */
  toolStarted(callId: string): string | undefined;
  markToolStarted(callId: string, eventId: string, at: number): void;
  saveToolResult(eventId: string, call: ToolCall, content: string, isError: boolean): void;
}

/** The model: one streamed step (main, then fallback; model-step.ts) with the run's system prompt and tools. */
export interface LoopModel {
  step(req: { messages: ModelMessage[]; tools: ToolRegistry; signal: AbortSignal; callbacks: StepCallbacks }): Promise<StepOutput>;
}

/** Tool execution: the run's frozen tools and their executor (tools/executor.ts: never throws). */
export interface LoopTools {
  registry: ToolRegistry;
  execute(call: ToolCall, io: { signal: AbortSignal; emitUpdate(partial: unknown): void }): Promise<ExecutedToolCall>;
}

/** Whether a call runs and with which arguments (the `beforeToolCall` chain and approvals). */
export type ToolGate = { run: true; args: unknown } | { run: false; result: ToolResult };

/** The extensions' hooks around the loop (extensions.ts); approvals live behind `gate`. */
export interface LoopHooks {
  /** `transformContext`, provider settling and `convertToLlm`. */
  context(built: Message[]): Promise<Message[]>;
  gate(call: ToolCall, known: boolean): Promise<ToolGate>;
  afterToolCall(call: ToolCall, result: ToolResult): Promise<ToolResult>;
}

/** Live frames (never stored): deltas, tool progress, turn boundaries. */
export interface LoopFrames {
  emit(frame: TransientInput): void;
}

export interface LoopPorts {
  runId: string;
  state: LoopState;
  store: LoopStore;
  model: LoopModel;
  tools: LoopTools;
  hooks: LoopHooks;
  frames: LoopFrames;
  clock: { now(): number };
  /** Aborted by a cancel; `cancelled()` also answers for a cancel recorded before a restart. */
  signal: AbortSignal;
  cancelled(): boolean;
  /** The tool-iteration limit and which setting it came from (named in the failure). */
  maxToolIterations: { limit: number; source: string };
  /** The run's token budget (its own and its delegated children's tokens) and its setting, when it has one. */
  maxRunTokens?: { limit: number; source: string };
}

/** Runs (or resumes) a run's steps until the model answers without calls; throws `LoopStop` or the step's error otherwise. */
export async function runAgentLoop(p: LoopPorts): Promise<{ status: "completed" }> {
  for (;;) {
    if (p.cancelled()) throw new LoopStop({ status: "cancelled" });
    let progress = p.store.progress();
    if (progress.next === "tools") {
      for (const batch of toolBatches(progress.pending, p.tools.registry)) {
        if (p.cancelled()) throw new LoopStop({ status: "cancelled" });
        await runBatch(p, batch);
      }
      continue;
    }
    // Steering and follow-ups: messages queued while the run worked join before the next step.
    if (p.store.takeSteers() > 0) progress = { next: "model" };
    if (progress.next === "done") {
      p.state.output_text = progress.assistant.text;
      p.state.finish_reason = progress.assistant.finish_reason ?? "stop";
      return { status: "completed" };
    }
    const { limit, source } = p.maxToolIterations;
    if (p.state.tool_iterations >= limit)
      throw new LoopStop({
        status: "failed",
        error: {
          code: "max_tool_iterations",
          message: `The run stopped after ${limit} tool iterations (${source}) without a final answer`,
        },
      });
    if (p.maxRunTokens) {
      const spent = runTokens(p.state.usage, p.state.delegated_usage);
      if (spent >= p.maxRunTokens.limit)
        throw new LoopStop({
          status: "failed",
          error: {
            code: "run_token_budget",
            message: `The run stopped after spending ${spent} tokens, its own and its delegated children's, of ${p.maxRunTokens.limit} (${p.maxRunTokens.source}) without a final answer`,
          },
        });
    }
    await modelStep(p);
  }
}

async function modelStep(p: LoopPorts): Promise<void> {
  const { runId, store, frames } = p;
  const turnIndex = p.state.steps ?? 0;
  const history = await store.history();
  const parentId = store.leaf();
  const messages = toModelMessages(await p.hooks.context(history));
  let eventId: string | null = null;
  const startedAt = p.clock.now();
  frames.emit({ type: "turn_start", run_id: runId, turn_index: turnIndex });
  let output: StepOutput;
  try {
    output = await p.model.step({
      messages,
      tools: p.tools.registry,
      signal: p.signal,
      callbacks: {
        onStart: (info) => {
          eventId = newId("evt");
          frames.emit({
            type: "message_start",
            run_id: runId,
            event_id: eventId,
            parent_id: parentId,
            role: "assistant",
            model: info.model,
          });
        },
        onTextDelta: (delta) => eventId && frames.emit({ type: "text_delta", run_id: runId, event_id: eventId, delta }),
        onReasoningDelta: (delta) =>
          eventId && frames.emit({ type: "thinking_delta", run_id: runId, event_id: eventId, delta, block_index: 0 }),
        onToolCallDelta: (d) =>
          eventId &&
          frames.emit({
            type: "tool_call_delta",
            run_id: runId,
            event_id: eventId,
            tool_call_id: d.tool_call_id,
            delta: d.delta,
            ...(d.tool_name ? { tool_name: d.tool_name } : {}),
          }),
        onAbandon: () => {
          if (eventId) frames.emit({ type: "message_cancelled", run_id: runId, event_id: eventId, reason: "error" });
          eventId = null;
        },
      },
    });
  } catch (err) {
    if (eventId)
      frames.emit({ type: "message_cancelled", run_id: runId, event_id: eventId, reason: p.cancelled() ? "user_cancel" : "error" });
    if (!p.cancelled())
      frames.emit({ type: "turn_error", run_id: runId, turn_index: turnIndex, error: err instanceof Error ? err.message : String(err) });
    throw err;
  }
  const message: AssistantMessage = {
    role: "assistant",
    text: output.text,
    tool_calls: output.tool_calls,
    provider: output.provider,
    model: output.model,
    usage: output.usage,
    finish_reason: output.finish_reason,
    ...(output.reasoning !== undefined ? { reasoning: output.reasoning } : {}),
  };
  const state = p.state;
  state.usage = addUsage(state.usage, output.usage);
  state.provider = output.provider;
  state.model = output.model;
  state.output_text = output.text;
  state.finish_reason = output.finish_reason;
  if (output.tool_calls.length > 0) state.tool_iterations++;
  state.steps = turnIndex + 1;
  store.saveAssistant(eventId ?? newId("evt"), parentId, message);
  frames.emit({ type: "turn_end", run_id: runId, turn_index: turnIndex, usage: output.usage, stop_reason: output.finish_reason });
  frames.emit({ type: "turn_finish", run_id: runId, turn_index: turnIndex, duration_ms: p.clock.now() - startedAt });
}

/** At most this many read-only calls of one step run at once (docs/agent-loop.md, "Parallel tool calls"). */
export const MAX_PARALLEL_TOOLS = 8;

/**
 * A step's pending calls, in call order, cut into batches: consecutive calls to tools that declare
 * themselves `readOnly` share a batch (at most MAX_PARALLEL_TOOLS), any other call is a batch of its
 * own — so a write never runs beside anything, and never before a read the model asked for first.
 */
export function toolBatches(calls: readonly ToolCall[], registry: Pick<ToolRegistry, "get">): ToolCall[][] {
  const batches: ToolCall[][] = [];
  let reads: ToolCall[] = [];
  for (const call of calls) {
    if (registry.get(call.name)?.readOnly === true) {
      reads.push(call);
      if (reads.length === MAX_PARALLEL_TOOLS) batches.push(flush());
      continue;
    }
    if (reads.length > 0) batches.push(flush());
    batches.push([call]);
  }
  if (reads.length > 0) batches.push(flush());
  return batches;

  function flush(): ToolCall[] {
    const out = reads;
    reads = [];
    return out;
  }
}

/** A call that passed its gate and is about to run. */
interface Started {
  call: ToolCall;
  hooked: ToolCall;
  eventId: string;
  execution: Promise<ExecutedToolCall>;
}

/**
 * Runs one batch: each call's gate (and approval) in call order, then the executions together, then
 * the results — after-hooks, persistence and `tool_execution_end` — in call order, so the log reads
 * as if the calls had run one after another. Each call is marked started before it runs (exactly
 * once: a resumed run repeats only idempotent or read-only calls).
 */
async function runBatch(p: LoopPorts, batch: readonly ToolCall[]): Promise<void> {
  const { runId, store, frames } = p;
  const admitted: { call: ToolCall; hooked: ToolCall; eventId: string; earlier: string | undefined }[] = [];
  for (const call of batch) {
    if (p.cancelled()) break;
    const earlier = store.toolStarted(call.id);
    const eventId = earlier ?? newId("evt");
    const spec = p.tools.registry.get(call.name);
    if (earlier !== undefined && !spec?.idempotent && !spec?.readOnly) {
      // Started before a restart, no result: it may or may not have had its effect. Say so.
      const result = fail(
        "interrupted",
        `Tool '${call.name}' was interrupted before it finished (the session restarted) and was not run again because it is not idempotent. Check its effect before retrying.`,
      );
      store.saveToolResult(eventId, call, result.content, true);
      continue;
    }
    const gate = await p.hooks.gate(call, spec !== undefined);
    if (!gate.run) {
      store.saveToolResult(eventId, call, gate.result.content, true);
      continue;
    }
    admitted.push({ call, hooked: { ...call, args: gate.args }, eventId, earlier });
  }
  // After the gates: an approval's events, when there were any, come before the results. Each
  // result is written under the one before it, so its live start names that as its parent.
  let parentId = store.leaf()!;
  const started: Started[] = admitted.map(({ call, hooked, eventId, earlier }) => {
    if (earlier === undefined) store.markToolStarted(call.id, eventId, p.clock.now());
    frames.emit({
      type: "tool_execution_start",
      run_id: runId,
      event_id: eventId,
      parent_id: parentId,
      tool_call_id: call.id,
      tool_name: call.name,
      args: hooked.args,
    });
    parentId = eventId;
    const execution = p.tools.execute(hooked, {
      signal: p.signal,
      emitUpdate: (partial) =>
        frames.emit({ type: "tool_execution_update", run_id: runId, event_id: eventId, tool_call_id: call.id, partial }),
    });
    return { call, hooked, eventId, execution };
  });
  for (const { call, hooked, eventId, execution } of started) {
    const executed = await execution;
    const after = await p.hooks.afterToolCall(hooked, executed);
    // Tokens a tool spent in other sessions (delegation) count toward this run, persisted with its result.
    if (executed.usage) p.state.delegated_usage = addUsage(p.state.delegated_usage ?? ZERO_USAGE, executed.usage);
    store.saveToolResult(eventId, call, after.content, !after.ok);
    frames.emit({
      type: "tool_execution_end",
      run_id: runId,
      event_id: eventId,
      tool_call_id: call.id,
      tool_name: call.name,
      duration_ms: executed.duration_ms,
      is_error: !after.ok,
    });
  }
}
