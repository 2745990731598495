/**
 * The `bash` tool's deadline, with network time carved out (docs/workspace.md, "Caps"). A command has
 * `shell_time_ms` of its own work; a `git clone` or `push` inside it runs under `git_network_ms`
 * instead, during which the shell's timer is paused: a 5,000-file clone takes tens of seconds, far
 * over the shell's 20 s, and must not be cut by it. The network budget is per command (all its
 * network sections together), so a command's wall time is at most the sum of the two caps.
 */
export type NetworkSection = <T>(run: (signal: AbortSignal) => Promise<T>) => Promise<T>;

export class ShellClock {
  readonly #deadline = new AbortController();
  #networkLeft: number;
  #timer: ReturnType<typeof setTimeout> | null = null;
  /** Shell time left when the timer is paused; null while it runs. */
  #paused: number | null = null;
  #endsAt = 0;
  #depth = 0;
  #stopped = false;

  constructor(shellMs: number, networkMs: number) {
    this.#networkLeft = networkMs;
    this.#arm(shellMs);
  }

  /** Aborted when the shell's own time is up (never by network time). */
  get signal(): AbortSignal {
    return this.#deadline.signal;
  }

  /** Ends the timers (the command finished). */
  stop(): void {
    this.#stopped = true;
    if (this.#timer) clearTimeout(this.#timer);
    this.#timer = null;
  }

  /**
   * Runs `run` with the shell's timer paused and the remaining network budget as its own deadline:
   * `run`'s signal aborts with a TimeoutError naming `git_network_ms` when that budget is spent.
   */
  readonly network: NetworkSection = async (run) => {
    if (this.#deadline.signal.aborted) throw this.#deadline.signal.reason;
    if (this.#depth++ === 0) this.#pause();
    const started = Date.now();
    const budget = this.#networkLeft;
    const net = new AbortController();
    const timer = setTimeout(
      () => net.abort(new DOMException(`the git network time limit (git_network_ms) was reached`, "TimeoutError")),
      Math.max(0, budget),
    );
    try {
      return await run(net.signal);
    } finally {
      clearTimeout(timer);
      this.#networkLeft = Math.max(0, budget - (Date.now() - started));
      if (--this.#depth === 0) this.#resume();
    }
  };

  #arm(ms: number): void {
    this.#endsAt = Date.now() + ms;
    this.#timer = setTimeout(() => this.#deadline.abort(new DOMException("shell time limit", "TimeoutError")), ms);
  }

  #pause(): void {
    if (!this.#timer) return;
    clearTimeout(this.#timer);
    this.#timer = null;
    this.#paused = Math.max(0, this.#endsAt - Date.now());
  }

  #resume(): void {
    if (this.#paused === null || this.#stopped) return;
    const left = this.#paused;
    this.#paused = null;
    this.#arm(left);
  }
}
