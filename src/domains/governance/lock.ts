/**
 * The in-memory write lock of one WorkspaceDO (docs/skills-and-plugins.md, "The workspace write
 * lock"). A Durable Object runs one request at a time only until it awaits I/O (D1, R2), so
 * mutations that read-then-write must hold this lock. Waiters are served first come, first served,
 * each until its own deadline. A waiter's timer cannot fire while the isolate is kept busy (CPU
 * work, or a chain of I/O completions that never lets the event loop idle), so a deadline is also
 * enforced without timers: `release` never hands the lock to an overdue waiter, and the holder's
 * I/O calls `expireOverdue` (see workspace-do.ts), which refuses waiters whose time is up.
 */
import type { WireError } from "../../kernel/outcome.ts";

/** Seconds suggested to a client that met a busy lock. */
export const BUSY_RETRY_AFTER_SECONDS = 2;
/** How long explicit operations wait for the lock by default (`BEAVER_LOCK_WAIT_MS` overrides it, client.ts). */
export const DEFAULT_LOCK_WAIT_MS = 10_000;

export type LockMode = "wait" | "try";

/** How a call meets the lock: try once, or wait until `deadline` (epoch ms, set by the caller). */
export type LockCall =
  | { mode: "try" }
  | {
      mode: "wait";
      deadline: number;
      /** The caller's bound, for the busy answer. */
      waitMs: number;
      /** Asked once the lock is held in time: true if the caller still waits (the op then runs), false if it answered busy. */
      start: () => boolean | Promise<boolean>;
    };

/** The busy answer: `try` callers are deferred at once, waiting ones after `waitMs`. */
export function busyError(call: LockCall): WireError {
  const waitMs = call.mode === "try" ? 0 : call.waitMs;
  return {
    code: "busy",
    message:
      call.mode === "try"
        ? "The workspace is busy with another skill or plugin change; deferred"
        : `The workspace is busy with another skill or plugin change (waited ${waitMs} ms)`,
    details: { waited_ms: waitMs },
    retryAfter: BUSY_RETRY_AFTER_SECONDS,
  };
}

interface Waiter {
  deadline: number;
  settle: (granted: boolean) => void;
}

export class WriteLock {
  private locked = false;
  private readonly queue: Waiter[] = [];

  /** Resolves true once the lock is held, false when `waitMs` passed first (0 = try once). */
  acquire(waitMs: number): Promise<boolean> {
    return this.acquireBy(Date.now() + waitMs);
  }

  /**
   * Resolves true once the lock is held, false when `deadline` (epoch ms) passed first. A free lock
   * is taken at once whatever the deadline; callers that must not start late check it first.
   */
  acquireBy(deadline: number): Promise<boolean> {
    this.expireOverdue();
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve(true);
    }
    const waitMs = deadline - Date.now();
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        deadline,
        settle: (granted) => {
          clearTimeout(timer);
          resolve(granted);
        },
      };
      const timer = setTimeout(() => {
        const i = this.queue.indexOf(waiter);
        if (i >= 0) this.queue.splice(i, 1);
        resolve(false);
      }, waitMs);
      this.queue.push(waiter);
    });
  }

  /** Refuses every queued waiter whose deadline has passed by `now`. */
  expireOverdue(now = Date.now()): void {
    for (let i = this.queue.length - 1; i >= 0; i--) {
      const w = this.queue[i]!;
      if (w.deadline > now) continue;
      this.queue.splice(i, 1);
      w.settle(false);
    }
  }

  /** Hands the lock to the first waiter still within its deadline, or frees it. */
  release(): void {
    this.expireOverdue();
    const next = this.queue.shift();
    if (next) next.settle(true);
    else this.locked = false;
  }
}
