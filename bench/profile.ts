/**
 * `npm run bench:profile`: where a Beaver turn spends its CPU. Starts the bench Worker on
 * `wrangler dev` against the scripted model, warms up, then takes a V8 CPU profile through wrangler's
 * DevTools inspector while it runs turns, and prints the functions with the most self time and the
 * files with the most total time (docs/performance.md, "Profiling"). The raw profile is written to
 * a `.cpuprofile` file that Chrome DevTools opens.
 *
 * Env: BENCH_PROFILE_TURNS (100), BENCH_PROFILE_RULE (`echo`; `tools-1`, `tools-3`; `webhooks` profiles
 * signed unique Gitea deliveries instead of turns; `write_file` / `echo_call` script one `write_file` /
 * `echo` call per turn of the `code` tool set, the workspace bench's two turns), BENCH_PROFILE_OUT.
 */
import { copyFileSync, existsSync, mkdtempSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import { SourceMapConsumer, type RawSourceMap } from "source-map-js";
import { tmpdir } from "node:os";
import { performance } from "node:perf_hooks";
import { scriptedModelClient, startScriptedModelServer, type ScriptedStep } from "../test/support/scripted-openai.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";
import { inspector } from "./inspector.ts";
import { busySamples, type CpuProfile, type ProfileNode } from "./cpu-profile.ts";
import { intakeWorkspace, postDelivery, uniqueDelivery } from "./webhooks.ts";

const TURNS = Number(process.env.BENCH_PROFILE_TURNS ?? 100);
const RULE = process.env.BENCH_PROFILE_RULE ?? "echo";
const OUT = process.env.BENCH_PROFILE_OUT ?? join(tmpdir(), `beaver-${RULE}.cpuprofile`);

/** Copies the bundle wrangler dev is running (and its source map) before `stop` removes it. */
function keepBundle(): string | null {
  // wrangler keeps its build under the config's folder (bench/.wrangler/tmp/dev-*).
  const dirs = [resolve(import.meta.dirname, ".wrangler/tmp"), resolve(import.meta.dirname, "../.wrangler/tmp")]
    .filter((tmp) => existsSync(tmp))
    .flatMap((tmp) => readdirSync(tmp).map((d) => join(tmp, d)))
    .filter((d) => d.includes("/dev-") && existsSync(join(d, "index.js.map")))
    .sort((a, b) => statSync(b).mtimeMs - statSync(a).mtimeMs);
  if (dirs.length === 0) return null;
  const keep = mkdtempSync(join(tmpdir(), "beaver-profile-"));
  copyFileSync(join(dirs[0]!, "index.js.map"), join(keep, "index.js.map"));
  copyFileSync(join(dirs[0]!, "index.js"), join(keep, "index.js"));
  return join(keep, "index.js.map");
}

/** Maps bundle positions back to source files and lines. */
function sourceMapper(mapFile: string | null): (line: number, column: number) => { file: string; line: number } | null {
  if (!mapFile) return () => null;
  const consumer = new SourceMapConsumer(JSON.parse(readFileSync(mapFile, "utf8")) as RawSourceMap);
  return (line, column) => {
    const pos = consumer.originalPositionFor({ line: line + 1, column });
    return pos.source ? { file: pos.source.replace(/^.*?(node_modules\/|src\/|bench\/)/, "$1"), line: pos.line } : null;
  };
}

function summarise(profile: CpuProfile, wallMs: number, turns: number, mapFile: string | null): void {
  const mapped = sourceMapper(mapFile);
  const where = (f: ProfileNode["callFrame"]) => {
    const m = f.url.endsWith("index.js") ? mapped(f.lineNumber, f.columnNumber) : null;
    return m ? { file: m.file, line: m.line } : { file: f.url, line: f.lineNumber + 1 };
  };
  const fnSelf = new Map<string, number>();
  const fileTotal = new Map<string, number>();
  let busy = 0;
  for (const { leaf, stack, ms } of busySamples(profile)) {
    const { functionName } = leaf.callFrame;
    if (functionName === "(program)") continue;
    busy += ms;
    const at = where(leaf.callFrame);
    const key = `${functionName || "(anonymous)"} ${at.file}:${at.line}`;
    fnSelf.set(key, (fnSelf.get(key) ?? 0) + ms);
    // Total per file: count a sample once per distinct file on its stack.
    const seen = new Set<string>();
    for (const node of stack) {
      const f = where(node.callFrame).file.replace(/^(node_modules\/(@[^/]+\/)?[^/]+).*$/, "$1");
      if (f && !seen.has(f)) {
        seen.add(f);
        fileTotal.set(f, (fileTotal.get(f) ?? 0) + ms);
      }
    }
  }
  const per = (ms: number) => `${(ms / turns).toFixed(2)} ms/turn`;
  console.log(`\n${turns} turns (${RULE}) in ${wallMs.toFixed(0)} ms wall: ${per(wallMs)}; Worker CPU ${per(busy)}`);
  console.log("\nself time, top functions:");
  for (const [k, v] of [...fnSelf].sort((a, b) => b[1] - a[1]).slice(0, 35)) console.log(`  ${per(v).padStart(16)}  ${k}`);
  console.log("\ntotal time by file or package (on the stack):");
  for (const [k, v] of [...fileTotal].sort((a, b) => b[1] - a[1]).slice(0, 40)) console.log(`  ${per(v).padStart(16)}  ${k}`);
}

export async function run(): Promise<void> {
  const model = await startScriptedModelServer();
  const dev = await startBenchWorker();
  try {
    const call = benchClient(dev);
    let turn: (i: number) => Promise<unknown>;
    if (RULE === "webhooks") {
      const { id } = await intakeWorkspace(dev, call);
      turn = async (i) => {
        const res = await postDelivery(dev, id, { ...uniqueDelivery(i), id: `profile-${i}` });
        if (res.status !== 202) throw new Error(`delivery: ${res.status} ${await res.text()}`);
      };
    } else if (RULE === "write_file" || RULE === "echo_call") {
      // The workspace bench's turns (bench/workspace.ts): one scripted tool call, then a text.
      const { token } = await benchWorkspace(dev, call);
      const models = scriptedModelClient(model.url);
      const modelId = `script:profile-${RULE}`;
      await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: modelId, base_url: model.baseUrl } });
      const session = ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
      const step = (i: number): ScriptedStep =>
        RULE === "echo_call"
          ? { tool_calls: [{ name: "echo", arguments: { text: "x" } }] }
          : {
              tool_calls: [
                { name: "write_file", arguments: { path: `src/dir${i % 5}/file${i}.ts`, content: `export const v = ${i};\n`.repeat(50) } },
              ],
            };
      turn = async (i) => {
        await models.script(modelId, [step(i), { text: "ok" }]);
        const body = (await (
          await call("POST", `/api/sessions/${session}/messages?wait=true`, token, { content: `profile turn ${i}`, toolset: "code" })
        ).json()) as { status: string };
        if (body.status !== "completed") throw new Error(`turn ended ${body.status}`);
      };
    } else {
      const { token } = await benchWorkspace(dev, call);
      await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: `${RULE}:profile`, base_url: model.baseUrl } });
      const session = ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
      turn = (i) =>
        call("POST", `/api/sessions/${session}/messages?wait=true`, token, { content: `profile turn ${i}` }).then((r) => r.json());
    }
    for (let i = 0; i < 10; i++) await turn(100_000 + i);
    const devtools = await inspector(dev.inspectorPort);
    await devtools.send("Profiler.enable");
    await devtools.send("Profiler.setSamplingInterval", { interval: 100 });
    await devtools.send("Profiler.start");
    const t0 = performance.now();
    for (let i = 0; i < TURNS; i++) await turn(i);
    const wall = performance.now() - t0;
    const mapFile = keepBundle();
    const { profile } = await devtools.send<{ profile: CpuProfile }>("Profiler.stop");
    devtools.close();
    writeFileSync(OUT, JSON.stringify(profile));
    summarise(profile, wall, TURNS, mapFile);
    console.log(`\nprofile: ${OUT}`);
  } finally {
    await dev.stop();
    await model.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
