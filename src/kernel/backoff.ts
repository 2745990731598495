/**
 * The one retry delay of the code base (docs/layering.md, "Kernel"; issue 20 item 6): exponential
 * backoff with "equal jitter" (AWS Architecture Blog, "Exponential Backoff And Jitter"): attempt n
 * waits between half and all of min(max, base·2^(n-1)). The random half spreads retries of many
 * sessions, schedules or servers that failed together (one D1 blip, one MCP outage) so they do not
 * come back in lockstep; the fixed half keeps a failing dependency from being retried at once.
 * Pure: the random source is injectable for tests.
 */

export interface BackoffPolicy {
  /** The first retry's ceiling, in milliseconds. */
  baseMs: number;
  /** No delay exceeds this. */
  maxMs: number;
}

/** The delay before retry number `attempt` (1 for the first retry; below 1 counts as 1). */
export function backoffDelay(attempt: number, policy: BackoffPolicy, random: () => number = Math.random): number {
  const n = Math.max(1, Math.floor(attempt));
  // 2 ** 60 already dwarfs any max; capping the exponent keeps the product finite.
  const ceiling = Math.min(policy.maxMs, policy.baseMs * 2 ** Math.min(n - 1, 60));
  const half = ceiling / 2;
  return Math.round(half + half * Math.min(1, Math.max(0, random())));
}
