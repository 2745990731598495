// The one jittered backoff (src/kernel/backoff.ts; issue 20 item 6): bounds, doubling, the cap, and that
// the replication alarm uses it (schedules and MCP discovery do too: schedule-do.ts, mcp/discovery.ts).
import { describe, expect, it } from "vitest";
import { backoffDelay } from "../../src/kernel/backoff.ts";
import { backoffMs } from "../../src/runtime/session/replicator.ts";

const policy = { baseMs: 1_000, maxMs: 10_000 };

describe("backoffDelay", () => {
  it("waits between half and all of base·2^(n-1), capped at maxMs", () => {
    expect(backoffDelay(1, policy, () => 0)).toBe(500);
    expect(backoffDelay(1, policy, () => 1)).toBe(1_000);
    expect(backoffDelay(3, policy, () => 0)).toBe(2_000);
    expect(backoffDelay(3, policy, () => 1)).toBe(4_000);
    expect(backoffDelay(9, policy, () => 1)).toBe(10_000);
    expect(backoffDelay(9, policy, () => 0)).toBe(5_000);
    expect(backoffDelay(10_000, policy, () => 0.5)).toBe(7_500);
    // Below one counts as the first retry; a broken random source stays in bounds.
    expect(backoffDelay(0, policy, () => 0)).toBe(500);
    expect(backoffDelay(2, policy, () => 7)).toBe(2_000);
    expect(backoffDelay(2, policy, () => -1)).toBe(1_000);
  });

  it("spreads retries that failed together", () => {
    const delays = new Set(Array.from({ length: 50 }, () => backoffDelay(4, policy)));
    expect(delays.size).toBeGreaterThan(10);
    for (const d of delays) expect(d).toBeGreaterThanOrEqual(4_000);
  });

  it("is the replication alarm's backoff (0.5 s to 60 s, jittered)", () => {
    const first = Array.from({ length: 30 }, () => backoffMs(1));
    for (const d of first) {
      expect(d).toBeGreaterThanOrEqual(250);
      expect(d).toBeLessThanOrEqual(500);
    }
    for (const d of Array.from({ length: 30 }, () => backoffMs(40))) {
      expect(d).toBeGreaterThanOrEqual(30_000);
      expect(d).toBeLessThanOrEqual(60_000);
    }
    expect(new Set(first).size).toBeGreaterThan(1);
  });
});
