/**
 * The one log line per finished run (issue 25; README "Security", Observability): what an operator
 * searches Workers Logs for — the run's and session's ids with its workspace, how it ended, which
 * model ran it, the tokens it used, how long it took and how many tools it called. One line per run,
 * not per request, so it is written whatever `BEAVER_ACCESS_LOG` says. Pure: `runEndLine` builds the
 * fields from data; `logRunEnd` is the single call at a run's end (run-executor.ts `#end`).
 */
import { log } from "../../kernel/log.ts";
import type { RunResult } from "./contract.ts";

export interface RunEndFacts {
  result: RunResult;
  workspaceId: string;
  /** Who submitted the run (`api`, `schedule:<id>`, a toolchain task…). */
  clientId: string;
  startedAt: number;
  endedAt: number;
  /** Tool calls answered in the run (results in the log), not model steps. */
  toolCalls: number;
  /** Executions of the run: 1, plus one per resume after an interruption. */
  attempts: number;
}

export const RUN_END_MESSAGE = "run finished";

/** The line's fields (the message is `RUN_END_MESSAGE`); ids first, then outcome, model, usage and time. */
export function runEndLine(f: RunEndFacts): Record<string, string | number | null> {
  const { result } = f;
  return {
    run_id: result.run_id,
    session_id: result.session_id,
    workspace_id: f.workspaceId,
    client_id: f.clientId,
    status: result.status,
    finish_reason: result.finish_reason,
    error_code: result.error?.code ?? null,
    provider: result.provider,
    model: result.model,
    input_tokens: result.usage.input_tokens,
    output_tokens: result.usage.output_tokens,
    total_tokens: result.usage.total_tokens,
    cache_read_tokens: result.usage.cache_read_tokens ?? 0,
    duration_ms: Math.max(0, f.endedAt - f.startedAt),
    tool_calls: f.toolCalls,
    tool_steps: result.tool_iterations,
    attempts: f.attempts,
  };
}

/** Writes the run's line: `warn` for a failed run, `info` otherwise. */
export function logRunEnd(f: RunEndFacts): void {
  const fields = runEndLine(f);
  if (f.result.status === "failed") log.warn(RUN_END_MESSAGE, fields);
  else log.info(RUN_END_MESSAGE, fields);
}
