/**
 * Compaction (docs/sessions.md, "Compaction"): (a) the pure part — planning a compaction of a long
 * path and rendering the summariser's transcript — against building the same path's context (what
 * every turn already does); (b) one on-demand compaction end to end on `wrangler dev` with a
 * zero-latency scripted model (one summary call and one event) against a no-tool turn of the same
 * Worker. Ratios, not thresholds.
 */
import { performance } from "node:perf_hooks";
import { LogBuilder } from "../test/support/log-builder.ts";
import { buildContext } from "../src/runtime/session/build-context.ts";
import { planCompaction, renderTranscript } from "../src/runtime/session/compaction.ts";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const PURE_TURNS = 1_000;
const PURE_SAMPLES = 50;
const E2E_SAMPLES = 12;
const TURNS_BEFORE_COMPACT = 6;

function timed(fn: () => void, samples: number): number {
  for (let i = 0; i < 5; i++) fn();
  const start = performance.now();
  for (let i = 0; i < samples; i++) fn();
  return (performance.now() - start) / samples;
}

function median(samples: number[]): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.floor(sorted.length / 2)]!;
}

export async function run(): Promise<void> {
  // (a) pure: a 2,000-message path (user question, tool call, tool result, answer per turn).
  const log = new LogBuilder();
  for (let t = 0; t < PURE_TURNS; t++) {
    log.user(`question ${t} ${"q".repeat(300)}`);
    if (t % 4 === 0) {
      log.calls(`c${t}`, "search");
      log.toolResult(`c${t}_0`, "r".repeat(800), "search");
    }
    log.assistant(`answer ${t} ${"a".repeat(300)}`);
  }
  const base = timed(() => buildContext(log.tree, log.leaf), PURE_SAMPLES);
  const plan = timed(() => planCompaction(log.tree, log.leaf, 20_000), PURE_SAMPLES);
  const summarised = planCompaction(log.tree, log.leaf, 20_000)!.summarised;
  const render = timed(() => renderTranscript(summarised, 240_000), PURE_SAMPLES);
  console.log(`pure, ${log.tree.size}-event path:`);
  console.log(`  build context (baseline) ${base.toFixed(2)} ms`);
  console.log(`  plan compaction          ${plan.toFixed(2)} ms  (${(plan / base).toFixed(1)}× base)`);
  console.log(`  render transcript        ${render.toFixed(2)} ms  (${(render / base).toFixed(1)}× base)`);

  // (b) end to end: POST /compact (the summary from the echo model) against a no-tool turn.
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const { token } = await benchWorkspace(dev, call);
    await call("PUT", "/api/config", token, {
      model: { provider: "openai-compatible", id: "echo:bench-compact", base_url: `${model.url}/v1` },
    });
    const session = async () => ((await (await call("POST", "/api/sessions", token, { title: "bench" })).json()) as { id: string }).id;
    const turn = async (id: string, content: string) => {
      const result = (await (await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content })).json()) as {
        status: string;
      };
      if (result.status !== "completed") throw new Error(`turn ended ${result.status}`);
    };
    const turns: number[] = [];
    const compactions: number[] = [];
    for (let i = 0; i < E2E_SAMPLES; i++) {
      const id = await session();
      for (let t = 0; t < TURNS_BEFORE_COMPACT; t++) await turn(id, `question ${t} ${"q".repeat(400)}`);
      let start = performance.now();
      await turn(id, "one more question");
      turns.push(performance.now() - start);
      start = performance.now();
      const res = (await (await call("POST", `/api/sessions/${id}/compact`, token, { keep_tokens: 50 })).json()) as { compacted: boolean };
      compactions.push(performance.now() - start);
      if (!res.compacted) throw new Error("nothing was compacted");
    }
    const t = median(turns.slice(2));
    const c = median(compactions.slice(2));
    console.log(`end to end (median of ${E2E_SAMPLES - 2}, zero-latency model):`);
    console.log(`  no-tool turn (baseline)  ${t.toFixed(1)} ms`);
    console.log(`  POST /compact            ${c.toFixed(1)} ms  (${(c / t).toFixed(1)}× base)`);
  } finally {
    await dev.stop();
    await model.stop();
  }
}
