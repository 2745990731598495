/**
 * One explicit write's budget for the workspace lock, taken once when the request starts (issue 25
 * item 7; docs/skills-and-plugins.md, "The workspace write lock"). Everything the write waits for
 * before its op runs — the GC epoch (an RPC to the same busy object), the skill quota count, storing
 * the tree, the lock itself — spends the same budget, so the caller hears `busy` within
 * `BEAVER_LOCK_WAIT_MS` of its start rather than that bound after the last slow step. Pure: callers
 * pass the clock in.
 */

/** The steps of an explicit write that wait, in order; a `busy` answer names the one it gave up in. */
export type LockStage = "epoch" | "quota" | "store" | "lock";

export interface LockBudget {
  /** When the request started (epoch ms). */
  readonly startedAt: number;
  /** The bound (`BEAVER_LOCK_WAIT_MS`). */
  readonly waitMs: number;
  /** `startedAt + waitMs`: no op starts after it. */
  readonly deadline: number;
}

export function lockBudget(waitMs: number, now: number): LockBudget {
  return { startedAt: now, waitMs, deadline: now + waitMs };
}

/** What is left of the budget at `now`, never negative. */
export function remainingMs(budget: LockBudget, now: number): number {
  return Math.max(0, budget.deadline - now);
}

/**
 * How long the caller's own timer runs for a step started at `now`: what is left of the budget, plus
 * `graceMs` for a step whose own answer may still come in a little late (the lock call's RPC). A
 * spent budget gives 0 (with no grace): the step is not started at all.
 */
export function stepTimerMs(budget: LockBudget, now: number, graceMs = 0): number {
  const left = remainingMs(budget, now);
  return left === 0 ? 0 : left + graceMs;
}

/** The facts a `busy` answer carries: the bound, the wait measured by the code, and where it gave up. */
export function busyDetails(
  budget: LockBudget,
  now: number,
  stage: LockStage,
): { waited_ms: number; elapsed_ms: number; stage: LockStage } {
  return { waited_ms: budget.waitMs, elapsed_ms: Math.max(0, now - budget.startedAt), stage };
}
