/**
 * One model step of the agent loop: stream a single response from the main model and, if it fails
 * before or while streaming, abandon it and ask the fallback: every step tries main first, then
 * fallback (docs/agent-loop.md, "A model step"). Tools are only declared, never executed here — the
 * loop runs them itself — and a call the model wrote as JSON text is turned into a structured call
 * (raw-tool-calls.ts).
 */
import type { Instructions, LanguageModelUsage, ModelMessage, SystemModelMessage } from "ai";
import type { ToolCall, Usage } from "../session/events.ts";
import type { ToolRegistry } from "../tools/registry.ts";
import { AppError } from "../../kernel/errors.ts";
import { upstreamSummary } from "../../kernel/upstream-text.ts";
import { redactSecrets, type ModelHandle, type ResolvedModels } from "./providers.ts";
import { extractRawToolCalls } from "./raw-tool-calls.ts";
import { RawCallDeltaGate } from "./raw-call-gate.ts";
import { aiSdk } from "./ai-sdk-loader.ts";

export interface StepCallbacks {
  /** An attempt begins (once for main, again for the fallback after `onAbandon`). */
  onStart(info: { provider: string; model: string; role: "main" | "fallback" }): void;
  onTextDelta(delta: string): void;
  onReasoningDelta(delta: string): void;
  /** The first delta of a call carries `tool_name` (with an empty `delta`); later ones only the text. */
  onToolCallDelta(d: { tool_call_id: string; tool_name?: string; delta: string }): void;
  /** The main attempt failed and the fallback takes over: cancel whatever it streamed so far. */
  onAbandon(info: { role: "main"; error: string }): void;
}

export interface StepOutput {
  text: string;
  reasoning?: string;
  tool_calls: ToolCall[];
  finish_reason: string;
  usage: Usage;
  provider: string;
  model: string;
  answered_by: "main" | "fallback";
}

export interface AttemptFailure {
  role: "main" | "fallback";
  provider: string;
  model: string;
  error: string;
}

/** Every attempt failed. The message names provider/model per attempt and never carries secrets. */
export class ProviderError extends AppError {
  declare readonly code: "provider_error";
  readonly attempts: AttemptFailure[];

  constructor(attempts: AttemptFailure[]) {
    const summary = attempts.map((a) => `${a.role} ${a.provider}/${a.model}: ${a.error}`).join("; ");
    super("provider_error", `Model call failed (${summary})`, { details: { attempts } });
    this.name = "ProviderError";
    this.attempts = attempts;
  }
}

export interface ModelStepArgs {
  models: ResolvedModels;
  system: string;
  messages: ModelMessage[];
  tools: ToolRegistry;
  signal: AbortSignal;
  maxOutputTokens?: number;
  /** Retries of a failed request per attempt; default 0 with a fallback (it is the retry), else 1. */
  maxRetries?: number;
  /** An attempt that sends nothing for this long fails (and the fallback is asked). Default 90 s. */
  idleTimeoutMs?: number;
  /** Prompt caching (docs/agent-loop.md, "Cacheable prefix"); without it no cache hints are sent. */
  cache?: PromptCache;
  callbacks: StepCallbacks;
}

type ProviderOptions = NonNullable<SystemModelMessage["providerOptions"]>;

export interface PromptCache {
  /** Characters of `system` that are the stable prefix (the same for every run of the session). */
  stableChars: number;
  /** Groups requests that share a prefix: the session id. */
  key: string;
}

export const DEFAULT_IDLE_TIMEOUT_MS = 90_000;

export async function runModelStep(args: ModelStepArgs): Promise<StepOutput> {
  const { models, signal, callbacks } = args;
  const attempts: { handle: ModelHandle; role: "main" | "fallback" }[] = [{ handle: models.main, role: "main" }];
  if (models.fallback) attempts.push({ handle: models.fallback, role: "fallback" });
  const maxRetries = args.maxRetries ?? (models.fallback ? 0 : 1);

  const failures: AttemptFailure[] = [];
  for (const [index, { handle, role }] of attempts.entries()) {
    throwIfAborted(signal);
    try {
      return await streamAttempt(args, handle, role, maxRetries);
    } catch (err) {
      if (signal.aborted) throw abortError(signal);
      const error = await describeError(handle, err);
      failures.push({ role, provider: handle.provider, model: handle.modelId, error });
      if (role === "main" && index < attempts.length - 1) callbacks.onAbandon({ role: "main", error });
    }
  }
  throw new ProviderError(failures);
}

/** True for the error `runModelStep` throws when its signal is aborted. */
export function isAbortError(err: unknown): boolean {
  return err instanceof Error && err.name === "AbortError";
}

class StepStreamError extends Error {
  constructor(readonly causeError: unknown) {
    super("model stream reported an error");
  }
}

/**
 * Fails an attempt that has been silent for `ms`; `touch()` on every stream part. A touch only notes
 * the time: one timer runs per attempt and, when it fires early, re-arms for what is left. Re-arming
 * a timer on every part (a 1.2 KB tool argument streams as ~150 parts) cost more than the parts
 * themselves (docs/workspace.md, "Benchmarks").
 */
class IdleTimer {
  readonly controller = new AbortController();
  fired = false;
  private timer: ReturnType<typeof setTimeout> | undefined;
  private last = Date.now();

  constructor(private readonly ms: number) {
    this.arm(ms);
  }

  touch(): void {
    this.last = Date.now();
  }

  private arm(delay: number): void {
    this.timer = setTimeout(() => {
      const silent = Date.now() - this.last;
      if (silent < this.ms) return this.arm(this.ms - silent);
      this.fired = true;
      this.controller.abort(new Error(`no response from the model for ${Math.round(this.ms / 1000)} s`));
    }, delay);
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}

async function streamAttempt(args: ModelStepArgs, handle: ModelHandle, role: "main" | "fallback", maxRetries: number): Promise<StepOutput> {
  const idle = new IdleTimer(args.idleTimeoutMs ?? DEFAULT_IDLE_TIMEOUT_MS);
  try {
    return await streamAttemptWithin(args, handle, role, maxRetries, idle);
  } catch (err) {
    if (idle.fired && !args.signal.aborted) throw new StepStreamError(idle.controller.signal.reason);
    throw err;
  } finally {
    idle.stop();
  }
}

async function streamAttemptWithin(
  args: ModelStepArgs,
  handle: ModelHandle,
  role: "main" | "fallback",
  maxRetries: number,
  idle: IdleTimer,
): Promise<StepOutput> {
  const { callbacks, signal } = args;
  callbacks.onStart({ provider: handle.provider, model: handle.modelId, role });
  // The `ai` SDK loads on a run's first model step, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { streamText } = await aiSdk();
  const tools = await args.tools.toAiTools();
  const gate = new RawCallDeltaGate();
  const providerOptions = cacheProviderOptions(handle, args.cache);
  const result = streamText({
    model: handle.model,
    instructions: modelInstructions(handle, args.system, args.cache),
    ...(providerOptions ? { providerOptions } : {}),
    messages: args.messages,
    tools: Object.keys(tools).length > 0 ? tools : undefined,
    maxOutputTokens: args.maxOutputTokens ?? handle.maxTokens,
    maxRetries,
    abortSignal: AbortSignal.any([signal, idle.controller.signal]),
    // Errors arrive as stream parts and are handled below; the default handler would log them.
    onError: () => {},
  });

  let text = "";
  let reasoning = "";
  const toolCalls: ToolCall[] = [];
  let finishReason = "other";
  let usage: Usage = { input_tokens: 0, output_tokens: 0, total_tokens: 0 };
  for await (const part of result.stream) {
    idle.touch();
    switch (part.type) {
      case "text-delta": {
        text += part.text;
        const visible = gate.push(part.text);
        if (visible) callbacks.onTextDelta(visible);
        break;
      }
      case "reasoning-delta":
        reasoning += part.text;
        callbacks.onReasoningDelta(part.text);
        break;
      case "tool-input-start":
        if (!part.providerExecuted) callbacks.onToolCallDelta({ tool_call_id: part.id, tool_name: part.toolName, delta: "" });
        break;
      case "tool-input-delta":
        callbacks.onToolCallDelta({ tool_call_id: part.id, delta: part.delta });
        break;
      case "tool-call":
        // Calls the SDK marks invalid (unknown tool, unparsable input) still go to our executor,
        // whose error result tells the model what to fix.
        if (!part.providerExecuted) toolCalls.push({ id: part.toolCallId, name: part.toolName, args: part.input });
        break;
      case "finish-step":
        finishReason = part.finishReason;
        usage = toUsage(part.usage);
        break;
      case "error":
        throw new StepStreamError(part.error);
      case "abort":
        if (idle.fired) throw new StepStreamError(idle.controller.signal.reason);
        throw abortError(signal);
      default:
        break;
    }
  }
  throwIfAborted(signal);

  const output: StepOutput = {
    text,
    tool_calls: toolCalls,
    finish_reason: finishReason,
    usage,
    provider: handle.provider,
    model: handle.modelId,
    answered_by: role,
  };
  if (reasoning) output.reasoning = reasoning;
  const converted = withRawToolCalls(output, args.tools);
  // Held-back text that was not a call after all is shown now; a converted call is never shown.
  const held = gate.flush();
  if (held && converted === output) callbacks.onTextDelta(held);
  return converted;
}

/** A step without structured calls whose whole text is a call (or tagged calls) becomes that call. */
function withRawToolCalls(output: StepOutput, tools: ToolRegistry): StepOutput {
  if (output.tool_calls.length > 0 || output.text.trim() === "") return output;
  const extracted = extractRawToolCalls(output.text, tools.names(), crypto.randomUUID());
  if (!extracted) return output;
  return { ...output, text: extracted.remaining_text, tool_calls: extracted.tool_calls, finish_reason: "tool-calls" };
}

/**
 * The system prompt as the SDK takes it. For Anthropic the stable prefix is its own system block
 * carrying a cache breakpoint (which also covers the tool declarations before it), and the volatile
 * rest follows uncached; other providers get one string, since some chat templates reject more
 * than one system message.
 */
export function modelInstructions(handle: Pick<ModelHandle, "provider">, system: string, cache: PromptCache | undefined): Instructions {
  if (!cache || handle.provider !== "anthropic" || cache.stableChars <= 0) return system;
  const stable = system.slice(0, cache.stableChars).trimEnd();
  const rest = system.slice(cache.stableChars).trimStart();
  const cached = {
    role: "system" as const,
    content: stable,
    providerOptions: { anthropic: { cacheControl: { type: "ephemeral" as const } } },
  };
  return rest ? [cached, { role: "system" as const, content: rest }] : [cached];
}

/**
 * Call-level cache hints: OpenAI's responses API routes requests with the same `promptCacheKey` to
 * the same cache. openai-compatible servers get nothing: the SDK would pass an unknown body field
 * through, and a strict server rejects the whole request for it.
 */
export function cacheProviderOptions(handle: Pick<ModelHandle, "provider">, cache: PromptCache | undefined): ProviderOptions | undefined {
  if (!cache) return undefined;
  if (handle.provider === "openai") return { openai: { promptCacheKey: cache.key } };
  return undefined;
}

/** The SDK's step usage as stored: detail counts only when the provider reported a non-zero one. */
export function toUsage(u: Pick<LanguageModelUsage, "inputTokens" | "outputTokens" | "totalTokens"> & Partial<LanguageModelUsage>): Usage {
  const input = u.inputTokens ?? 0;
  const output = u.outputTokens ?? 0;
  const usage: Usage = { input_tokens: input, output_tokens: output, total_tokens: u.totalTokens ?? input + output };
  const cacheRead = u.inputTokenDetails?.cacheReadTokens;
  const cacheWrite = u.inputTokenDetails?.cacheWriteTokens;
  const reasoning = u.outputTokenDetails?.reasoningTokens;
  if (cacheRead) usage.cache_read_tokens = cacheRead;
  if (cacheWrite) usage.cache_write_tokens = cacheWrite;
  if (reasoning) usage.reasoning_tokens = reasoning;
  return usage;
}

/**
 * A short, secret-free description of why an attempt failed: the HTTP status and at most a short
 * printable summary of what the server said (kernel/upstream-text.ts), never its whole body.
 */
async function describeError(handle: ModelHandle, err: unknown): Promise<string> {
  const { APICallError, RetryError } = await aiSdk();
  let cause = err instanceof StepStreamError ? err.causeError : err;
  if (RetryError.isInstance(cause)) cause = cause.lastError;
  let status: number | undefined;
  let text: string;
  if (APICallError.isInstance(cause)) {
    status = cause.statusCode;
    text = cause.message;
  } else if (cause instanceof Error) {
    text = cause.message || cause.name;
  } else {
    text = String(cause);
  }
  // Redact before cutting, so a cut never leaves part of a key behind.
  return upstreamSummary(status, redactSecrets(handle, text)) || "unknown error";
}

function throwIfAborted(signal: AbortSignal): void {
  if (signal.aborted) throw abortError(signal);
}

function abortError(signal: AbortSignal): Error {
  const reason: unknown = signal.reason;
  if (reason instanceof Error && reason.name === "AbortError") return reason;
  return new DOMException("The model step was aborted", "AbortError");
}
