/**
 * Extensions: typed hooks around tool calls and the model's context, and event subscribers, registered
 * at the composition root (src/app/runtime.ts) through `RuntimeServices.extensions` (docs/extensions.md).
 * The runtime only defines where they attach; the app decides which exist.
 *
 * - Hooks (`beforeToolCall`, `afterToolCall`, `transformContext`, `convertToLlm`) are chained in
 *   registration order: each layer sees what the previous one produced.
 * - Subscribers (`onEvent`) are notified, never awaited: a throwing or slow subscriber is logged and
 *   never fails or stalls the run, nor the other subscribers.
 *
 * Pure except for logging: these functions take data and the extension list and return data.
 */
import type { WorkspaceConfig } from "../storage/config/schema.ts";
import type { Env } from "../storage/env.ts";
import type { Message, StreamFrame } from "./session/events.ts";
import type { ToolResult, ToolSpec } from "./tools/spec.ts";
import type { ActivatedSkill } from "./skills.ts";
import { errorFields, log } from "../kernel/log.ts";
import { conversationForModel } from "./agent/model-messages.ts";

/** Where a hook is called from: the run and the workspace configuration it runs with. */
export interface HookContext {
  env: Env;
  workspaceId: string;
  sessionId: string;
  /** The run; null when the context is built outside a run (`GET …/context` of an idle session). */
  runId: string | null;
  /** The run's workspace configuration (each extension reads its own section). */
  config: WorkspaceConfig;
  /** The run's tool data (for example `{ task_id }` for toolchain runs). */
  data: Readonly<Record<string, unknown>>;
}

export interface ToolCallInfo {
  toolCallId: string;
  name: string;
  args: unknown;
}

/**
 * What a `beforeToolCall` layer decides:
 * - `continue` (optionally with rewritten `args`): the next layer sees them; after the last, the tool runs;
 * - `block`: the tool does not run; the model gets a tool error carrying `reason`;
 * - `require_approval`: the run pauses until a person approves or denies (docs/approvals.md).
 * A layer that returns nothing continues unchanged.
 */
export type BeforeToolCallDecision =
  | { action: "continue"; args?: unknown }
  | { action: "block"; reason: string; code?: string }
  | { action: "require_approval"; reason?: string };

/** Where a slash command runs: the run it answers, what the run activated, and a way to record state. */
export interface CommandContext extends HookContext {
  runId: string;
  /** The text after `/name` (trimmed; "" when none). */
  args: string;
  /** The skills this run activated when it opened. */
  activatedSkills: readonly ActivatedSkill[];
  /** The names of every skill the run could use (the catalog). */
  catalog: readonly string[];
  /** Records the extension's own state as a `custom` event of the session (kind `<extension>:<kind>`). */
  record(kind: string, data: unknown): void;
}

/** `/name args` in a user message runs `run` instead of a model call; its text becomes a `custom_message`. */
export interface SlashCommand {
  name: string;
  description: string;
  run(ctx: CommandContext): Promise<{ text: string; data?: unknown }> | { text: string; data?: unknown };
}

export interface Extension {
  /** Names the extension in logs and in the workspace's `extensions` config. */
  name: string;
  /** Always on: `extensions.<name>.enabled: false` does not turn it off (the workspace tool policy). */
  required?: boolean;
  /** Tools this extension adds to every tool set. */
  tools?: readonly ToolSpec<unknown>[];
  /** Slash commands (`/name args` in a user message). */
  commands?: readonly SlashCommand[];
  beforeToolCall?(call: ToolCallInfo, ctx: HookContext): BeforeToolCallDecision | void | Promise<BeforeToolCallDecision | void>;
  /** May rewrite the result; returning nothing keeps it. */
  afterToolCall?(call: ToolCallInfo, result: ToolResult, ctx: HookContext): ToolResult | void | Promise<ToolResult | void>;
  /** The session's messages as built from the log (before the provider settles them). */
  transformContext?(messages: Message[], ctx: HookContext): Message[] | Promise<Message[]>;
  /** The conversation as the provider will receive it (after `conversationForModel`). */
  convertToLlm?(messages: Message[], ctx: HookContext): Message[] | Promise<Message[]>;
  /** Every stream frame of every session (persistent and transient); notified, never awaited. */
  onEvent?(frame: StreamFrame, ctx: { sessionId: string; workspaceId: string }): void | Promise<void>;
}

/** The extensions a workspace has on: every registered one unless its config says `enabled: false` (required ones always). */
export function enabledExtensions(extensions: readonly Extension[], config: Pick<WorkspaceConfig, "extensions">): Extension[] {
  return extensions.filter((e) => e.required === true || config.extensions?.[e.name]?.enabled !== false);
}

/** A slash command in a user message: `/name` then optional text. A path such as `/etc/hosts` is not one. */
export function parseSlashCommand(content: string): { name: string; args: string } | null {
  const match = /^\/([a-z][a-z0-9_-]{0,63})(?:\s+([^]*))?$/.exec(content.trim());
  return match ? { name: match[1]!, args: (match[2] ?? "").trim() } : null;
}

/** The command of that name among the enabled extensions, with its extension's name. */
export function findCommand(extensions: readonly Extension[], name: string): { extension: string; command: SlashCommand } | null {
  for (const ext of extensions) {
    const command = ext.commands?.find((c) => c.name === name);
    if (command) return { extension: ext.name, command };
  }
  return null;
}

const warned = new Set<string>();
/** Logs an extension's failure once per isolate and place, so a broken extension does not flood the log. */
export function warnOnce(extension: string, where: string, err: unknown): void {
  const key = `${extension}\n${where}`;
  if (warned.has(key)) return;
  warned.add(key);
  log.warn(`extension ${where} failed; it is skipped`, { extension, ...errorFields(err) });
}

/** The outcome of the whole `beforeToolCall` chain. */
export type BeforeToolCallOutcome =
  | { action: "continue"; args: unknown }
  | { action: "block"; reason: string; code: string; by: string }
  | { action: "require_approval"; args: unknown; reason: string; by: string };

/**
 * Runs every `beforeToolCall` in order. The first `block` or `require_approval` ends the chain. A layer
 * that throws blocks the call (fail closed): a guard that crashed must not let the call through.
 */
export async function runBeforeToolCall(
  extensions: readonly Extension[],
  call: ToolCallInfo,
  ctx: HookContext,
): Promise<BeforeToolCallOutcome> {
  let args = call.args;
  for (const ext of extensions) {
    if (!ext.beforeToolCall) continue;
    let decision: BeforeToolCallDecision | void;
    try {
      decision = await ext.beforeToolCall({ ...call, args }, ctx);
    } catch (err) {
      log.warn("extension beforeToolCall failed; the call is blocked", { extension: ext.name, tool: call.name, ...errorFields(err) });
      return { action: "block", code: "hook_failed", reason: `The '${ext.name}' check failed, so the call was not run`, by: ext.name };
    }
    if (!decision || decision.action === "continue") {
      if (decision && "args" in decision && decision.args !== undefined) args = decision.args;
      continue;
    }
    if (decision.action === "block") return { action: "block", reason: decision.reason, code: decision.code ?? "blocked", by: ext.name };
    return { action: "require_approval", args, reason: decision.reason ?? `'${ext.name}' requires approval`, by: ext.name };
  }
  return { action: "continue", args };
}

/** Runs every `afterToolCall` in order; a layer that throws is logged and skipped (the result stands as it was). */
export async function runAfterToolCall(
  extensions: readonly Extension[],
  call: ToolCallInfo,
  result: ToolResult,
  ctx: HookContext,
): Promise<ToolResult> {
  let current = result;
  for (const ext of extensions) {
    if (!ext.afterToolCall) continue;
    try {
      current = (await ext.afterToolCall(call, current, ctx)) ?? current;
    } catch (err) {
      log.warn("extension afterToolCall failed; its layer is skipped", { extension: ext.name, tool: call.name, ...errorFields(err) });
    }
  }
  return current;
}

/** Chains one message hook (`transformContext` or `convertToLlm`); a layer that throws is logged and skipped. */
export async function runMessageHook(
  extensions: readonly Extension[],
  hook: "transformContext" | "convertToLlm",
  messages: Message[],
  ctx: HookContext,
): Promise<Message[]> {
  let current = messages;
  for (const ext of extensions) {
    const fn = ext[hook];
    if (!fn) continue;
    try {
      current = await fn.call(ext, current, ctx);
    } catch (err) {
      log.warn(`extension ${hook} failed; its layer is skipped`, { extension: ext.name, ...errorFields(err) });
    }
  }
  return current;
}

/** True when some extension has this message hook (the loop skips the work otherwise). */
export function hasMessageHook(extensions: readonly Extension[], hook: "transformContext" | "convertToLlm"): boolean {
  return extensions.some((e) => e[hook] !== undefined);
}

/**
 * The model's context through the extensions: the messages built from the log go through
 * `transformContext`, are settled for the provider (`conversationForModel`), then go through
 * `convertToLlm`. Without any such hook the built messages are returned as they are. Used by the
 * loop and by `GET …/context`, so that view stays exactly what the model gets.
 */
export async function contextThroughHooks(extensions: readonly Extension[], built: Message[], ctx: HookContext): Promise<Message[]> {
  if (!hasMessageHook(extensions, "transformContext") && !hasMessageHook(extensions, "convertToLlm")) return built;
  const transformed = await runMessageHook(extensions, "transformContext", built, ctx);
  return runMessageHook(extensions, "convertToLlm", conversationForModel(transformed), ctx);
}

/**
 * Tells every subscriber about a frame, each on its own: a subscriber that throws (at once or later)
 * is logged; none is awaited, so a slow one never holds up the run or the others.
 */
export function notifySubscribers(
  extensions: readonly Extension[],
  frame: StreamFrame,
  ctx: { sessionId: string; workspaceId: string },
): void {
  for (const ext of extensions) {
    if (!ext.onEvent) continue;
    const onEvent = ext.onEvent.bind(ext);
    void Promise.resolve()
      .then(() => onEvent(frame, ctx))
      .catch((err: unknown) => log.warn("extension subscriber failed", { extension: ext.name, frame: frame.type, ...errorFields(err) }));
  }
}
