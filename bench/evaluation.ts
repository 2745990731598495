/**
 * Replay evaluation wall time (docs/evaluation.md, "Concurrency"): end to end on `wrangler dev`, a
 * draft with 12 cases evaluated at concurrency 1, 3 and 6 against a scripted model with a fixed delay
 * per call (each case is two runs side by side, then the judge), timed from `POST …/evaluate` until
 * the evaluation reports a verdict. Figures are the speed-ups against concurrency 1, never thresholds.
 */
import { performance } from "node:perf_hooks";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { draftOn, ok, at } from "../test/support/evaluation-draft.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const CASES = 12;
const LEVELS = [1, 3, 6];
/** Milliseconds the scripted model takes per call (a stand-in for a real model's latency). */
const MODEL_DELAY_MS = 1_000;

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const wallMs = async (concurrency: number): Promise<number> => {
      const { token } = await benchWorkspace(dev, call);
      const draftId = await draftOn(dev.url, token, model.url, `echo@${MODEL_DELAY_MS}:bench-eval-${concurrency}`, CASES);
      const t0 = performance.now();
      await ok(await at(dev.url, "POST", `/api/drafts/${draftId}/evaluate`, token, { concurrency }), "evaluate");
      for (;;) {
        const e = (await ok(await at(dev.url, "GET", `/api/drafts/${draftId}/evaluation`, token), "evaluation")) as { status: string };
        if (e.status !== "running") {
          if (e.status !== "passed") throw new Error(`evaluation ended ${e.status}`);
          return performance.now() - t0;
        }
        await new Promise((r) => setTimeout(r, 50));
      }
    };
    const times = new Map<number, number>();
    for (const level of LEVELS) times.set(level, await wallMs(level));
    const base = times.get(1)!;
    for (const level of LEVELS) {
      const ms = times.get(level)!;
      console.log(
        `${CASES} cases at concurrency ${level}: ${(ms / 1000).toFixed(2)} s wall` +
          (level === 1 ? " (baseline)" : ` = ${(base / ms).toFixed(2)} x faster than concurrency 1`),
      );
    }
    console.log(`(scripted model: ${MODEL_DELAY_MS} ms per call; each case = 2 runs side by side + 1 judge call)`);
  } finally {
    await dev.stop();
    await model.stop();
  }
}
