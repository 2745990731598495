/**
 * The in-memory write lock of one WorkspaceDO. A Durable Object runs one request at a time only
 * until it awaits I/O (D1, R2), so mutations that read-then-write must hold this lock. Waiters are
 * served first come, first served; `acquire` gives up after `waitMs` (0 = try once).
 */
export class WriteLock {
  private locked = false;
  private readonly queue: { grant: () => void }[] = [];

  /** Resolves true once the lock is held, false when `waitMs` passed first. */
  acquire(waitMs: number): Promise<boolean> {
    if (!this.locked) {
      this.locked = true;
      return Promise.resolve(true);
    }
    if (waitMs <= 0) return Promise.resolve(false);
    return new Promise((resolve) => {
      const waiter = {
        grant: () => {
          clearTimeout(timer);
          resolve(true);
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

  release(): void {
    const next = this.queue.shift();
    if (next) next.grant();
    else this.locked = false;
  }

  /** Run `fn` holding the lock; returns `{ acquired: false }` when the wait ran out. */
  async run<T>(waitMs: number, fn: () => Promise<T>): Promise<{ acquired: true; value: T } | { acquired: false }> {
    if (!(await this.acquire(waitMs))) return { acquired: false };
    try {
      return { acquired: true, value: await fn() };
    } finally {
      this.release();
    }
  }
}
