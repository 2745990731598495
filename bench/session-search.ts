/**
 * Session search (docs/sessions.md, "Search") on a real `wrangler dev`: p50/p95 latency of
 * `GET /api/sessions/search` with 1k and 10k sessions × 20 messages in one workspace (seeded straight
 * into D1 by the bench Worker; the FTS5 index fills through the same trigger replication uses), for a
 * rare word, a common word, two words, a prefix and a word in every message, as ratios against two
 * baselines of the same Worker: `GET /api/ping` and a D1-backed list (`GET /api/sessions?limit=20`).
 */
import { performance } from "node:perf_hooks";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const MESSAGES = 20;
const SEED_CHUNK = 250;
const SIZES = [1_000, 10_000];
const WARM_UP = 5;
const SAMPLES = 40;

const QUERIES: { name: string; q: string }[] = [
  { name: "rare word", q: "quetzal" },
  { name: "common word", q: "webhook" },
  { name: "two words", q: "deploy cache" },
  { name: "prefix", q: "sched" },
  { name: "word in every message", q: "message" },
];

export async function run(): Promise<void> {
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const { token } = await benchWorkspace(dev, call);
    const measure = async (path: string): Promise<{ p50: number; p95: number; results: number }> => {
      let results = 0;
      for (let i = 0; i < WARM_UP; i++) await (await call("GET", path, token)).arrayBuffer();
      const samples: number[] = [];
      for (let i = 0; i < SAMPLES; i++) {
        const t0 = performance.now();
        const body = (await (await call("GET", path, token)).json()) as { results?: unknown[] };
        samples.push(performance.now() - t0);
        results = body.results?.length ?? 0;
      }
      return { p50: percentile(samples, 50), p95: percentile(samples, 95), results };
    };

    let seeded = 0;
    for (const size of SIZES) {
      const t0 = performance.now();
      for (let from = seeded + 1; from <= size; from += SEED_CHUNK) {
        await call("POST", "/_bench/search/seed", token, { from, to: Math.min(size, from + SEED_CHUNK - 1), messages: MESSAGES });
      }
      const seedSeconds = (performance.now() - t0) / 1000;
      seeded = size;

      const ping = await measure("/api/ping");
      const list = await measure("/api/sessions?limit=20");
      console.log(
        `\n${size} sessions × ${MESSAGES} messages (${size * MESSAGES} indexed events; seeded in ${seedSeconds.toFixed(1)} s); ${SAMPLES} sequential samples`,
      );
      console.log(pad("request", 34) + pad("results", 9) + pad("p50 ms", 9) + pad("p95 ms", 9) + pad("p50 ×ping", 11) + "p50 ×list");
      const row = (name: string, r: { p50: number; p95: number; results: number }) =>
        console.log(
          pad(name, 34) +
            pad(String(r.results), 9) +
            pad(r.p50.toFixed(1), 9) +
            pad(r.p95.toFixed(1), 9) +
            pad((r.p50 / ping.p50).toFixed(1), 11) +
            (r.p50 / list.p50).toFixed(1),
        );
      row("baseline: GET /api/ping", ping);
      row("baseline: GET /api/sessions", list);
      for (const { name, q } of QUERIES) row(`search: ${name}`, await measure(`/api/sessions/search?q=${encodeURIComponent(q)}&limit=20`));
    }
  } finally {
    await dev.stop();
  }
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  const idx = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[idx]!;
}

const pad = (text: string, width: number) => text.padEnd(width);
