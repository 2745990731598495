/**
 * The session workspace's costs (docs/workspace.md): end to end on `wrangler dev` with a zero-latency
 * scripted model. The baseline turn is a no-tool turn; against it, a turn with one `echo` tool call
 * (a tool step without a workspace change), a turn with one `write_file` call (the same step plus a
 * tree snapshot: stage, prepare, one transaction). Figures are ratios against the baseline turn,
 * never pass/fail thresholds. Not measured yet: `grep` over 10 MB (building the corpus through tool
 * calls outlasted a waited turn; it needs a bench-only seeding route) and git clone time and memory
 * for a 5,000-file repository (git is not built).
 */
import { performance } from "node:perf_hooks";
import { scriptedModelClient, startScriptedModelServer, type ScriptedStep } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";

const TURNS = 20;
const WARMUP = 3;
const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

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
    const turn = async (id: string, steps: ScriptedStep[] | null): Promise<number> => {
      if (steps) await models.script(modelId, steps);
      const t0 = performance.now();
      const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, token, { content: "go", toolset: "code" });
      const body = (await res.json()) as { status: string };
      if (body.status !== "completed") throw new Error(`turn ended ${body.status}`);
      return performance.now() - t0;
    };
    const p50 = async (steps: (i: number) => ScriptedStep[]): Promise<number> => {
      const id = await session();
      const samples: number[] = [];
      for (let i = 0; i < TURNS + WARMUP; i++) {
        const ms = await turn(id, steps(i));
        if (i >= WARMUP) samples.push(ms);
      }
      return median(samples);
    };
    const baseline = await p50(() => [{ text: "ok" }]);
    const echo = await p50(() => [{ tool_calls: [{ name: "echo", arguments: { text: "x" } }] }, { text: "ok" }]);
    const write = await p50((i) => [
      {
        tool_calls: [
          { name: "write_file", arguments: { path: `src/dir${i % 5}/file${i}.ts`, content: `export const v = ${i};\n`.repeat(50) } },
        ],
      },
      { text: "ok" },
    ]);
    console.log(`baseline turn (no tools), p50: ${baseline.toFixed(2)} ms`);
    console.log(`turn with one echo call, p50: ${echo.toFixed(2)} ms = ${(echo / baseline).toFixed(2)} x baseline`);
    console.log(
      `turn with one write_file call, p50: ${write.toFixed(2)} ms = ${(write / baseline).toFixed(2)} x baseline; ` +
        `tree snapshot ≈ ${(write - echo).toFixed(2)} ms per file-changing call`,
    );
  } finally {
    await dev.stop();
    await model.stop();
  }
}
