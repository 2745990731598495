/**
 * Structured logs: one JSON object per line, so Workers Logs (wrangler.toml `[observability]`) can
 * filter by field. Whatever is known about the work in progress — request id, workspace, session,
 * run — is kept in an AsyncLocalStorage context and added to every line logged inside it, so deep
 * code needs no ids passed down just to log (docs/layering.md, "Observability").
 */
import { AsyncLocalStorage } from "node:async_hooks";

export interface LogContext {
  request_id?: string;
  workspace_id?: string;
  session_id?: string;
  run_id?: string;
  task_id?: string;
  job?: string;
}

type Level = "debug" | "info" | "warn" | "error";

const context = new AsyncLocalStorage<LogContext>();

/** Runs `fn` with `fields` added to the context of every line it logs (nested contexts merge). */
export function withLogContext<T>(fields: LogContext, fn: () => T): T {
  return context.run({ ...context.getStore(), ...fields }, fn);
}

/** Adds fields to the current context (for ids learned midway, such as the workspace after auth). */
export function addLogContext(fields: LogContext): void {
  const store = context.getStore();
  if (store) Object.assign(store, fields);
}

/** An error as plain fields: message, stack and cause (never the object, which may not serialise). */
export function errorFields(err: unknown): { error: string; stack?: string; cause?: string } {
  if (!(err instanceof Error)) return { error: String(err) };
  return {
    error: `${err.name}: ${err.message}`,
    ...(err.stack ? { stack: err.stack } : {}),
    ...(err.cause !== undefined ? { cause: String(err.cause) } : {}),
  };
}

function write(level: Level, msg: string, fields: Record<string, unknown>): void {
  const line = JSON.stringify({ level, msg, ts: new Date().toISOString(), ...context.getStore(), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

export const log = {
  debug: (msg: string, fields: Record<string, unknown> = {}) => write("debug", msg, fields),
  info: (msg: string, fields: Record<string, unknown> = {}) => write("info", msg, fields),
  warn: (msg: string, fields: Record<string, unknown> = {}) => write("warn", msg, fields),
  error: (msg: string, fields: Record<string, unknown> = {}) => write("error", msg, fields),
};
