/**
 * Long work that is a chain of I/O completions (a 1,500-skill plugin sync: thousands of D1 reads in
 * a row) never lets the isolate's event loop reach its timers, so every bound that rests on a timer
 * — the lock's waiters, the caller's own `busy` answer (domains/governance/client.ts), any request
 * sharing the isolate — is held until the work ends (issue 25: a 10 s bound answered after 26 s;
 * docs/skills-and-plugins.md, "The workspace write lock"). Such loops call a yielder once per item:
 * at most every `everyMs` it waits for a zero-delay timer, which runs only after every timer already
 * due, and so lets them fire.
 */

/** How often long work lets due timers run, in milliseconds of its own time. */
export const YIELD_EVERY_MS = 20;

/** A function to await once per item of long work; it yields to due timers at most every `everyMs`. */
export function timerYielder(everyMs = YIELD_EVERY_MS): () => Promise<void> {
  let last = Date.now();
  return async () => {
    if (Date.now() - last < everyMs) return;
    await new Promise<void>((resolve) => setTimeout(resolve, 0));
    last = Date.now();
  };
}
