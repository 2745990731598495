/**
 * Support for session tests: scripted mock models (the `ai` SDK's MockLanguageModelV4, one script
 * per model id, installed through test/support/test-services.ts), a workspace configured to use them,
 * test tools registered as tool sets, and readers for a session's own log and live stream.
 */
import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { z } from "zod";
import { setTestModelFactory, testServices } from "./test-services.ts";
import { builtinTools } from "../../src/runtime/tools/builtins/index.ts";
import { defineTool, ok, type ToolSpec } from "../../src/runtime/tools/spec.ts";
import type { MessageEvent, PersistentEvent, StreamFrame } from "../../src/runtime/session/events.ts";
import { SessionClient, sessionStub } from "../../src/runtime/session/client.ts";
import type { SessionObject as SessionDO } from "../../src/runtime/session/session-object.ts";
import { call, json, newWorkspace, type TestWorkspace } from "./api.ts";
import { randomToken } from "../../src/kernel/ids.ts";
import { readSseFrames } from "./sse.ts";

export const USAGE = {
  inputTokens: { total: 10, noCache: 10, cacheRead: undefined, cacheWrite: undefined },
  outputTokens: { total: 4, text: 4, reasoning: undefined },
};

export const finish = (reason: "stop" | "tool-calls" = "stop"): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified: reason, raw: reason },
  usage: USAGE,
});

export function text(...deltas: string[]): LanguageModelV4StreamPart[] {
  return [
    { type: "text-start", id: "t" },
    ...deltas.map((delta): LanguageModelV4StreamPart => ({ type: "text-delta", id: "t", delta })),
    { type: "text-end", id: "t" },
    finish(),
  ];
}

export function toolCalls(...calls: { id: string; name: string; args: unknown }[]): LanguageModelV4StreamPart[] {
  const parts: LanguageModelV4StreamPart[] = [];
  for (const c of calls) {
    const input = JSON.stringify(c.args);
    parts.push(
      { type: "tool-input-start", id: c.id, toolName: c.name },
      { type: "tool-input-delta", id: c.id, delta: input },
      { type: "tool-input-end", id: c.id },
    );
    parts.push({ type: "tool-call", toolCallId: c.id, toolName: c.name, input });
  }
  parts.push(finish("tool-calls"));
  return parts;
}

/**
 * `parts` with the finish's usage counting the prompt as a provider would (about four characters a
 * token), for tests whose behaviour depends on reported usage (the context size, compaction).
 */
export function promptSized(parts: LanguageModelV4StreamPart[], options: LanguageModelV4CallOptions): LanguageModelV4StreamPart[] {
  const input = Math.ceil(JSON.stringify(options.prompt).length / 4);
  const output = parts.reduce((n, p) => n + (p.type === "text-delta" ? Math.ceil(p.delta.length / 4) : 0), 0);
  return parts.map((p) =>
    p.type === "finish"
      ? {
          ...p,
          usage: {
            inputTokens: { total: input, noCache: input, cacheRead: undefined, cacheWrite: undefined },
            outputTokens: { total: output, text: output, reasoning: undefined },
          },
        }
      : p,
  );
}

/** One scripted response: parts to stream, optionally only after `gate` resolves (or never: `hang`). */
export type ScriptStep =
  | LanguageModelV4StreamPart[]
  | { parts?: LanguageModelV4StreamPart[]; before?: LanguageModelV4StreamPart[]; gate?: Promise<void>; hang?: boolean; fail?: number };

/** A non-streaming (`doGenerate`) answer of `text`, for auxiliary models and structured output in tests. */
export function generated(
  text: string,
  tokens: { input: number; output: number } = { input: 5, output: 5 },
): LanguageModelV4GenerateResult {
  return {
    content: [{ type: "text", text }],
    finishReason: { unified: "stop", raw: "stop" },
    usage: {
      inputTokens: { total: tokens.input, noCache: tokens.input, cacheRead: undefined, cacheWrite: undefined },
      outputTokens: { total: tokens.output, text: tokens.output, reasoning: undefined },
    },
    warnings: [],
  };
}

/** "Hello world" streamed in two halves: "Hello" at once, " world" and the finish only after `gate` (a run held mid-message). */
export function heldHelloWorld(gate: Promise<void>): ScriptStep {
  return {
    before: [
      { type: "text-start", id: "t" },
      { type: "text-delta", id: "t", delta: "Hel" },
      { type: "text-delta", id: "t", delta: "lo" },
    ],
    parts: [{ type: "text-delta", id: "t", delta: " world" }, { type: "text-end", id: "t" }, ...text().slice(-1)],
    gate,
  };
}

/** A model that answers its n-th call with the n-th step (the last step repeats). */
export class ScriptedModel {
  readonly calls: LanguageModelV4CallOptions[] = [];
  readonly model: MockLanguageModelV4;

  constructor(readonly steps: ScriptStep[] | ((callIndex: number, options: LanguageModelV4CallOptions) => ScriptStep)) {
    this.model = new MockLanguageModelV4({
      modelId: "scripted",
      doStream: async (options) => {
        const index = this.calls.length;
        this.calls.push(options);
        const step = typeof steps === "function" ? steps(index, options) : steps[Math.min(index, steps.length - 1)]!;
        return { stream: streamOf(step, options.abortSignal) };
      },
    });
  }

  /** The system prompt and message texts the model received on call `i`. */
  promptText(i: number): string {
    return JSON.stringify(this.calls[i]?.prompt ?? []);
  }
}

function streamOf(step: ScriptStep, signal: AbortSignal | undefined): ReadableStream<LanguageModelV4StreamPart> {
  const s = Array.isArray(step) ? { parts: step } : step;
  if (s.fail !== undefined) {
    const status = s.fail;
    throw Object.assign(new Error(`scripted HTTP ${status}`), { statusCode: status });
  }
  return new ReadableStream<LanguageModelV4StreamPart>({
    async start(controller) {
      const abort = new Promise<void>((_, reject) => {
        if (signal?.aborted) reject(new DOMException("aborted", "AbortError"));
        signal?.addEventListener("abort", () => reject(new DOMException("aborted", "AbortError")), { once: true });
      });
      abort.catch(() => undefined);
      controller.enqueue({ type: "stream-start", warnings: [] });
      for (const p of s.before ?? []) controller.enqueue(p);
      try {
        if (s.hang) await abort;
        if (s.gate) await Promise.race([s.gate, abort]);
      } catch (err) {
        controller.error(err);
        return;
      }
      for (const p of s.parts ?? []) controller.enqueue(p);
      controller.close();
    },
  });
}

const scripts = new Map<string, ScriptedModel>();
let installed = false;

function install(): void {
  if (installed) return;
  installed = true;
  setTestModelFactory((entry) => {
    const scripted = scripts.get(entry.id);
    if (!scripted) throw new Error(`no scripted model '${entry.id}'`);
    return scripted.model;
  });
}

/** Makes `scripted` answer for a model entry with the returned id (e.g. a run's model_override). */
export function registerModel(scripted: ScriptedModel, id = `model-${randomToken(8)}`): string {
  install();
  scripts.set(id, scripted);
  return id;
}

export interface ScriptedWorkspace extends TestWorkspace {
  main: ScriptedModel;
  fallback: ScriptedModel | null;
}

/** A new workspace whose main (and optional fallback) model are scripted; runtime settings optional. */
export async function scriptedWorkspace(
  main: ScriptedModel,
  opts: { fallback?: ScriptedModel; runtime?: Record<string, unknown> } = {},
): Promise<ScriptedWorkspace> {
  install();
  const ws = await newWorkspace();
  const mainId = `main-${randomToken(8)}`;
  scripts.set(mainId, main);
  const config: Record<string, unknown> = { model: { provider: "openai-compatible", id: mainId, base_url: "http://scripted.test/v1" } };
  if (opts.fallback) {
    const fbId = `fallback-${randomToken(8)}`;
    scripts.set(fbId, opts.fallback);
    config.fallback_model = { provider: "openai-compatible", id: fbId, base_url: "http://fallback.test/v1" };
  }
  if (opts.runtime) config.runtime = opts.runtime;
  const res = await call("PUT", "/api/config", { token: ws.admin, body: config });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
  return { ...ws, main, fallback: opts.fallback ?? null };
}

/** Registers a tool set `name` = builtins + `tools` (runs ask for it with `toolset`). */
export function registerToolset(name: string, tools: ToolSpec<unknown>[]): string {
  testServices.toolsets.set(name, () => [...builtinTools(), ...tools]);
  return name;
}

/** A tool that counts its executions and can be made to wait on a gate. */
export function countingTool(name: string, opts: { idempotent?: boolean } = {}) {
  const state = { runs: 0, gate: null as Promise<void> | null, seenData: [] as unknown[] };
  const spec = defineTool({
    name,
    description: `test tool ${name}`,
    input: z.strictObject({ n: z.number().optional() }),
    idempotent: opts.idempotent ?? false,
    async execute(args, ctx) {
      state.runs++;
      state.seenData.push(ctx.data);
      if (state.gate) await state.gate;
      return ok(`${name} ran (${args.n ?? 0})`);
    },
  });
  return { spec, state };
}

export function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve!: () => void;
  const promise = new Promise<void>((r) => (resolve = r));
  return { promise, resolve };
}

export const stub = (sessionId: string): DurableObjectStub<SessionDO> => sessionStub(env, sessionId);

/** Every event in the DO's own log (hidden included), in seq order. */
export async function doEvents(sessionId: string, workspaceId: string): Promise<PersistentEvent[]> {
  return SessionClient.of(env, sessionId).events(workspaceId, 0, 100_000, true);
}

export async function until(check: () => Promise<boolean> | boolean, timeoutMs = 5_000, what = "condition"): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** Reads an SSE body into frames until it ends (or `stopWhen` says so). */
export function readSse(res: Response, stopWhen?: (frame: StreamFrame) => boolean): Promise<StreamFrame[]> {
  return readSseFrames<StreamFrame>(res, stopWhen);
}

/** Creates a session through the API and returns its id. */
export async function newSession(ws: TestWorkspace, body: Record<string, unknown> = {}): Promise<string> {
  const res = await call("POST", "/api/sessions", { token: ws.member, body });
  if (res.status !== 201) throw new Error(`session: ${res.status} ${await res.text()}`);
  return (await json<{ id: string }>(res)).id;
}

export { runInDurableObject };

/**
 * Waits until D1 holds everything the session's Durable Object has logged. Replication trails a run's
 * answer (docs/sessions.md, "Storage first, D1 second"): a test that reads D1 directly after a run
 * (sessions, session_events, session_runs, search, receipts) calls this first. API readers of their own
 * session's copy (`…/events`, `…/runs/:id/events`, receipts) already flush it themselves.
 */
export async function replicated(sessionId: string): Promise<void> {
  if (!(await SessionClient.of(env, sessionId).flushReplication())) throw new Error(`D1 replication of ${sessionId} failed`);
}

/** The tool results among a session's events, in log order. */
export const toolResults = (events: PersistentEvent[]) =>
  events
    .filter((e): e is MessageEvent => e.type === "message" && e.message.role === "tool_result")
    .map((e) => e.message as Extract<MessageEvent["message"], { role: "tool_result" }>);
