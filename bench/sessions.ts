/**
 * Session turns on a real `wrangler dev` with a zero-latency scripted model: p50/p95 latency and
 * throughput of (a) a no-tool turn and (b) a turn with three tool calls, each against a baseline
 * route of the same Worker that makes one Durable Object call with one storage write. Also the
 * SessionDO's storage statements per turn and per model step (all local and synchronous) and the
 * D1 round trips a turn waits for.
 */
import { performance } from "node:perf_hooks";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const WARM_UP = 5;
const LATENCY_SAMPLES = 60;
const CONCURRENCY = 4;
const THROUGHPUT_PER_WORKER = 15;

interface Stats {
  storage_writes: number;
  storage_reads: number;
  replication_batches: number;
}

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  const workspace = async (modelId: string): Promise<string> => {
    const { token } = await benchWorkspace(dev, call);
    await call("PUT", "/api/config", token, {
      model: { provider: "openai-compatible", id: modelId, base_url: `${model.url}/v1` },
      runtime: { max_context_messages: 40 },
    });
    return token;
  };
  const session = async (token: string) => ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
  const turn = (token: string, id: string) => async () => {
    const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content: "benchmark turn" });
    const result = (await res.json()) as { status: string };
    if (result.status !== "completed") throw new Error(`turn ended ${result.status}`);
  };
  const baseline = (token: string, id: string) => async () => {
    await (await call("POST", `/_bench/sessions/${id}/baseline`, token)).arrayBuffer();
  };
  const stats = async (token: string, id: string) => (await (await call("GET", `/_bench/sessions/${id}/stats`, token)).json()) as Stats;

  try {
    const noToolToken = await workspace("echo:bench");
    const toolsToken = await workspace("tools-3:bench");
    const scenarios = [
      { name: "baseline: 1 DO call + 1 write", token: noToolToken, make: baseline, steps: 0 },
      { name: "(a) no-tool turn", token: noToolToken, make: turn, steps: 1 },
      { name: "(b) 3-tool-call turn", token: toolsToken, make: turn, steps: 4 },
    ];

    const rows: { name: string; p50: number; p95: number; perSecond: number }[] = [];
    const perTurn: { name: string; writes: number; reads: number; d1: number; steps: number }[] = [];
    for (const s of scenarios) {
      const id = await session(s.token);
      const op = s.make(s.token, id);
      for (let i = 0; i < WARM_UP; i++) await op();
      const before = await stats(s.token, id);
      const samples: number[] = [];
      for (let i = 0; i < LATENCY_SAMPLES; i++) {
        const t0 = performance.now();
        await op();
        samples.push(performance.now() - t0);
      }
      const after = await stats(s.token, id);
      // Counters belong to the object instance: a restart in between (wrangler dev may recycle it) voids the sample.
      if (s.steps > 0 && after.storage_writes < before.storage_writes) {
        console.log(`${s.name}: the Durable Object restarted during the sample; storage figures skipped`);
      } else if (s.steps > 0) {
        perTurn.push({
          name: s.name,
          writes: (after.storage_writes - before.storage_writes) / LATENCY_SAMPLES,
          reads: (after.storage_reads - before.storage_reads) / LATENCY_SAMPLES,
          d1: (after.replication_batches - before.replication_batches) / LATENCY_SAMPLES,
          steps: s.steps,
        });
      }
      // Throughput: CONCURRENCY sessions in parallel (runs of one session are sequential by design).
      const ids = await Promise.all(Array.from({ length: CONCURRENCY }, () => session(s.token)));
      const t0 = performance.now();
      await Promise.all(
        ids.map(async (sid) => {
          const worker = s.make(s.token, sid);
          for (let i = 0; i < THROUGHPUT_PER_WORKER; i++) await worker();
        }),
      );
      const seconds = (performance.now() - t0) / 1000;
      rows.push({
        name: s.name,
        p50: percentile(samples, 50),
        p95: percentile(samples, 95),
        perSecond: (CONCURRENCY * THROUGHPUT_PER_WORKER) / seconds,
      });
    }

    const base = rows[0]!;
    console.log(
      `wrangler dev, scripted model (zero latency); ${LATENCY_SAMPLES} sequential samples; throughput with ${CONCURRENCY} sessions in parallel`,
    );
    console.log(
      pad("scenario", 32) +
        pad("p50 ms", 10) +
        pad("p95 ms", 10) +
        pad("ops/s", 10) +
        pad("p50 ×base", 11) +
        pad("p95 ×base", 11) +
        "ops/s ×base",
    );
    for (const r of rows) {
      console.log(
        pad(r.name, 32) +
          pad(r.p50.toFixed(1), 10) +
          pad(r.p95.toFixed(1), 10) +
          pad(r.perSecond.toFixed(1), 10) +
          pad((r.p50 / base.p50).toFixed(1), 11) +
          pad((r.p95 / base.p95).toFixed(1), 11) +
          (r.perSecond / base.perSecond).toFixed(2),
      );
    }
    console.log("\nSessionDO storage per turn (SQLite in the DO: synchronous, no awaited storage round trip on the critical path;");
    console.log("writes reach disk at the output gate, which holds each outgoing frame/response until they are durable)");
    console.log(
      pad("scenario", 32) +
        pad("writes/turn", 13) +
        pad("reads/turn", 12) +
        pad("model steps", 13) +
        pad("writes/step", 13) +
        "D1 batches/turn",
    );
    for (const t of perTurn) {
      console.log(
        pad(t.name, 32) +
          pad(t.writes.toFixed(1), 13) +
          pad(t.reads.toFixed(1), 12) +
          pad(String(t.steps), 13) +
          pad((t.writes / t.steps).toFixed(1), 13) +
          t.d1.toFixed(2),
      );
    }
    console.log("(the baseline does 1 write. D1 batches run beside the loop, never inside a step; a turn's answer waits only for the");
    console.log(" flush in progress when the run ends, so the log in D1 is complete when the client hears runtime_end)");
  } finally {
    if (process.env.BENCH_DEBUG) console.log(dev.output());
    await dev.stop();
    await model.stop();
  }
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

const pad = (text: string, width: number) => text.padEnd(width);
