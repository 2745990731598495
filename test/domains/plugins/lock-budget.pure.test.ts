/**
 * The write's lock budget (src/domains/governance/lock-budget.ts, issue 25 item 7): one deadline from
 * the request's start, spent by every step before the op, so the bound holds from the caller's side.
 */
import { describe, expect, it } from "vitest";
import { busyDetails, lockBudget, remainingMs, stepTimerMs } from "../../../src/domains/governance/lock-budget.ts";

describe("lock budget", () => {
  const b = lockBudget(10_000, 1_000);

  it("ends the bound after the request's start", () => {
    expect(b).toEqual({ startedAt: 1_000, waitMs: 10_000, deadline: 11_000 });
  });

  it("leaves later steps only what earlier ones did not spend", () => {
    expect(remainingMs(b, 1_000)).toBe(10_000);
    // The epoch RPC took 6 s behind a busy object: the lock gets the 4 s left, not a fresh 10 s.
    expect(remainingMs(b, 7_000)).toBe(4_000);
    expect(stepTimerMs(b, 7_000)).toBe(4_000);
    expect(stepTimerMs(b, 7_000, 500)).toBe(4_500);
  });

  it("starts no step once the budget is spent, grace or not", () => {
    expect(remainingMs(b, 11_000)).toBe(0);
    expect(remainingMs(b, 30_000)).toBe(0);
    expect(stepTimerMs(b, 11_000, 500)).toBe(0);
    expect(stepTimerMs(b, 26_000, 500)).toBe(0);
  });

  it("reports the bound, the measured wait and where it gave up", () => {
    expect(busyDetails(b, 11_020, "epoch")).toEqual({ waited_ms: 10_000, elapsed_ms: 10_020, stage: "epoch" });
    expect(busyDetails(b, 500, "lock")).toEqual({ waited_ms: 10_000, elapsed_ms: 0, stage: "lock" });
  });
});
