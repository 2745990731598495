/**
 * `npx tsx bench/ab.ts <checkout A> <checkout B>`: before/after figures of one change measured in the
 * same run (docs/workspace.md, "Benchmarks"). Starts the bench Worker of each checkout (each its own
 * `wrangler dev` over its own source, e.g. the commit before a fix and the fix) side by side, with one
 * scripted model server, and runs the same turns on both **alternately** — A, B, A, B … — so the
 * machine's load, which changes from minute to minute on a shared machine, touches both alike. Prints
 * p50 wall time per kind of turn for A and B. Env: BENCH_AB_TURNS (20); BENCH_AB_CONFIG: `shipped`
 * (the default: each checkout's own wrangler.toml as users deploy it, assets, observability and
 * rate-limit bindings included, with only the limits raised, as `npm run bench:peers` runs it;
 * bench/shipped-config.ts) or `bench` (each checkout's bench/wrangler.toml, without those sections).
 *
 * The turns are the workspace bench's (bench/workspace.ts): no tool, an `echo` call, an `echo` call
 * with 1.2 KB of arguments and a `write_file` of 1.2 KB, and three `bash` commands (a few file calls;
 * 50 files written and searched; 50 files searched and found), all on the `code` tool set.
 */
import { resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { scriptedModelClient, startScriptedModelServer, type ScriptedStep } from "../test/support/scripted-openai.ts";
import type { DevServer, StartOptions } from "../test/support/wrangler-dev.ts";
import { benchClient, benchWorkspace } from "./support.ts";
import { writeBenchConfig } from "./shipped-config.ts";

const TURNS = Number(process.env.BENCH_AB_TURNS ?? 20);
const CONFIG = process.env.BENCH_AB_CONFIG ?? "shipped";
if (CONFIG !== "shipped" && CONFIG !== "bench") throw new Error(`BENCH_AB_CONFIG: 'shipped' or 'bench', not '${CONFIG}'`);
const WARMUP = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

const [dirA, dirB] = process.argv.slice(2).map((d) => resolve(d));
if (!dirA || !dirB) {
  console.error("usage: npx tsx bench/ab.ts <checkout A> <checkout B>");
  process.exit(2);
}

/** `wrangler dev` of a checkout's Worker (`CONFIG`), started by that checkout's own helper (its root is its folder). */
async function start(dir: string): Promise<DevServer> {
  const mod = (await import(resolve(dir, "test/support/wrangler-dev.ts"))) as {
    startWranglerDev: (o: StartOptions) => Promise<DevServer>;
  };
  if (CONFIG === "bench") return mod.startWranglerDev({ config: "bench/wrangler.toml", timeoutMs: 240_000 });
  // The checkout's own shipped config, generated beside it by this tree's generator (as bench:peers does for its baseline).
  return mod.startWranglerDev({ config: writeBenchConfig("shipped", dir), timeoutMs: 240_000 });
}

const bigContent = (i: number) => `export const v = ${i};\n`.repeat(50);
const tool = (name: string, args: Record<string, unknown>): ScriptedStep[] => [{ tool_calls: [{ name, arguments: args }] }, { text: "ok" }];
const KINDS: { name: string; steps: (i: number) => ScriptedStep[] }[] = [
  { name: "no tool", steps: () => [{ text: "ok" }] },
  { name: "echo {text: 'x'}", steps: () => tool("echo", { text: "x" }) },
  { name: "echo, 1.2 KB of arguments", steps: (i) => tool("echo", { text: bigContent(i) }) },
  { name: "write_file 1.2 KB", steps: (i) => tool("write_file", { path: `src/d${i % 5}/f${i}.ts`, content: bigContent(i) }) },
  // The shell (docs/workspace.md, "The shell"): a command of a few file calls, and one of about a hundred.
  { name: "bash: echo > file, cat", steps: (i) => tool("bash", { command: `echo ${i} > a.txt && cat a.txt` }) },
  {
    name: "bash: write 50 files, grep",
    steps: (i) =>
      tool("bash", { command: `mkdir -p g; for n in $(seq 1 50); do echo "line $n of ${i}" > g/f$n.txt; done; grep -rc line g | wc -l` }),
  },
  // Reads only, as most of an agent's commands are: the files are written by the first (warm-up) turn.
  {
    name: "bash: grep -r, find, 50 files",
    steps: (i) =>
      tool("bash", {
        command:
          i === 0
            ? `mkdir -p r; for n in $(seq 1 50); do echo "line $n" > r/f$n.txt; done`
            : `grep -rc line r | wc -l; find r -name '*.txt' | wc -l`,
      }),
  },
];

const model = await startScriptedModelServer();
const models = scriptedModelClient(model.url);
const [a, b] = await Promise.all([start(dirA), start(dirB)]);
try {
  const sides = await Promise.all(
    [a, b].map(async (dev, n) => {
      const call = benchClient(dev);
      const { token } = await benchWorkspace(dev, call);
      const modelId = `script:ab-${n}`;
      await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: modelId, base_url: `${model.url}/v1` } });
      const sessions: string[] = [];
      for (const _ of KINDS) sessions.push(((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id);
      return { call, token, modelId, sessions, samples: KINDS.map(() => [] as number[]) };
    }),
  );
  for (let i = 0; i < TURNS + WARMUP; i++)
    for (const [k, kind] of KINDS.entries())
      for (const side of sides) {
        await models.script(side.modelId, kind.steps(i));
        const t0 = performance.now();
        const res = await side.call("POST", `/api/sessions/${side.sessions[k]}/messages?wait=true`, side.token, {
          content: "go",
          toolset: "code",
        });
        const ms = performance.now() - t0;
        if (((await res.json()) as { status: string }).status !== "completed") throw new Error(`${kind.name}: turn did not complete`);
        if (i >= WARMUP) side.samples[k]!.push(ms);
      }
  console.log(
    `A: ${dirA}\nB: ${dirB}\nconfiguration: each checkout's ${CONFIG === "shipped" ? "shipped wrangler.toml (only the rate limits raised)" : "bench/wrangler.toml"} on wrangler dev; ${TURNS} turns per figure, A and B alternating; p50`,
  );
  for (const [k, kind] of KINDS.entries()) {
    const [pa, pb] = sides.map((s) => median(s.samples[k]!)) as [number, number];
    console.log(
      `${kind.name.padEnd(28)} A ${pa.toFixed(1).padStart(7)} ms   B ${pb.toFixed(1).padStart(7)} ms   B/A ${(pb / pa).toFixed(2)}`,
    );
  }
} finally {
  await Promise.all([a.stop(), b.stop()]);
  await model.stop();
}
