/**
 * Summing token usage (steps into a run, runs into a session; docs/agent-loop.md, "Usage"). The
 * optional detail counts stay absent unless one side has them, so a provider that reports no cache
 * or reasoning tokens keeps the plain three-field shape.
 */
import type { Usage } from "./events.ts";

const DETAILS = ["cache_read_tokens", "cache_write_tokens", "reasoning_tokens"] as const;

/** What a run has spent against `runtime.max_run_tokens`: its own tokens and its delegated children's (docs/delegation.md, "Usage"). */
export function runTokens(usage: Usage, delegated: Usage | undefined): number {
  return usage.total_tokens + (delegated?.total_tokens ?? 0);
}

export function addUsage(a: Usage, b: Usage): Usage {
  const sum: Usage = {
    input_tokens: a.input_tokens + b.input_tokens,
    output_tokens: a.output_tokens + b.output_tokens,
    total_tokens: a.total_tokens + b.total_tokens,
  };
  for (const key of DETAILS) {
    if (a[key] !== undefined || b[key] !== undefined) sum[key] = (a[key] ?? 0) + (b[key] ?? 0);
  }
  return sum;
}
