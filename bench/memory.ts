/**
 * Curated memory's cost per run (docs/memory.md, "Frozen snapshot"): end to end on `wrangler dev`
 * with a zero-latency scripted model, a no-tool turn in a workspace with no memory (the baseline
 * turn) against the same turn with both stores filled to their default budgets, which makes every
 * run read the stores from D1 and carry the memory section in its prompt. Figures are ratios against
 * the baseline turn, never pass/fail thresholds.
 */
import { performance } from "node:perf_hooks";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const TURNS = 30;
const WARMUP = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** Distinct entries of about `size` characters that fill `budget` characters. */
function entries(prefix: string, budget: number, size = 100): string[] {
  const out: string[] = [];
  for (let i = 0, used = 0; used + size <= budget; i++, used += size) out.push(`${prefix} ${i}: `.padEnd(size, "x"));
  return out;
}

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const turnP50 = async (filled: boolean): Promise<number> => {
      const { token } = await benchWorkspace(dev, call);
      await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: "echo:bench", base_url: `${model.url}/v1` } });
      if (filled) {
        for (const [store, budget] of [
          ["notes", 2_200],
          ["profile", 1_375],
        ] as const) {
          const res = await call("PUT", `/api/memory/${store}`, token, { entries: entries(`${store} fact`, budget) });
          if (res.status !== 200) throw new Error(`memory ${store}: ${res.status} ${await res.text()}`);
        }
      }
      const id = ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
      const samples: number[] = [];
      for (let i = 0; i < TURNS + WARMUP; i++) {
        const t0 = performance.now();
        await (await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content: "hello" })).arrayBuffer();
        if (i >= WARMUP) samples.push(performance.now() - t0);
      }
      return median(samples);
    };
    const baseline = await turnP50(false);
    const withMemory = await turnP50(true);
    console.log(`baseline turn (no memory), p50: ${baseline.toFixed(2)} ms`);
    console.log(
      `turn with full memory (notes 2,200 + profile 1,375 chars), p50: ${withMemory.toFixed(2)} ms = ${(withMemory / baseline).toFixed(2)} x baseline turn; ` +
        `snapshot cost ≈ ${(withMemory - baseline).toFixed(2)} ms per run`,
    );
  } finally {
    await dev.stop();
    await model.stop();
  }
}
