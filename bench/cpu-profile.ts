/**
 * Reading V8 CPU profiles (`.cpuprofile`: what the DevTools inspector and `wrangler check startup`
 * write), shared by bench/profile.ts (turns), bench/startup.ts (startup totals) and
 * bench/startup-sources.ts (startup by module), so the three count a sample the same way.
 */

export interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number; columnNumber: number };
  children?: number[];
}

export interface CpuProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

/** One sample that was not idle: its innermost frame, its stack from there to the root, and its time. */
export interface BusySample {
  leaf: ProfileNode;
  /** The leaf first, the root last. */
  stack: ProfileNode[];
  /** The interval until the next sample (V8's `timeDeltas[i]` is the one before sample i), in ms. */
  ms: number;
}

/** The profile's busy samples: `(idle)` left out, the last sample too (nothing says how long it lasted). */
export function busySamples(p: CpuProfile): BusySample[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const stacks = new Map<number, ProfileNode[]>();
  const stackOf = (id: number): ProfileNode[] => {
    let stack = stacks.get(id);
    if (!stack) {
      stack = [];
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) stack.push(byId.get(at)!);
      stacks.set(id, stack);
    }
    return stack;
  };
  const out: BusySample[] = [];
  for (let i = 0; i < p.samples.length - 1; i++) {
    const leaf = byId.get(p.samples[i]!);
    if (!leaf || leaf.callFrame.functionName === "(idle)") continue;
    out.push({ leaf, stack: stackOf(leaf.id), ms: (p.timeDeltas[i + 1] ?? 0) / 1000 });
  }
  return out;
}
