/**
 * Overhead of delegation (docs/delegation.md, "Benchmark") on a real `wrangler dev` of the bench
 * Worker (bench/wrangler.toml: the shipped configuration plus bench-only routes) with a zero-latency
 * scripted model: p50/p95 of
 *   (a) a direct run of a task (one model step),
 *   (b) a parent run that calls the `echo` tool once and answers (two model steps, one tool call: the
 *       parent's share of a delegation without the child),
 *   (c) a parent run that delegates the same task to an agent and answers (the parent's two steps plus
 *       the child's session, run and step).
 * (c) − (a) is what delegating a task costs end to end; (c) − (b) is the child session itself.
 */
import { performance } from "node:perf_hooks";
import { scriptedModelClient, startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const WARM_UP = 3;
const SAMPLES = Number(process.env.BENCH_SAMPLES ?? 30);

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const script = scriptedModelClient(model.url);
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  const entry = (id: string) => ({ provider: "openai-compatible", id, base_url: `${model.url}/v1` });
  try {
    const { token } = await benchWorkspace(dev, call);
    await call("PUT", "/api/config", token, { model: entry("echo:bench-direct") });
    await call("POST", "/api/agents", token, {
      id: "worker",
      gitea_username: "worker",
      roles: ["developer"],
      model: entry("echo:bench-child"),
    });
    const session = async () => ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
    const turn = async (id: string, content: string) => {
      const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content });
      const result = (await res.json()) as { status: string };
      if (result.status !== "completed") throw new Error(`turn ended ${result.status}`);
    };
    const TASK = "summarise the benchmark task";
    const scenarios: { name: string; before: () => Promise<void>; op: (id: string) => Promise<void> }[] = [
      { name: "(a) direct run of the task", before: async () => undefined, op: (id) => turn(id, TASK) },
      {
        name: "(b) parent: 1 echo tool call + answer",
        before: () => script.script("echo:bench-direct", [{ tool_calls: [{ name: "echo", arguments: { text: TASK } }] }, { text: "done" }]),
        op: (id) => turn(id, "use echo"),
      },
      {
        name: "(c) parent: delegate the task + answer",
        before: () =>
          script.script("echo:bench-direct", [
            { tool_calls: [{ name: "delegate", arguments: { tasks: [{ agent: "worker", task: TASK }] } }] },
            { text: "done" },
          ]),
        op: (id) => turn(id, "delegate it"),
      },
    ];
    const rows: { name: string; p50: number; p95: number }[] = [];
    for (const s of scenarios) {
      const samples: number[] = [];
      for (let i = 0; i < WARM_UP + SAMPLES; i++) {
        const id = await session(); // a fresh session each time: the same history length for every sample
        await s.before();
        const t0 = performance.now();
        await s.op(id);
        if (i >= WARM_UP) samples.push(performance.now() - t0);
      }
      rows.push({ name: s.name, p50: percentile(samples, 50), p95: percentile(samples, 95) });
    }
    const [direct, tool, delegated] = rows as [(typeof rows)[0], (typeof rows)[0], (typeof rows)[0]];
    console.log(`wrangler dev (bench/wrangler.toml), scripted model (zero latency); ${SAMPLES} sequential samples each`);
    console.log(pad("scenario", 44) + pad("p50 ms", 10) + pad("p95 ms", 10) + "p50 ×(a)");
    for (const r of rows)
      console.log(pad(r.name, 44) + pad(r.p50.toFixed(1), 10) + pad(r.p95.toFixed(1), 10) + (r.p50 / direct.p50).toFixed(2));
    console.log(`delegated / direct, p50 (c) / (a): ${(delegated.p50 / direct.p50).toFixed(2)}×`);
    console.log(`delegation overhead end to end, p50 (c) − (a): ${(delegated.p50 - direct.p50).toFixed(1)} ms`);
    console.log(`the child session itself, p50 (c) − (b): ${(delegated.p50 - tool.p50).toFixed(1)} ms`);
  } finally {
    await dev.stop();
    await model.stop();
  }
}

function percentile(xs: number[], p: number): number {
  const sorted = [...xs].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))]!;
}

const pad = (s: string, n: number) => s.padEnd(n);
