/**
 * A DevTools protocol session with the Worker's isolate over `wrangler dev --inspector-port`
 * (test/support/wrangler-dev.ts passes it): CPU profiles (bench/profile.ts) and heap samples
 * (bench/git-clone.ts). In `wrangler dev` the Worker and its Durable Objects run in this one isolate.
 */

/** A DevTools protocol session over the inspector WebSocket of the Worker's first target. */
export async function inspector(port: number) {
  const targets = (await (await fetch(`http://127.0.0.1:${port}/json`)).json()) as { webSocketDebuggerUrl: string; title?: string }[];
  if (process.env.BENCH_DEBUG) console.log(JSON.stringify(targets));
  if (targets.length === 0) throw new Error("no inspector target");
  // wrangler's inspector proxy accepts DevTools origins only; Node's WebSocket (undici) takes headers.
  const ws = new WebSocket(targets[0]!.webSocketDebuggerUrl, {
    headers: { Origin: "https://devtools.devprod.cloudflare.dev" },
  } as unknown as string[]);
  await new Promise<void>((ok, fail) => {
    ws.addEventListener("open", () => ok(), { once: true });
    ws.addEventListener("error", () => fail(new Error("inspector connection failed")), { once: true });
  });
  let next = 1;
  const waiting = new Map<number, (v: unknown) => void>();
  ws.addEventListener("message", (e) => {
    const msg = JSON.parse(String(e.data)) as { id?: number; result?: unknown; error?: unknown };
    if (msg.id !== undefined && waiting.has(msg.id)) {
      waiting.get(msg.id)!(msg.error ? Promise.reject(new Error(JSON.stringify(msg.error))) : msg.result);
      waiting.delete(msg.id);
    }
  });
  return {
    send<T>(method: string, params: object = {}): Promise<T> {
      const id = next++;
      ws.send(JSON.stringify({ id, method, params }));
      return new Promise<T>((ok) => waiting.set(id, ok as (v: unknown) => void));
    },
    close: () => ws.close(),
  };
}

/** `Runtime.getHeapUsage`: the V8 heap's used bytes, plus ArrayBuffer backing stores where V8 reports them. */
export interface HeapSample {
  usedSize: number;
  totalSize: number;
  backingStorageSize?: number;
}

/**
 * Samples the isolate's heap every `everyMs` until stopped; the peak is of used heap plus backing
 * stores (a packfile's Uint8Array lives outside the JS heap, and the 128 MB isolate limit counts it).
 * A sample is answered between the isolate's tasks, so a synchronous burst shorter than the interval
 * can be missed: the figure is a lower bound on the true peak.
 *
 * Every `collectEvery`-th sample (0: none) first asks for a full garbage collection
 * (`HeapProfiler.collectGarbage`), so `livePeak` is the most that was still reachable: the other samples
 * also count garbage V8 has not collected yet, which it would collect before failing an allocation.
 */
export function sampleHeap(devtools: Awaited<ReturnType<typeof inspector>>, everyMs = 50, collectEvery = 0) {
  let peak: HeapSample & { total: number } = { usedSize: 0, totalSize: 0, total: 0 };
  let livePeak: HeapSample & { total: number } = { usedSize: 0, totalSize: 0, total: 0 };
  let samples = 0;
  let running = true;
  const loop = (async () => {
    while (running) {
      const collected = collectEvery > 0 && samples % collectEvery === 0;
      if (collected) await devtools.send("HeapProfiler.collectGarbage");
      const s = await devtools.send<HeapSample>("Runtime.getHeapUsage");
      samples++;
      const total = s.usedSize + (s.backingStorageSize ?? 0);
      if (total > peak.total) peak = { ...s, total };
      if (collected && total > livePeak.total) livePeak = { ...s, total };
      await new Promise((r) => setTimeout(r, everyMs));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return { peak, livePeak, samples };
    },
  };
}
