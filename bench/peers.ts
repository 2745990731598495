/**
 * `npm run bench:peers`: Beaver's per-turn overhead side by side with Cloudflare's own agent SDK
 * (issue 14; docs/performance.md). Both run on `wrangler dev` on this machine against one scripted
 * OpenAI-compatible model with no latency:
 *
 * - the peer (bench/peers/cf-agents: an `AIChatAgent` turn, and the floor — one Worker → DO call with
 *   two storage writes), its dependencies installed into its own folder on first use;
 * - Beaver (bench/wrangler.toml: the production Worker plus bench-only routes).
 *
 * Interleaved rounds — floor, CF Agents, Beaver, then the streamed variants — for no-tool, one-tool
 * and three-tool turns, each kind on one session (one agent name) whose history grows. A turn is what
 * a client does: POST the message and read the final answer (Beaver: `POST /api/sessions/:id/messages
 * ?wait=true`; the peer: `POST /turn/:name`). Streamed turns time the first text frame: Beaver's SSE
 * `text_delta` (same endpoint, `Accept: text/event-stream`) beside the peer's first UI-stream
 * `text-delta` chunk (`POST /stream/:name`, a route added to the copy). Then webhook intake against
 * `GET /api/ping`, 16 in flight, interleaved in batches.
 *
 * Env: BENCH_PEERS_TURNS (80 per cell), BENCH_PEERS_WARMUP (5), BENCH_PEERS_WEBHOOKS (320),
 * BENCH_PEERS_KINDS (e.g. `none,three`), BENCH_DEBUG (print wrangler output), BENCH_PEERS_BASELINE
 * (another checkout of Beaver, with its node_modules: its bench Worker runs too, in the same rounds,
 * so a before/after comparison shares one machine load — docs/performance.md).
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { freePort, type DevServer } from "../test/support/wrangler-dev.ts";
import { benchClient, benchWorkspace, startBenchWorker } from "./support.ts";
import type * as SupportModule from "./support.ts";
import { intakeWorkspace, postDelivery, uniqueDelivery } from "./webhooks.ts";
import { groupCpuMeter, type CpuMeter } from "./cpu.ts";

const TURNS = Number(process.env.BENCH_PEERS_TURNS ?? 80);
const WARM_UP = Number(process.env.BENCH_PEERS_WARMUP ?? 5);
const WEBHOOKS = Number(process.env.BENCH_PEERS_WEBHOOKS ?? 320);
const IN_FLIGHT = 16;
const PEER_DIR = resolve(import.meta.dirname, "peers/cf-agents");

interface Kind {
  key: string;
  label: string;
  /** The scripted model rule (test/support/scripted-openai.ts). */
  rule: string;
  /** The final answer's text, to check both sides really ran the turn. */
  answer: (user: string) => string;
}

const ALL_KINDS: Kind[] = [
  { key: "none", label: "no tool", rule: "echo", answer: (u) => `echo: ${u}` },
  { key: "one", label: "one tool call", rule: "tools-1", answer: () => "done after 1 tool calls" },
  { key: "three", label: "three tool calls", rule: "tools-3", answer: () => "done after 3 tool calls" },
];

interface Peer {
  url: string;
  /** wrangler's process id and process group (bench/cpu.ts). */
  pid: number;
  stop(): Promise<void>;
  output(): string;
}

/** Installs the peer's own dependencies once (its README: `npm install`, not `npm ci`). */
function installPeer(): void {
  if (existsSync(join(PEER_DIR, "node_modules", ".bin", "wrangler"))) return;
  console.log("installing the peer's dependencies into bench/peers/cf-agents/node_modules (npm install) …");
  execFileSync("npm", ["install", "--no-audit", "--no-fund"], { cwd: PEER_DIR, stdio: "inherit" });
}

/** `wrangler dev` of the peer worker, with its own wrangler, pointed at the scripted model. */
async function startPeer(modelBaseUrl: string): Promise<Peer> {
  installPeer();
  const persist = mkdtempSync(join(tmpdir(), "beaver-peer-"));
  const port = await freePort();
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist];
  args.push("--inspector-port", String(await freePort()), "--show-interactive-dev-session=false", "--log-level", "warn");
  args.push("--var", `LLM_URL:${modelBaseUrl}`);
  const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  const child: ChildProcess = spawn(join(PEER_DIR, "node_modules", ".bin", "wrangler"), args, {
    cwd: PEER_DIR,
    env,
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  let log = "";
  child.stdout?.on("data", (d: Buffer) => (log += d.toString()));
  child.stderr?.on("data", (d: Buffer) => (log += d.toString()));
  const url = `http://127.0.0.1:${port}`;
  const deadline = Date.now() + 120_000;
  for (;;) {
    if (child.exitCode !== null) throw new Error(`peer wrangler dev exited (${child.exitCode}):\n${log}`);
    try {
      if ((await fetch(`${url}/floor/ready`, { method: "POST", body: "x" })).ok) break;
    } catch {
      // not listening yet
    }
    if (Date.now() > deadline) throw new Error(`peer wrangler dev did not become ready:\n${log}`);
    await new Promise((r) => setTimeout(r, 250));
  }
  return {
    url,
    pid: child.pid ?? -1,
    output: () => log,
    async stop() {
      if (child.pid !== undefined && child.exitCode === null) process.kill(-child.pid, "SIGTERM");
      await new Promise((r) => setTimeout(r, 300));
      rmSync(persist, { recursive: true, force: true });
    },
  };
}

/** Reads an SSE body; resolves the ms from `t0` to the first frame `isText` accepts, then drains it. */
async function firstFrameMs(res: Response, t0: number, isText: (data: string) => boolean): Promise<{ first: number; all: string[] }> {
  const reader = res.body!.getReader();
  const decoder = new TextDecoder();
  let buffer = "";
  let first = NaN;
  const all: string[] = [];
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += decoder.decode(value, { stream: true });
    let idx: number;
    while ((idx = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, idx);
      buffer = buffer.slice(idx + 2);
      const data = block
        .split("\n")
        .filter((l) => l.startsWith("data:"))
        .map((l) => l.slice(5).trimStart())
        .join("\n");
      if (!data) continue;
      all.push(data);
      if (Number.isNaN(first) && isText(data)) first = performance.now() - t0;
    }
  }
  return { first, all };
}

type BenchSupport = Pick<typeof SupportModule, "startBenchWorker" | "benchClient" | "benchWorkspace">;

/**
 * One Beaver's side of the rounds: a workspace per kind (its config names the scripted rule) and, per
 * kind, one session for waited turns and one for streamed turns, each with its history growing.
 */
async function beaverTurns(support: BenchSupport, dev: DevServer, kinds: Kind[], modelBaseUrl: string) {
  const call = support.benchClient(dev);
  const sessions = new Map<string, { token: string; waitSession: string; streamSession: string }>();
  for (const k of kinds) {
    const { token } = await support.benchWorkspace(dev, call);
    await call("PUT", "/api/config", token, { model: { provider: "openai-compatible", id: `${k.rule}:peers`, base_url: modelBaseUrl } });
    const session = async () => ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;
    sessions.set(k.key, { token, waitSession: await session(), streamSession: await session() });
  }
  return {
    /** A turn as a client takes it: POST the message with ?wait=true, read the final answer. */
    async turn(k: Kind, text: string): Promise<void> {
      const b = sessions.get(k.key)!;
      const res = await call("POST", `/api/sessions/${b.waitSession}/messages?wait=true`, b.token, { content: text });
      const r = (await res.json()) as { status: string; output_text: string };
      if (r.status !== "completed" || r.output_text !== k.answer(text)) throw new Error(`Beaver turn: ${JSON.stringify(r)}`);
    },
    /** The same turn streamed (Accept: text/event-stream): ms from `t0` to the first text_delta frame. */
    async stream(k: Kind, text: string, t0: number): Promise<number> {
      const b = sessions.get(k.key)!;
      const res = await fetch(`${dev.url}/api/sessions/${b.streamSession}/messages`, {
        method: "POST",
        headers: { Authorization: `Bearer ${b.token}`, "Content-Type": "application/json", Accept: "text/event-stream" },
        body: JSON.stringify({ content: text }),
      });
      if (!res.ok) throw new Error(`Beaver stream: ${res.status} ${await res.text()}`);
      const { first, all } = await firstFrameMs(res, t0, (d) => d.includes('"type":"text_delta"'));
      if (Number.isNaN(first)) throw new Error("Beaver stream: no text_delta frame");
      if (!all.some((d) => d.includes('"runtime_end"') && d.includes('"completed"')))
        throw new Error("Beaver stream: no completed runtime_end");
      return first;
    },
  };
}

function percentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? NaN;
}

const ms = (v: number) => `${v.toFixed(1)} ms`;
const pad = (s: string, n: number) => s.padEnd(n);

export async function run(): Promise<void> {
  const kinds = process.env.BENCH_PEERS_KINDS
    ? ALL_KINDS.filter((k) => process.env.BENCH_PEERS_KINDS!.split(",").includes(k.key))
    : ALL_KINDS;
  const load0 = loadavg();
  const model = await startScriptedModelServer();
  const baselineDir = process.env.BENCH_PEERS_BASELINE;
  const baselineSupport = baselineDir ? ((await import(resolve(baselineDir, "bench/support.ts"))) as BenchSupport) : null;
  const [peer, dev, baseDev] = await Promise.all([
    startPeer(model.baseUrl),
    startBenchWorker(),
    baselineSupport ? baselineSupport.startBenchWorker() : Promise.resolve(null),
  ]);
  try {
    const beaver = await beaverTurns({ startBenchWorker, benchClient, benchWorkspace }, dev, kinds, model.baseUrl);
    const baseline = baselineSupport && baseDev ? await beaverTurns(baselineSupport, baseDev, kinds, model.baseUrl) : null;

    const tag = Math.random().toString(36).slice(2, 8);
    const ops = (k: Kind) => {
      const modelId = `${k.rule}:peers`;
      return {
        floor: async () => {
          const res = await fetch(`${peer.url}/floor/${k.key}-${tag}`, { method: "POST", body: "floor" });
          if (!res.ok) throw new Error(`floor: ${res.status}`);
          await res.arrayBuffer();
        },
        cf: async (text: string) => {
          const res = await fetch(`${peer.url}/turn/${k.key}-${tag}?model=${encodeURIComponent(modelId)}`, { method: "POST", body: text });
          if (!res.ok) throw new Error(`peer turn: ${res.status} ${await res.text()}`);
          const out = ((await res.json()) as { output_text: string }).output_text;
          if (out !== k.answer(text)) throw new Error(`peer turn answered ${JSON.stringify(out)}`);
        },
        beaver: (text: string) => beaver.turn(k, text),
        baseline: (text: string) => baseline!.turn(k, text),
        cfStream: async (text: string, t0: number) => {
          const res = await fetch(`${peer.url}/stream/${k.key}-${tag}?model=${encodeURIComponent(modelId)}`, {
            method: "POST",
            body: text,
          });
          if (!res.ok) throw new Error(`peer stream: ${res.status}`);
          const { first } = await firstFrameMs(res, t0, (d) => d.includes('"type":"text-delta"'));
          if (Number.isNaN(first)) throw new Error("peer stream: no text-delta chunk");
          return first;
        },
        beaverStream: (text: string, t0: number) => beaver.stream(k, text, t0),
        baselineStream: (text: string, t0: number) => baseline!.stream(k, text, t0),
      };
    };

    type Cell = {
      floor: number[];
      cf: number[];
      beaver: number[];
      cfFirst: number[];
      beaverFirst: number[];
      baseline: number[];
      baselineFirst: number[];
      /** CPU ms of each side's process group (bench/cpu.ts) over the rounds: floor calls, CF Agents' two turns, Beaver's two, the baseline's two. */
      cpu: { floor: number; cf: number; beaver: number; baseline: number };
    };
    const cells = new Map<string, Cell>(
      kinds.map((k) => [
        k.key,
        {
          floor: [],
          cf: [],
          beaver: [],
          cfFirst: [],
          beaverFirst: [],
          baseline: [],
          baselineFirst: [],
          cpu: { floor: 0, cf: 0, beaver: 0, baseline: 0 },
        },
      ]),
    );
    const time = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    // CPU per side: each wrangler dev is its own process group, serving only its side's requests.
    const meters = { peer: groupCpuMeter(peer.pid), beaver: groupCpuMeter(dev.pid), baseline: baseDev ? groupCpuMeter(baseDev.pid) : null };
    const reading = (m: CpuMeter | null) => m?.read() ?? NaN;
    const started = performance.now();
    for (let round = -WARM_UP; round < TURNS; round++) {
      for (const k of kinds) {
        const o = ops(k);
        const text = `peers turn ${round + WARM_UP}`;
        const cpu0 = { peer: reading(meters.peer), beaver: reading(meters.beaver), baseline: reading(meters.baseline) };
        const floor = await time(o.floor);
        const cpuFloor = reading(meters.peer);
        const cf = await time(() => o.cf(text));
        // With a baseline tree, the two Beavers take turns going first (what one leaves running in the
        // background, such as replication, then weighs on each equally).
        const swap = baseline !== null && round % 2 !== 0;
        let base = NaN;
        if (swap) base = await time(() => o.baseline(text));
        const bv = await time(() => o.beaver(text));
        if (baseline && !swap) base = await time(() => o.baseline(text));
        const cfFirst = await o.cfStream(text, performance.now());
        let baseFirst = NaN;
        if (swap) baseFirst = await o.baselineStream(text, performance.now());
        const beaverFirst = await o.beaverStream(text, performance.now());
        if (baseline && !swap) baseFirst = await o.baselineStream(text, performance.now());
        if (round < 0) continue;
        const c = cells.get(k.key)!;
        c.cpu.floor += cpuFloor - cpu0.peer;
        c.cpu.cf += reading(meters.peer) - cpuFloor;
        c.cpu.beaver += reading(meters.beaver) - cpu0.beaver;
        c.cpu.baseline += reading(meters.baseline) - cpu0.baseline;
        c.baseline.push(base);
        c.baselineFirst.push(baseFirst);
        c.floor.push(floor);
        c.cf.push(cf);
        c.beaver.push(bv);
        c.cfFirst.push(cfFirst);
        c.beaverFirst.push(beaverFirst);
      }
    }
    const turnSeconds = (performance.now() - started) / 1000;

    // Webhook intake vs GET /api/ping, 16 in flight, interleaved in batches of 4 × IN_FLIGHT; with a
    // baseline tree, its intake and ping run in the same batches.
    const intakeOf = async (target: DevServer) => {
      const { id: ws } = await intakeWorkspace(target, benchClient(target));
      return {
        deliver: (i: number) => {
          const d = uniqueDelivery(i);
          return postDelivery(target, ws, { ...d, id: `${d.id}-${tag}` });
        },
        ping: () => fetch(`${target.url}/api/ping`),
      };
    };
    const { deliver, ping } = await intakeOf(dev);
    const base = baseDev ? await intakeOf(baseDev) : null;
    const hookCpu = { ping: 0, deliver: 0, basePing: 0, baseDeliver: 0 };
    /** Runs `f` and adds the CPU `meter`'s group spent meanwhile to `hookCpu[key]`. */
    const metered = async (meter: CpuMeter | null, key: keyof typeof hookCpu, f: () => Promise<void>) => {
      const before = reading(meter);
      await f();
      hookCpu[key] += reading(meter) - before;
    };
    const burst = async (n: number, offset: number, send: (i: number) => Promise<Response>, out: number[] | null) => {
      let next = 0;
      await Promise.all(
        Array.from({ length: IN_FLIGHT }, async () => {
          for (;;) {
            const i = next++;
            if (i >= n) return;
            const t0 = performance.now();
            const res = await send(offset + i);
            await res.arrayBuffer();
            if (res.status >= 300) throw new Error(`webhook/ping answered ${res.status}`);
            out?.push(performance.now() - t0);
          }
        }),
      );
    };
    await burst(IN_FLIGHT * 2, 0, ping, null);
    await burst(IN_FLIGHT * 2, 100_000, deliver, null);
    if (base) {
      await burst(IN_FLIGHT * 2, 0, base.ping, null);
      await burst(IN_FLIGHT * 2, 100_000, base.deliver, null);
    }
    const pingMs: number[] = [];
    const hookMs: number[] = [];
    const basePingMs: number[] = [];
    const baseHookMs: number[] = [];
    const batch = IN_FLIGHT * 4;
    for (let done = 0; done < WEBHOOKS; done += batch) {
      const n = Math.min(batch, WEBHOOKS - done);
      const mine = async () => {
        await metered(meters.beaver, "ping", () => burst(n, done, ping, pingMs));
        await metered(meters.beaver, "deliver", () => burst(n, done, deliver, hookMs));
      };
      const theirs = async () => {
        if (!base) return;
        await metered(meters.baseline, "basePing", () => burst(n, done, base.ping, basePingMs));
        await metered(meters.baseline, "baseDeliver", () => burst(n, done, base.deliver, baseHookMs));
      };
      // Each tree goes first in every other batch.
      if ((done / batch) % 2 === 0) await mine().then(theirs);
      else await theirs().then(mine);
    }
    const load1 = loadavg();

    // ---- report ----------------------------------------------------------------------------------
    console.log(
      `wrangler dev, scripted model (no latency); ${TURNS} interleaved turns per cell after ${WARM_UP} warm-up rounds (${turnSeconds.toFixed(0)} s);` +
        ` ${cpus().length} cores, load average ${load0[0]!.toFixed(2)} before, ${load1[0]!.toFixed(2)} after`,
    );
    console.log("\nTurn: POST a message, read the final answer (history grows on one session per cell). p50 / p95:");
    const w = [18, 22, 22, 22, 18, 18];
    console.log(
      pad("turn", w[0]!) +
        pad("floor (DO, 2 writes)", w[1]!) +
        pad("CF Agents", w[2]!) +
        pad("Beaver", w[3]!) +
        pad("p50 Beaver/CF", w[4]!) +
        pad("p95 Beaver/CF", w[5]!) +
        "Beaver p95 / CF p50",
    );
    const pair = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 95).toFixed(1)}`;
    for (const k of kinds) {
      const c = cells.get(k.key)!;
      console.log(
        pad(k.label, w[0]!) +
          pad(pair(c.floor), w[1]!) +
          pad(pair(c.cf), w[2]!) +
          pad(pair(c.beaver), w[3]!) +
          pad((percentile(c.beaver, 50) / percentile(c.cf, 50)).toFixed(2), w[4]!) +
          pad((percentile(c.beaver, 95) / percentile(c.cf, 95)).toFixed(2), w[5]!) +
          (percentile(c.beaver, 95) / percentile(c.cf, 50)).toFixed(2),
      );
    }
    console.log(
      "\nTime to first streamed text (Beaver: SSE text_delta frame; CF Agents: UI-stream text-delta chunk on the added /stream route). p50 / p95:",
    );
    console.log(pad("turn", w[0]!) + pad("CF Agents", w[2]!) + pad("Beaver", w[3]!) + "p50 Beaver/CF");
    for (const k of kinds) {
      const c = cells.get(k.key)!;
      console.log(
        pad(k.label, w[0]!) +
          pad(pair(c.cfFirst), w[2]!) +
          pad(pair(c.beaverFirst), w[3]!) +
          (percentile(c.beaverFirst, 50) / percentile(c.cfFirst, 50)).toFixed(2),
      );
    }
    if (meters.peer && meters.beaver) {
      console.log(
        "\nCPU per turn: user + system time of each side's wrangler dev (its proxy in Node, workerd with the Worker, Durable Objects and D1),\n" +
          "a waited and a streamed turn per round, so the load on the machine does not move it (bench/cpu.ts). ms per turn:",
      );
      console.log(
        pad("turn", w[0]!) +
          pad("floor call", w[1]!) +
          pad("CF Agents", w[2]!) +
          pad("Beaver", w[3]!) +
          pad("Beaver/CF", w[4]!) +
          (meters.baseline ? "baseline" : ""),
      );
      for (const k of kinds) {
        const c = cells.get(k.key)!.cpu;
        const n = TURNS;
        console.log(
          pad(k.label, w[0]!) +
            pad((c.floor / n).toFixed(1), w[1]!) +
            pad((c.cf / (2 * n)).toFixed(1), w[2]!) +
            pad((c.beaver / (2 * n)).toFixed(1), w[3]!) +
            pad((c.beaver / c.cf).toFixed(2), w[4]!) +
            // A baseline tree older than bench/cpu.ts does not report wrangler's pid: no column then.
            (meters.baseline ? `${(c.baseline / (2 * n)).toFixed(1)} (this/baseline ${(c.beaver / c.baseline).toFixed(2)})` : ""),
        );
      }
    }
    if (baseline) {
      console.log(`\nThis tree beside the baseline tree (${baselineDir}), same rounds. p50 / p95 (and p50 now/baseline):`);
      console.log(
        pad("turn", w[0]!) +
          pad("baseline turn", w[2]!) +
          pad("this tree turn", w[3]!) +
          pad("p50 ratio", w[4]!) +
          pad("baseline first text", 22) +
          pad("this first text", 22) +
          "p50 ratio",
      );
      for (const k of kinds) {
        const c = cells.get(k.key)!;
        console.log(
          pad(k.label, w[0]!) +
            pad(pair(c.baseline), w[2]!) +
            pad(pair(c.beaver), w[3]!) +
            pad((percentile(c.beaver, 50) / percentile(c.baseline, 50)).toFixed(2), w[4]!) +
            pad(pair(c.baselineFirst), 22) +
            pad(pair(c.beaverFirst), 22) +
            (percentile(c.beaverFirst, 50) / percentile(c.baselineFirst, 50)).toFixed(2),
        );
      }
      console.log(
        `Baseline / CF Agents p50: ${kinds.map((k) => `${k.label} ${(percentile(cells.get(k.key)!.baseline, 50) / percentile(cells.get(k.key)!.cf, 50)).toFixed(2)}`).join(", ")}`,
      );
    }
    console.log(`\nWebhook intake, ${IN_FLIGHT} in flight, ${WEBHOOKS} signed unique deliveries interleaved with as many pings:`);
    const intakeReport = (pings: number[], hooks: number[], cpu: { ping: number; deliver: number } | null) => {
      console.log(`GET /api/ping          p50 ${ms(percentile(pings, 50))}  p95 ${ms(percentile(pings, 95))}`);
      console.log(
        `POST /webhooks/gitea   p50 ${ms(percentile(hooks, 50))}  p95 ${ms(percentile(hooks, 95))}  (×${(percentile(hooks, 50) / percentile(pings, 50)).toFixed(2)} p50 vs ping)`,
      );
      if (cpu)
        console.log(
          `CPU (wrangler dev's processes) per ping ${(cpu.ping / WEBHOOKS).toFixed(1)} ms, per delivery ${(cpu.deliver / WEBHOOKS).toFixed(1)} ms`,
        );
    };
    intakeReport(pingMs, hookMs, meters.beaver ? hookCpu : null);
    if (base) {
      console.log(`baseline tree, same batches:`);
      intakeReport(basePingMs, baseHookMs, meters.baseline ? { ping: hookCpu.basePing, deliver: hookCpu.baseDeliver } : null);
    }
  } finally {
    if (process.env.BENCH_DEBUG) console.log(dev.output(), peer.output());
    await Promise.all([dev.stop(), peer.stop(), baseDev?.stop()]);
    await model.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
