/**
 * `git clone` of a 5,000-file repository into a session workspace (docs/workspace.md, "Git"), end to
 * end: `wrangler dev` of the bench Worker, a zero-latency scripted model whose one tool call is
 * `bash {command: "git clone <url>"}`, and git's own `git http-backend` on loopback over a bare
 * repository made here. Figures: the turn's wall time against a no-tool baseline turn; the Worker
 * isolate's peak memory during the clone, sampled over the DevTools inspector (`Runtime.getHeapUsage`:
 * used V8 heap plus ArrayBuffer backing stores; the Worker and its Durable Objects share that isolate
 * in `wrangler dev`), the "128 MB must hold" figure; and, as a cross-check from above, the
 * resident memory (VmHWM) of the workerd processes. Configuration: the shipped wrangler.toml with the
 * rate limits raised (bench/shipped-config.ts; `BENCH_GIT_CONFIG=bench` for bench/wrangler.toml).
 * Since `git_network_ms` no limit is raised: the default caps apply to the clone.
 */
import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { scriptedModelClient, startScriptedModelServer, type ScriptedStep } from "../test/support/scripted-openai.ts";
import { startGitServer } from "../test/support/git-server.ts";
import { benchClient, benchWorkspace, startBenchWorker, timedCodeTurn } from "./support.ts";
import { startWranglerDev } from "../test/support/wrangler-dev.ts";
import { writeBenchConfig } from "./shipped-config.ts";
import { inspector, sampleHeap } from "./inspector.ts";

const FILES = 5_000;
/** 10 kB a file: the 50 MB / 5,000-file repository (BENCH_GIT_FILE_BYTES to change it). */
const FILE_BYTES = Number(process.env.BENCH_GIT_FILE_BYTES ?? 10_000);

/** Peak resident memory (KiB) of the workerd processes in wrangler's process group. */
function workerdPeakKiB(group: number): number {
  const pids = execFileSync("pgrep", ["-g", String(group), "workerd"], { encoding: "utf8" })
    .trim()
    .split("\n")
    .filter(Boolean);
  let peak = 0;
  for (const pid of pids) {
    const m = /VmHWM:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"));
    if (m) peak = Math.max(peak, Number(m[1]));
  }
  return peak;
}

function corpus(): Record<string, string> {
  const words = ["alpha", "beta", "gamma", "delta", "return", "const", "function", "value", "index", "export"];
  const files: Record<string, string> = {};
  let seed = 7;
  for (let i = 0; i < FILES; i++) {
    let text = `// file ${i}\n`;
    while (text.length < FILE_BYTES) {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      text += `${words[seed % words.length]}_${seed % 997} `;
      if (seed % 11 === 0) text += "\n";
    }
    files[`src/m${i % 50}/f${i}.ts`] = `${text}\n`;
  }
  return files;
}

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const models = scriptedModelClient(model.url);
  const git = await startGitServer();
  const config = process.env.BENCH_GIT_CONFIG === "bench" ? "bench/wrangler.toml" : writeBenchConfig("shipped");
  const dev = process.env.BENCH_GIT_CONFIG === "bench" ? await startBenchWorker() : await startWranglerDev({ config });
  const call = benchClient(dev);
  try {
    const url = git.createRepo("bench/big", corpus());
    const pack = execFileSync("du", ["-sk", `${git.root}/bench/big.git`], { encoding: "utf8" }).split("\t")[0];
    const { token } = await benchWorkspace(dev, call);
    const modelId = "script:git-clone-bench";
    await call("PUT", "/api/config", token, {
      model: { provider: "openai-compatible", id: modelId, base_url: `${model.url}/v1` },
      runtime: { max_tool_iterations: 4 },
    });
    const id = ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
    const turn = (steps: ScriptedStep[]) => timedCodeTurn(call, token, models, modelId, id, steps);
    const baseline = await turn([{ text: "ok" }]);
    const before = workerdPeakKiB(dev.pid);
    const devtools = await inspector(dev.inspectorPort);
    const idle = await devtools.send<{ usedSize: number; backingStorageSize?: number }>("Runtime.getHeapUsage");
    // Every 4th sample after a full collection: the live peak beside the peak with garbage in it.
    const heap = sampleHeap(devtools, 50, 4);
    const clone = await turn([{ tool_calls: [{ name: "bash", arguments: { command: `git clone ${url} big` } }] }, { text: "ok" }]);
    const { peak, livePeak, samples } = await heap.stop();
    devtools.close();
    const after = workerdPeakKiB(dev.pid);
    const events = (await (await call("GET", `/api/sessions/${id}/events?limit=100`, token)).json()) as {
      events: { type: string; message?: { role: string; content: string } }[];
    };
    const result = events.events.filter((e) => e.message?.role === "tool_result").at(-1)?.message?.content ?? "";
    const files = (await (await call("GET", `/api/sessions/${id}/files`, token)).json()) as { file_count: number; total_bytes: number };
    console.log(
      `repository: ${FILES} files of ~${FILE_BYTES} bytes (${(FILES * FILE_BYTES) / 1e6} MB), bare repository ${pack} KiB on disk`,
    );
    console.log(`clone result: ${result.split("\n").slice(0, 3).join(" | ")}`);
    console.log(`workspace after: ${files.file_count} files, ${files.total_bytes} bytes (the checkout plus .git)`);
    console.log(`baseline turn (no tools): ${baseline.toFixed(0)} ms`);
    console.log(`turn with the clone: ${clone.toFixed(0)} ms = ${(clone / baseline).toFixed(1)} x baseline`);
    const mib = (n: number | undefined) => `${((n ?? 0) / 1024 / 1024).toFixed(1)} MiB`;
    console.log(`configuration: ${config}`);
    console.log(`Worker isolate before the clone: heap used ${mib(idle.usedSize)}, backing stores ${mib(idle.backingStorageSize)}`);
    console.log(
      `Worker isolate peak during the clone (${samples} samples): heap used + backing stores ${mib(peak.total)} (heap used ${mib(peak.usedSize)}, heap total ${mib(peak.totalSize)}, backing stores ${peak.backingStorageSize === undefined ? "not reported" : mib(peak.backingStorageSize)})`,
    );
    console.log(
      `Worker isolate live peak (samples taken right after a full garbage collection): ${mib(livePeak.total)} (heap used ${mib(livePeak.usedSize)}, backing stores ${livePeak.backingStorageSize === undefined ? "not reported" : mib(livePeak.backingStorageSize)})`,
    );
    console.log(
      `workerd peak RSS (VmHWM, all isolates and the runtime): ${(before / 1024).toFixed(0)} MiB before, ${(after / 1024).toFixed(0)} MiB after`,
    );
  } finally {
    await dev.stop();
    await git.stop();
    await model.stop();
  }
}
