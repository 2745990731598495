/** The shell's deadline with git's network time carved out (src/runtime/workspace/shell-clock.ts), on fake timers. */
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { ShellClock } from "../../../src/runtime/workspace/shell-clock.ts";

beforeEach(() => vi.useFakeTimers());
afterEach(() => vi.useRealTimers());

/** A network section that takes `ms` (or until its signal aborts), like a clone on a slow remote. */
const slow = (ms: number) => (signal: AbortSignal) =>
  new Promise<string>((resolve, reject) => {
    const t = setTimeout(() => resolve("cloned"), ms);
    signal.addEventListener("abort", () => {
      clearTimeout(t);
      reject(signal.reason);
    });
  });

describe("ShellClock", () => {
  it("does not let the shell's cap cut a clone that is within the git cap, and resumes the shell's time after it", async () => {
    const clock = new ShellClock(20_000, 120_000);
    await vi.advanceTimersByTimeAsync(5_000); // the command's own work before the clone
    const clone = clock.network(slow(60_000)); // three times the shell's cap
    await vi.advanceTimersByTimeAsync(60_000);
    await expect(clone).resolves.toBe("cloned");
    expect(clock.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(14_999); // 15 s of shell time were left
    expect(clock.signal.aborted).toBe(false);
    await vi.advanceTimersByTimeAsync(2);
    expect(clock.signal.aborted).toBe(true);
    expect((clock.signal.reason as DOMException).name).toBe("TimeoutError");
    clock.stop();
  });

  it("stops network work past git_network_ms (the budget is shared by the command's clone and push) without ending the shell", async () => {
    const clock = new ShellClock(20_000, 120_000);
    const first = clock.network(slow(100_000));
    await vi.advanceTimersByTimeAsync(100_000);
    await expect(first).resolves.toBe("cloned");
    const second = clock.network(slow(30_000));
    const caught = expect(second).rejects.toThrow("git network time limit (git_network_ms)");
    await vi.advanceTimersByTimeAsync(20_001);
    await caught;
    expect(clock.signal.aborted).toBe(false);
    clock.stop();
    await vi.advanceTimersByTimeAsync(60_000);
    expect(clock.signal.aborted).toBe(false); // a stopped clock never fires
  });
});
