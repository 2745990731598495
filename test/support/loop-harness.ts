/**
 * Drives the agent loop (src/runtime/agent/agent-loop.ts) without workerd: an in-memory store over the
 * real session tree, run-progress and context builder; the real model step fed by a fake stream
 * (the `ai` SDK's mock model, one scripted response per step); the real tool executor. Pure, so the
 * loop's tests run in milliseconds (test/runtime/agent/agent-loop.pure.test.ts).
 */
import { simulateReadableStream } from "ai";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { runAgentLoop, type LoopPorts, type LoopState, type ToolGate } from "../../src/runtime/agent/agent-loop.ts";
import { runModelStep } from "../../src/runtime/agent/model-step.ts";
import type { ResolvedModels } from "../../src/runtime/agent/providers.ts";
import type { Message, PersistentEvent, ToolCall, UserMessage } from "../../src/runtime/session/events.ts";
import type { TransientInput } from "../../src/runtime/session/session-log.ts";
import { runProgress } from "../../src/runtime/session/run-progress.ts";
import { buildContext } from "../../src/runtime/session/build-context.ts";
import { SessionTree, activeLeafAfter } from "../../src/runtime/session/tree.ts";
import { ToolRegistry } from "../../src/runtime/tools/registry.ts";
import { executeToolCall } from "../../src/runtime/tools/executor.ts";
import type { ToolContext, ToolResult, ToolSpec } from "../../src/runtime/tools/spec.ts";
import type { Env } from "../../src/storage/env.ts";
import { finish } from "./mock-models.ts";

/** A model answering step n with `steps[n]` (a finish part appended unless present); records each prompt. */
export function scriptedModel(steps: LanguageModelV4StreamPart[][]): MockLanguageModelV4 & { prompts: LanguageModelV4Prompt[] } {
  const prompts: LanguageModelV4Prompt[] = [];
  const model = new MockLanguageModelV4({
    modelId: "scripted",
    doStream: async (options) => {
      const parts = steps[prompts.length] ?? steps[steps.length - 1]!;
      prompts.push(options.prompt);
      const chunks = parts.some((p) => p.type === "finish" || p.type === "error")
        ? parts
        : [...parts, finish(hasCall(parts) ? "tool-calls" : "stop")];
      return { stream: simulateReadableStream({ chunks, chunkDelayInMs: null, initialDelayInMs: null }) };
    },
  });
  return Object.assign(model, { prompts });
}

const hasCall = (parts: LanguageModelV4StreamPart[]) => parts.some((p) => p.type === "tool-call");

export interface LoopHarnessOptions {
  models: ResolvedModels;
  tools?: ToolSpec<unknown>[];
  maxToolIterations?: number;
  /** The `beforeToolCall` chain and approvals; default: every call runs as asked. */
  gate?(call: ToolCall): ToolGate | Promise<ToolGate>;
  /** Events already in the log after the run's user message (a resumed run). */
  prior?: (runId: string) => Message[];
  /** Calls marked started before the "restart" (call id → event id). */
  started?: Record<string, string>;
}

export function loopHarness(opts: LoopHarnessOptions) {
  const runId = "run_1";
  const tree = new SessionTree();
  const frames: TransientInput[] = [];
  const steers: UserMessage[] = [];
  const started = new Map<string, string>(Object.entries(opts.started ?? {}));
  const abort = new AbortController();
  let leaf: string | null = null;
  let seq = 0;
  let n = 0;
  const append = (message: Message, id = `evt_${++n}`, parentId: string | null = leaf): void => {
    const event = {
      type: "message",
      id,
      parent_id: parentId,
      seq: ++seq,
      session_id: "ses_1",
      client_id: "test",
      ts: seq,
      run_id: runId,
      message,
    } as PersistentEvent;
    tree.add(event);
    leaf = activeLeafAfter(leaf, event);
  };
  append({ role: "user", content: "please help" });
  for (const m of opts.prior?.(runId) ?? []) append(m);
  const registry = new ToolRegistry(opts.tools ?? []);
  const state: LoopState = {
    tool_iterations: 0,
    usage: { input_tokens: 0, output_tokens: 0, total_tokens: 0 },
    provider: null,
    model: null,
    output_text: "",
    finish_reason: "",
  };
  const ports: LoopPorts = {
    runId,
    state,
    store: {
      progress: () => runProgress(tree, leaf, runId),
      takeSteers: () => {
        const queued = steers.splice(0);
        for (const m of queued) append(m);
        return queued.length;
      },
      leaf: () => leaf,
      history: async () => buildContext(tree, leaf),
      saveAssistant: (eventId, parentId, message) => append(message, eventId, parentId),
      toolStarted: (callId) => started.get(callId),
      markToolStarted: (callId, eventId) => void started.set(callId, eventId),
      saveToolResult: (eventId, call, content, isError) => {
        append({ role: "tool_result", tool_call_id: call.id, tool_name: call.name, content, is_error: isError }, eventId);
        started.delete(call.id);
      },
    },
    model: {
      step: ({ messages, tools, signal, callbacks }) =>
        runModelStep({ models: opts.models, system: "SYSTEM", messages, tools, signal, callbacks }),
    },
    tools: {
      registry,
      execute: (call, io) =>
        executeToolCall(registry, call, {
          // Tools in these tests read no bindings.
          env: {} as Env,
          workspaceId: "ws_1",
          sessionId: "ses_1",
          runId,
          toolCallId: call.id,
          signal: io.signal,
          data: {},
          emitUpdate: io.emitUpdate,
        } satisfies ToolContext),
    },
    hooks: {
      context: async (built) => built,
      gate: async (call) => (opts.gate ? opts.gate(call) : { run: true, args: call.args }),
      afterToolCall: async (_call, result: ToolResult) => result,
    },
    frames: { emit: (f) => void frames.push(f) },
    clock: { now: () => 1_000 },
    signal: abort.signal,
    cancelled: () => abort.signal.aborted,
    maxToolIterations: { limit: opts.maxToolIterations ?? 8, source: "runtime.max_tool_iterations" },
  };
  return {
    ports,
    state,
    frames,
    /** Queues a steer or follow-up message, as the SessionDO does when one arrives mid-run. */
    steer: (content: string, source: "steer" | "followUp" = "steer") => void steers.push({ role: "user", content, meta: { source } }),
    cancel: () => abort.abort(new DOMException("Run cancelled", "AbortError")),
    /** The run's messages on the active path, oldest first. */
    messages: (): Message[] => buildContext(tree, leaf),
    /** The messages as logged on the active path (steers not yet merged into tool results), oldest first. */
    logged: (): Message[] =>
      tree
        .pathToRoot(leaf)
        .sort((a, b) => a.seq - b.seq)
        .flatMap((e) => (e.type === "message" ? [e.message] : [])),
    run: () => runAgentLoop(ports),
  };
}
