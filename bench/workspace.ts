/**
 * The session workspace's costs (docs/workspace.md, "Benchmarks"): end to end on `wrangler dev` with a
 * zero-latency scripted model, all in one run so the figures share the machine's load. The baseline
 * turn is a no-tool turn. Against it:
 *
 * - a tree snapshot per file-changing call: a `write_file` turn against an `echo` turn whose arguments
 *   have the **same size** (the scripted server streams arguments in 8-character deltas, like a model's
 *   tokens, and each delta costs the whole streaming path — an `echo {text:"x"}` turn is no baseline
 *   for a 1.2 KB `write_file`). Both a small (24 B) and a 1.2 KB file;
 * - `grep` over 10 MB: a workspace of 132 files (~10 MB, seeded by `bash` calls in six turns) searched
 *   for a pattern that matches a few lines, so every file is read; against an `echo` turn in the same
 *   session.
 *
 * Figures are ratios and differences against turns measured in the same run, never pass/fail
 * thresholds. Turns of different kinds are measured round-robin (see `p50s`). Not measured: git clone time and memory for a 5,000-file repository (git is another
 * branch's work).
 */
import { performance } from "node:perf_hooks";
import { scriptedModelClient, startScriptedModelServer, type ScriptedStep } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker, timedCodeTurn } from "./support.ts";

const TURNS = Number(process.env.BENCH_WORKSPACE_TURNS ?? 15);
const WARMUP = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

/** ~1.2 KB of file content (50 lines), the size of a small source file. */
const bigContent = (i: number) => `export const v = ${i};\n`.repeat(50);
/** Files of the grep corpus: 132 files × 1,001 lines of ~75 bytes ≈ 10 MB. */
const GREP_FILES = 132;
const SEED_TURNS = 6;

/** One `bash` command writing files [from, to] of the corpus: a 1,000-line body made once, each file its own first line. */
function seedCommand(from: number, to: number): string {
  return (
    `seq 1 1000 | awk '{print "const v" $1 " = \\"line " $1 " lorem ipsum dolor sit amet, consectetur adipiscing\\";"}' > /tmp/base.txt; ` +
    `for i in $(seq ${from} ${to}); do d=src/m$((i % 10)); mkdir -p $d; { echo "// module $i"; cat /tmp/base.txt; } > $d/f$i.ts; done`
  );
}

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const models = scriptedModelClient(model.url);
  const dev = await startBenchWorker();
  const call = benchClient(dev);
  try {
    const { token } = await benchWorkspace(dev, call);
    const modelId = "script:workspace-bench";
    await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: modelId, base_url: `${model.url}/v1` } });
    const session = async () => ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
    const turn = (id: string, steps: ScriptedStep[]) => timedCodeTurn(call, token, models, modelId, id, steps);
    const tool = (name: string, args: Record<string, unknown>): ScriptedStep[] => [
      { tool_calls: [{ name, arguments: args }] },
      { text: "ok" },
    ];
    /**
     * p50s of several kinds of turn, each in its own session (or the given one), measured round-robin —
     * one turn of each kind in turn — so a change in the machine's load touches every kind alike.
     */
    const p50s = async (kinds: { steps: (i: number) => ScriptedStep[]; id?: string }[]): Promise<number[]> => {
      const ids = await Promise.all(kinds.map(async (k) => k.id ?? (await session())));
      const samples = kinds.map(() => [] as number[]);
      for (let i = 0; i < TURNS + WARMUP; i++)
        for (const [k, kind] of kinds.entries()) {
          const ms = await turn(ids[k]!, kind.steps(i));
          if (i >= WARMUP) samples[k]!.push(ms);
        }
      return samples.map(median);
    };

    const [baseline, echoSmall, writeSmall, echoBig, writeBig] = (await p50s([
      { steps: () => [{ text: "ok" }] },
      { steps: () => tool("echo", { text: "x" }) },
      { steps: (i) => tool("write_file", { path: `src/dir${i % 5}/file${i}.ts`, content: `export const v = ${i};\n` }) },
      { steps: (i) => tool("echo", { text: bigContent(i) }) },
      { steps: (i) => tool("write_file", { path: `src/dir${i % 5}/file${i}.ts`, content: bigContent(i) }) },
    ])) as [number, number, number, number, number];

    // grep over 10 MB: seed, then alternate nothing; echo turns and grep turns in the same session.
    const corpus = await session();
    const per = GREP_FILES / SEED_TURNS;
    const t0 = performance.now();
    for (let s = 0; s < SEED_TURNS; s++) await turn(corpus, tool("bash", { command: seedCommand(s * per + 1, (s + 1) * per) }));
    const seedMs = performance.now() - t0;
    const listing = (await (await call("GET", `/api/sessions/${corpus}/files`, token)).json()) as {
      file_count: number;
      total_bytes: number;
    };
    if (listing.file_count !== GREP_FILES) throw new Error(`grep corpus: ${listing.file_count} files, expected ${GREP_FILES}`);
    const [echoCorpus, grep] = (await p50s([
      { steps: () => tool("echo", { text: "x" }), id: corpus },
      { steps: (i) => tool("grep", { pattern: `^// module 1${i % 3}[0-9]$` }), id: corpus },
    ])) as [number, number];

    const ms = (x: number) => `${x.toFixed(1)} ms`;
    const x = (v: number) => `${(v / baseline).toFixed(2)} x baseline`;
    console.log(`configuration: bench/wrangler.toml on wrangler dev; ${TURNS} turns per figure after ${WARMUP} warm-up turns; p50`);
    console.log(`baseline turn (no tools): ${ms(baseline)}`);
    console.log(`echo {text: "x"} turn: ${ms(echoSmall)} = ${x(echoSmall)}`);
    console.log(
      `write_file 24 B turn: ${ms(writeSmall)} = ${x(writeSmall)}; tree snapshot ≈ ${ms(writeSmall - echoSmall)} (vs the echo turn)`,
    );
    console.log(
      `echo with 1.2 KB of arguments: ${ms(echoBig)} = ${x(echoBig)}; streaming 1.2 KB of arguments ≈ ${ms(echoBig - echoSmall)}`,
    );
    console.log(
      `write_file 1.2 KB turn: ${ms(writeBig)} = ${x(writeBig)}; tree snapshot ≈ ${ms(writeBig - echoBig)} (vs the same-size echo turn; ` +
        `${ms(writeBig - echoSmall)} against the small echo turn, the last round's comparison)`,
    );
    console.log(
      `grep corpus: ${listing.file_count} files, ${(listing.total_bytes / 1e6).toFixed(1)} MB, seeded in ${SEED_TURNS} bash turns in ${ms(seedMs)}`,
    );
    console.log(
      `echo turn on that workspace: ${ms(echoCorpus)}; grep turn (reads every file): ${ms(grep)}; grep over 10 MB ≈ ${ms(grep - echoCorpus)}`,
    );
  } finally {
    await dev.stop();
    await model.stop();
  }
}
