/**
 * Runs one tool call the model asked for and always answers with a `ToolResult` — unknown tools,
 * bad arguments, exceptions and cancellation all become error results the model can read and
 * recover from, so a misbehaving tool never takes the run down with it. Every result's text has
 * secret-shaped values redacted (kernel/prompt-guard.ts) before it is logged or enters a prompt, and
 * is cut to the tool's `maxResultChars` under the central `tool_result_chars` cap, with a note.
 */
import type { ToolCall } from "../session/events.ts";
import { zodIssues } from "../../kernel/errors.ts";
import { redactSecrets } from "../../kernel/prompt-guard.ts";
import { limitsOf } from "../../storage/limits.ts";
import type { ToolContext, ToolResult } from "./spec.ts";
import { fail } from "./spec.ts";
import type { ToolRegistry } from "./registry.ts";

/** A tool result plus how long the call took (for `tool_execution_end`). */
export type ExecutedToolCall = ToolResult & { duration_ms: number };

const MAX_ERROR_MESSAGE = 2_000;

/** Never throws: every failure is reported as an error result (`unknown_tool`, `invalid_arguments`, `tool_error`, `cancelled`). */
export async function executeToolCall(registry: ToolRegistry, call: ToolCall, ctx: ToolContext): Promise<ExecutedToolCall> {
  const started = Date.now();
  const result = await runCall(registry, call, ctx);
  const limit = resultLimit(registry.get(call.name)?.maxResultChars, limitsOf(ctx.env).tool_result_chars);
  const redacted: ToolResult = { ...result, content: cutResult(redactSecrets(result.content), limit) };
  if (result.error) redacted.error = { ...result.error, message: redactSecrets(result.error.message) };
  return { ...redacted, duration_ms: Date.now() - started };
}

async function runCall(registry: ToolRegistry, call: ToolCall, ctx: ToolContext): Promise<ToolResult> {
  const spec = registry.get(call.name);
  if (!spec) {
    const names = registry.names();
    const available = names.length > 0 ? names.join(", ") : "(none)";
    return fail("unknown_tool", `Unknown tool '${call.name}'. Available tools: ${available}`);
  }

  // Models often send null or nothing for tools whose arguments are all optional.
  const parsed = spec.input.safeParse(call.args ?? {});
  if (!parsed.success) {
    const issues = zodIssues(parsed.error).map((i) => `- ${i.path}: ${i.message}`);
    return fail("invalid_arguments", `Invalid arguments for tool '${call.name}':\n${issues.join("\n")}`);
  }

  if (ctx.signal.aborted) return cancelled(call.name);
  if (ctx.dryRun && spec.outward) return dryRunResult(call.name, parsed.data);
  try {
    return await raceAbort(spec.execute(parsed.data, ctx), ctx.signal, call.name);
  } catch (err) {
    if (ctx.signal.aborted) return cancelled(call.name);
    return fail("tool_error", `Tool '${call.name}' failed: ${describe(err)}`);
  }
}

/** The characters a tool's result may keep: its own `maxResultChars`, never above the central cap. */
export function resultLimit(own: number | undefined, cap: number): number {
  return own === undefined ? cap : Math.max(1, Math.min(own, cap));
}

/**
 * A result cut to `limit` characters (a surrogate pair never split) with a note to the model that it
 * was, how much is missing and what to do (hermes style); a result within the limit is unchanged.
 */
export function cutResult(content: string, limit: number): string {
  if (content.length <= limit) return content;
  let end = limit;
  const last = content.charCodeAt(end - 1);
  if (last >= 0xd800 && last <= 0xdbff) end--;
  const omitted = content.length - end;
  return (
    `${content.slice(0, end)}\n\n[The result was cut: ${omitted} of ${content.length} characters omitted (this tool's limit is ${limit}). ` +
    `Ask for a narrower part (a range, a filter, a smaller page) if you need the rest.]`
  );
}

/** Resolves with the tool's result, or with `cancelled` as soon as the run is aborted. */
function raceAbort(work: Promise<ToolResult>, signal: AbortSignal, name: string): Promise<ToolResult> {
  return new Promise<ToolResult>((resolve, reject) => {
    const onAbort = () => resolve(cancelled(name));
    signal.addEventListener("abort", onAbort, { once: true });
    work.then(
      (value) => {
        signal.removeEventListener("abort", onAbort);
        resolve(value);
      },
      (err: unknown) => {
        signal.removeEventListener("abort", onAbort);
        reject(err);
      },
    );
  });
}

/** Dry-run characters of the arguments quoted back to the model. */
const DRY_RUN_ARGS_CHARS = 1_000;

/**
 * What the model reads instead of an outward tool's result in a dry run: that nothing was done, and what
 * would have been. The call and this result stay in the session's log, which is the record.
 */
export function dryRunResult(name: string, args: unknown): ToolResult {
  const json = JSON.stringify(args) ?? "null";
  const shown = json.length > DRY_RUN_ARGS_CHARS ? `${json.slice(0, DRY_RUN_ARGS_CHARS)}…` : json;
  return {
    ok: true,
    content:
      `[dry run] Tool '${name}' was NOT executed: this is an isolated evaluation run without side effects. ` +
      `It would have been called with ${shown}. Continue as if it had succeeded, without relying on any result from it.`,
  };
}

const cancelled = (name: string): ToolResult => fail("cancelled", `Tool '${name}' was cancelled`);

function describe(err: unknown): string {
  const text = err instanceof Error ? err.message || err.name : String(err);
  return text.length > MAX_ERROR_MESSAGE ? `${text.slice(0, MAX_ERROR_MESSAGE)}…` : text;
}
