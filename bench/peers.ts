/**
 * `npm run bench:peers`: Beaver's per-turn overhead side by side with Cloudflare's own agent SDK
 * (issue 14; docs/performance.md). Both run on `wrangler dev` on this machine against one scripted
 * OpenAI-compatible model with no latency:
 *
 * - the peer (bench/peers/cf-agents: an `AIChatAgent` turn; the floor — one Worker → DO call with
 *   two storage writes; and the floor plus the model — that call making the same `streamText` call
 *   over its history, with nothing else), its dependencies installed into its own folder on first use;
 * - Beaver on the shipped configuration: wrangler.toml itself (assets, observability, rate-limit
 *   bindings) with only the rate limits raised (bench/shipped-config.ts, generated at run time), driven
 *   from outside only: a session created through the API, the model configured with `api_key_secret`.
 *
 * Interleaved rounds — floor, floor + model, CF Agents, Beaver, then the streamed variants — for
 * no-tool, one-tool and three-tool turns, each kind on one session (one agent name) whose history
 * grows. A turn is what a client does: POST the message and read the final answer (Beaver: `POST
 * /api/sessions/:id/messages?wait=true`; the peer: `POST /turn/:name`). Streamed turns time the first text frame: Beaver's SSE
 * `text_delta` (same endpoint, `Accept: text/event-stream`) beside the peer's first UI-stream
 * `text-delta` chunk (`POST /stream/:name`, a route added to the copy). Then webhook intake against
 * `GET /api/ping` and the peer's minimal receiver (HMAC check, one D1 insert), 16 in flight,
 * interleaved in batches; each side's Worker startup (`wrangler check startup`) and bundle size; and a
 * turn on a session holding 5,000 events against one on a fresh session, interleaved.
 *
 * Env: BENCH_PEERS_TURNS (80 per cell), BENCH_PEERS_WARMUP (5), BENCH_PEERS_WEBHOOKS (320),
 * BENCH_PEERS_KINDS (e.g. `none,three`), BENCH_DEBUG (print wrangler output), BENCH_PEERS_BASELINE
 * (another checkout of Beaver, with its node_modules: its shipped wrangler.toml runs too, in the same
 * rounds, so a before/after comparison shares one machine load — docs/performance.md),
 * BENCH_PEERS_CONFIGS (extra configuration variants of this tree in the same rounds, e.g.
 * `bare,no-assets,no-ratelimits`: bench/shipped-config.ts), BENCH_PEERS_BIG_EVENTS (5000; 0 skips
 * the long-session cell), BENCH_PEERS_STARTUP=0 (skips startup and bundle figures), BENCH_PEERS_STARTUP_RUNS
 * (5 startup profiles per side, alternating; the medians are printed).
 */
import { spawn, execFileSync, type ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { performance } from "node:perf_hooks";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { freePort, startWranglerDev, type DevServer, type StartOptions } from "../test/support/wrangler-dev.ts";
import { benchClient, benchWorkspace, type BenchCall } from "./support.ts";
import { intakeWorkspace, postDelivery, uniqueDelivery, WEBHOOK_SECRET } from "./webhooks.ts";
import { groupCpuMeter, type CpuMeter } from "./cpu.ts";
import { CONFIG_VARIANTS, writeBenchConfig, type ConfigVariant } from "./shipped-config.ts";
import { bundleSize, startupProfile } from "./startup.ts";

const TURNS = Number(process.env.BENCH_PEERS_TURNS ?? 80);
const WARM_UP = Number(process.env.BENCH_PEERS_WARMUP ?? 5);
const WEBHOOKS = Number(process.env.BENCH_PEERS_WEBHOOKS ?? 320);
const STARTUP_RUNS = Math.max(1, Number(process.env.BENCH_PEERS_STARTUP_RUNS ?? 5));
const BIG_EVENTS = Number(process.env.BENCH_PEERS_BIG_EVENTS ?? 5000);
const IN_FLIGHT = 16;
const ROOT = resolve(import.meta.dirname, "..");
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
  const wrangler = join(PEER_DIR, "node_modules", ".bin", "wrangler");
  const env = { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false", NO_COLOR: "1" };
  execFileSync(wrangler, ["d1", "migrations", "apply", "DB", "--local", "--persist-to", persist], { cwd: PEER_DIR, env, stdio: "pipe" });
  const port = await freePort();
  const args = ["dev", "--ip", "127.0.0.1", "--port", String(port), "--persist-to", persist];
  args.push("--inspector-port", String(await freePort()), "--show-interactive-dev-session=false", "--log-level", "warn");
  args.push("--var", `LLM_URL:${modelBaseUrl}`, "--var", `WEBHOOK_SECRET:${WEBHOOK_SECRET}`);
  const child: ChildProcess = spawn(wrangler, args, {
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

/** One Beaver under test: this tree on a configuration variant, or another tree (BENCH_PEERS_BASELINE) on its shipped config. */
interface Side {
  label: string;
  dev: DevServer;
  cpu: CpuMeter | null;
}

/** Starts `wrangler dev` of `root`'s generated config (`variant` of its wrangler.toml), with `root`'s own wrangler-dev helper. */
async function startSide(root: string, variant: ConfigVariant, label: string): Promise<Side> {
  // `root`'s own wrangler.toml (this tree's, or a baseline's), through this tree's generator.
  const config = writeBenchConfig(variant, root);
  const start =
    root === ROOT
      ? startWranglerDev
      : ((await import(resolve(root, "test/support/wrangler-dev.ts"))) as { startWranglerDev: (o: StartOptions) => Promise<DevServer> })
          .startWranglerDev;
  const dev = await start({ config, timeoutMs: 240_000 });
  return { label, dev, cpu: groupCpuMeter(dev.pid) };
}

/** The model's API key secret, as users configure a hosted model (the scripted server ignores its value). */
const MODEL_KEY_SECRET = "BENCH_MODEL_KEY";

/** A workspace whose config names the scripted rule through `api_key_secret`; returns its token. */
async function modelWorkspace(dev: DevServer, call: BenchCall, rule: string, modelBaseUrl: string): Promise<string> {
  const { token } = await benchWorkspace(dev, call);
  await call("PUT", `/api/secrets/${MODEL_KEY_SECRET}`, token, { value: "sk-bench-0123456789" });
  await call("PUT", "/api/config", token, {
    model: { provider: "openai-compatible", id: `${rule}:peers`, base_url: modelBaseUrl, api_key_secret: MODEL_KEY_SECRET },
  });
  return token;
}

const newSession = async (call: BenchCall, token: string) =>
  ((await (await call("POST", "/api/sessions", token, {})).json()) as { id: string }).id;

/** A turn as a client takes it: POST the message with ?wait=true, read the final answer. */
async function waitedTurn(call: BenchCall, token: string, session: string, text: string, expected: string): Promise<void> {
  const res = await call("POST", `/api/sessions/${session}/messages?wait=true`, token, { content: text });
  const r = (await res.json()) as { status: string; output_text: string };
  if (r.status !== "completed" || r.output_text !== expected) throw new Error(`Beaver turn: ${JSON.stringify(r)}`);
}

/**
 * One Beaver's side of the rounds: a workspace per kind (its config names the scripted rule) and, per
 * kind, one session for waited turns and one for streamed turns, each with its history growing.
 */
async function beaverTurns(dev: DevServer, kinds: Kind[], modelBaseUrl: string) {
  const call = benchClient(dev);
  const sessions = new Map<string, { token: string; waitSession: string; streamSession: string }>();
  for (const k of kinds) {
    const token = await modelWorkspace(dev, call, k.rule, modelBaseUrl);
    sessions.set(k.key, { token, waitSession: await newSession(call, token), streamSession: await newSession(call, token) });
  }
  return {
    async turn(k: Kind, text: string): Promise<void> {
      const b = sessions.get(k.key)!;
      await waitedTurn(call, b.token, b.waitSession, text, k.answer(text));
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
const pair = (xs: number[]) => `${percentile(xs, 50).toFixed(1)} / ${percentile(xs, 95).toFixed(1)}`;
const ratio = (a: number[], b: number[], p = 50) => (percentile(a, p) / percentile(b, p)).toFixed(2);

/** Posts one signed delivery to the peer's minimal receiver (the same body and headers Beaver gets). */
function postToPeer(url: string, d: { id: string; eventType: string; body: string }): Promise<Response> {
  return fetch(`${url}/webhook/bench`, {
    method: "POST",
    headers: {
      "Content-Type": "application/json",
      "X-Gitea-Event-Type": d.eventType,
      "X-Gitea-Delivery": d.id,
      "X-Gitea-Signature": createHmac("sha256", WEBHOOK_SECRET).update(d.body).digest("hex"),
    },
    body: d.body,
  });
}

/**
 * Startup CPU and bundle size of both sides (bench/startup.ts), before any wrangler dev runs. One
 * startup profile swings by tens of milliseconds with the machine, so each side is profiled
 * `BENCH_PEERS_STARTUP_RUNS` times, the two sides alternating, and the medians are compared.
 */
function reportStartup(): void {
  console.log(
    `\nWorker startup (\`wrangler check startup\`, CPU in the startup profile, idle excluded; median of ${STARTUP_RUNS} profiles each, the sides alternating) and bundle (\`wrangler deploy --dry-run\`):`,
  );
  const sides = [
    { label: "CF Agents reference worker", wrangler: join(PEER_DIR, "node_modules", ".bin", "wrangler"), cwd: PEER_DIR },
    { label: "Beaver (wrangler.toml)", wrangler: join(ROOT, "node_modules", ".bin", "wrangler"), cwd: ROOT },
  ].map((side) => ({ ...side, startup: [] as number[], evaluation: [] as number[], failures: [] as string[] }));
  for (let i = 0; i < STARTUP_RUNS; i++) {
    for (const side of sides) {
      // `wrangler check startup` gives up after 10 s, which a loaded machine can exceed: such a profile
      // is counted as missing rather than failing the bench.
      try {
        const t = startupProfile(side.wrangler, side.cwd, "wrangler.toml");
        side.startup.push(t.startupMs);
        side.evaluation.push(t.bundleMs);
      } catch (err) {
        side.failures.push(
          String(err)
            .split("\n")
            .find((l) => l.includes("ERROR")) ?? String(err).slice(0, 200),
        );
      }
    }
  }
  const mib = (b: number) => `${(b / 2 ** 20).toFixed(2)} MiB`;
  let beaverGzip = 0;
  for (const side of sides) {
    const size = bundleSize(side.wrangler, side.cwd, "wrangler.toml");
    if (side.cwd === ROOT) beaverGzip = size.gzipBytes;
    const startup = side.startup.length
      ? `startup ${pad(ms(percentile(side.startup, 50)), 10)} (module evaluation ${pad(ms(percentile(side.evaluation, 50)), 10)}; ${side.startup.length} profiles, ${ms(Math.min(...side.startup))}–${ms(Math.max(...side.startup))})`
      : `startup not measured (${side.failures[0] ?? "no profile"})`;
    console.log(`${pad(side.label, 30)} ${startup}  bundle ${mib(size.rawBytes)} raw, ${mib(size.gzipBytes)} gzip`);
  }
  // Beaver's shell is a Worker of its own (shell/, docs/workspace.md "The shell"), started only by a session that
  // runs a command: its bundle is printed beside the main one, and the two together, so nothing is hidden by the split.
  const shell = bundleSize(sides[1]!.wrangler, ROOT, "shell/wrangler.toml");
  console.log(
    `${pad("Beaver shell (shell/)", 30)} bundle ${mib(shell.rawBytes)} raw, ${mib(shell.gzipBytes)} gzip; both Workers ${mib(beaverGzip + shell.gzipBytes)} gzip`,
  );
}

export async function run(): Promise<void> {
  const kinds = process.env.BENCH_PEERS_KINDS
    ? ALL_KINDS.filter((k) => process.env.BENCH_PEERS_KINDS!.split(",").includes(k.key))
    : ALL_KINDS;
  const variants = (process.env.BENCH_PEERS_CONFIGS ?? "").split(",").filter(Boolean) as ConfigVariant[];
  for (const v of variants)
    if (!CONFIG_VARIANTS.includes(v)) throw new Error(`BENCH_PEERS_CONFIGS: unknown variant '${v}' (${CONFIG_VARIANTS.join(", ")})`);
  installPeer();
  if (process.env.BENCH_PEERS_STARTUP !== "0") reportStartup();
  const load0 = loadavg();
  const model = await startScriptedModelServer();
  const baselineDir = process.env.BENCH_PEERS_BASELINE;
  const [peer, ...sides] = await Promise.all([
    startPeer(model.baseUrl),
    startSide(ROOT, "shipped", "Beaver"),
    ...variants.map((v) => startSide(ROOT, v, `Beaver ${v}`)),
    ...(baselineDir ? [startSide(resolve(baselineDir), "shipped", "baseline")] : []),
  ]);
  const main = sides[0]!;
  try {
    const turns = await Promise.all(sides.map((s) => beaverTurns(s.dev, kinds, model.baseUrl)));
    const tag = Math.random().toString(36).slice(2, 8);
    const modelOf = (k: Kind) => encodeURIComponent(`${k.rule}:peers`);
    const floor = async (k: Kind) => {
      const res = await fetch(`${peer.url}/floor/${k.key}-${tag}`, { method: "POST", body: "floor" });
      if (!res.ok) throw new Error(`floor: ${res.status}`);
      await res.arrayBuffer();
    };
    const modelFloor = async (k: Kind, text: string) => {
      const res = await fetch(`${peer.url}/model-floor/${k.key}-${tag}?model=${modelOf(k)}`, { method: "POST", body: text });
      if (!res.ok) throw new Error(`model floor: ${res.status} ${await res.text()}`);
      const out = ((await res.json()) as { output_text: string }).output_text;
      if (out !== k.answer(text)) throw new Error(`model floor answered ${JSON.stringify(out)}`);
    };
    const cfTurn = async (k: Kind, text: string) => {
      const res = await fetch(`${peer.url}/turn/${k.key}-${tag}?model=${modelOf(k)}`, { method: "POST", body: text });
      if (!res.ok) throw new Error(`peer turn: ${res.status} ${await res.text()}`);
      const out = ((await res.json()) as { output_text: string }).output_text;
      if (out !== k.answer(text)) throw new Error(`peer turn answered ${JSON.stringify(out)}`);
    };
    const cfStream = async (k: Kind, text: string, t0: number) => {
      const res = await fetch(`${peer.url}/stream/${k.key}-${tag}?model=${modelOf(k)}`, { method: "POST", body: text });
      if (!res.ok) throw new Error(`peer stream: ${res.status}`);
      const { first } = await firstFrameMs(res, t0, (d) => d.includes('"type":"text-delta"'));
      if (Number.isNaN(first)) throw new Error("peer stream: no text-delta chunk");
      return first;
    };

    type Cell = {
      floor: number[];
      model: number[];
      cf: number[];
      cfFirst: number[];
      turn: number[][];
      first: number[][];
      cpu: { floor: number; model: number; cf: number; sides: number[] };
    };
    const cells = new Map<string, Cell>(
      kinds.map((k) => [
        k.key,
        {
          floor: [],
          model: [],
          cf: [],
          cfFirst: [],
          turn: sides.map(() => []),
          first: sides.map(() => []),
          cpu: { floor: 0, model: 0, cf: 0, sides: sides.map(() => 0) },
        },
      ]),
    );
    const time = async (f: () => Promise<unknown>) => {
      const t0 = performance.now();
      await f();
      return performance.now() - t0;
    };
    const peerCpu = groupCpuMeter(peer.pid);
    const reading = (m: CpuMeter | null) => m?.read() ?? NaN;
    const started = performance.now();
    for (let round = -WARM_UP; round < TURNS; round++) {
      for (const k of kinds) {
        const text = `peers turn ${round + WARM_UP}`;
        const c = cells.get(k.key)!;
        const cpu0 = reading(peerCpu);
        const fl = await time(() => floor(k));
        const cpuFloor = reading(peerCpu);
        const mf = await time(() => modelFloor(k, text));
        const cpuModel = reading(peerCpu);
        const cf = await time(() => cfTurn(k, text));
        const cfFirst = await cfStream(k, text, performance.now());
        const cpuCf = reading(peerCpu);
        // The Beaver sides take turns going first (what one leaves running in the background, such as
        // replication, then weighs on each equally).
        const order = sides.map((_, i) => (((i + round) % sides.length) + sides.length) % sides.length);
        for (const i of order) {
          const before = reading(sides[i]!.cpu);
          const t = await time(() => turns[i]!.turn(k, text));
          const first = await turns[i]!.stream(k, text, performance.now());
          if (round < 0) continue;
          c.turn[i]!.push(t);
          c.first[i]!.push(first);
          c.cpu.sides[i]! += reading(sides[i]!.cpu) - before;
        }
        if (round < 0) continue;
        c.cpu.floor += cpuFloor - cpu0;
        c.cpu.model += cpuModel - cpuFloor;
        c.cpu.cf += cpuCf - cpuModel;
        c.floor.push(fl);
        c.model.push(mf);
        c.cf.push(cf);
        c.cfFirst.push(cfFirst);
      }
    }
    const turnSeconds = (performance.now() - started) / 1000;

    // ---- long session: a turn on a session holding BIG_EVENTS events against one on a fresh session ----
    let long: { fresh: number[]; big: number[]; events: number; fillSeconds: number } | null = null;
    if (BIG_EVENTS > 0) {
      const call = benchClient(main.dev);
      const token = await modelWorkspace(main.dev, call, "echo", model.baseUrl);
      const big = await newSession(call, token);
      const t0 = performance.now();
      let events = 0;
      for (let i = 0; events < BIG_EVENTS; i++) {
        await waitedTurn(call, token, big, `fill ${i}`, `echo: fill ${i}`);
        if (i % 20 === 19 || i === 0)
          events = ((await (await call("GET", `/api/sessions/${big}`, token)).json()) as { last_seq: number }).last_seq;
      }
      const fillSeconds = (performance.now() - t0) / 1000;
      const fresh = await newSession(call, token);
      long = { fresh: [], big: [], events, fillSeconds };
      for (let i = -WARM_UP; i < TURNS; i++) {
        const text = `long ${i + WARM_UP}`;
        const pairOf = [
          () => time(() => waitedTurn(call, token, fresh, text, `echo: ${text}`)),
          () => time(() => waitedTurn(call, token, big, text, `echo: ${text}`)),
        ];
        const swap = i % 2 !== 0;
        const a = await pairOf[swap ? 1 : 0]!();
        const b = await pairOf[swap ? 0 : 1]!();
        if (i < 0) continue;
        long.fresh.push(swap ? b : a);
        long.big.push(swap ? a : b);
      }
    }

    // ---- webhook intake: Beaver's intake beside the peer's minimal receiver and Beaver's ping ----------
    const intakes = await Promise.all(
      sides.map(async (s) => {
        const { id: ws } = await intakeWorkspace(s.dev, benchClient(s.dev));
        return {
          deliver: (i: number) => {
            const d = uniqueDelivery(i);
            return postDelivery(s.dev, ws, { ...d, id: `${d.id}-${tag}` });
          },
          ping: () => fetch(`${s.dev.url}/api/ping`),
        };
      }),
    );
    const receiver = (i: number) => {
      const d = uniqueDelivery(i);
      return postToPeer(peer.url, { ...d, id: `${d.id}-${tag}` });
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
    type Hook = { ms: number[]; cpu: number };
    const hook = (): Hook => ({ ms: [], cpu: 0 });
    const floorHook = hook();
    const pings = sides.map(hook);
    const hooks = sides.map(hook);
    const metered = async (meter: CpuMeter | null, into: Hook, n: number, offset: number, send: (i: number) => Promise<Response>) => {
      const before = reading(meter);
      await burst(n, offset, send, into.ms);
      into.cpu += reading(meter) - before;
    };
    await burst(IN_FLIGHT * 2, 200_000, receiver, null);
    for (const x of intakes) {
      await burst(IN_FLIGHT * 2, 0, x.ping, null);
      await burst(IN_FLIGHT * 2, 200_000, x.deliver, null);
    }
    const batch = IN_FLIGHT * 4;
    for (let done = 0, b = 0; done < WEBHOOKS; done += batch, b++) {
      const n = Math.min(batch, WEBHOOKS - done);
      // Each participant goes first in turn.
      const steps = [
        () => metered(peerCpu, floorHook, n, done, receiver),
        ...intakes.map((x, i) => async () => {
          await metered(sides[i]!.cpu, pings[i]!, n, done, x.ping);
          await metered(sides[i]!.cpu, hooks[i]!, n, done, x.deliver);
        }),
      ];
      for (let j = 0; j < steps.length; j++) await steps[(j + b) % steps.length]!();
    }
    const load1 = loadavg();

    // ---- report ----------------------------------------------------------------------------------
    console.log(
      `\nwrangler dev, scripted model (no latency); Beaver on ${sides.map((s) => s.label).join(", ")} (generated from wrangler.toml, rate limits raised);` +
        ` ${TURNS} interleaved turns per cell after ${WARM_UP} warm-up rounds (${turnSeconds.toFixed(0)} s);` +
        ` ${cpus().length} cores, load average ${load0[0]!.toFixed(2)} before, ${load1[0]!.toFixed(2)} after`,
    );
    console.log("\nTurn: POST a message, read the final answer (history grows on one session per cell). p50 / p95 ms:");
    const w = [18, 18, 18, 18];
    console.log(
      pad("turn", w[0]!) +
        pad("floor", w[1]!) +
        pad("floor + model", 28) +
        pad("CF Agents", w[2]!) +
        sides.map((s) => pad(s.label, 34)).join(""),
    );
    for (const k of kinds) {
      const c = cells.get(k.key)!;
      console.log(
        pad(k.label, w[0]!) +
          pad(pair(c.floor), w[1]!) +
          pad(`${pair(c.model)} (×${ratio(c.model, c.cf)})`, 28) +
          pad(pair(c.cf), w[2]!) +
          sides
            .map((_, i) =>
              pad(
                `${pair(c.turn[i]!)} (×${ratio(c.turn[i]!, c.cf)}, p95 ×${(percentile(c.turn[i]!, 95) / percentile(c.cf, 50)).toFixed(2)})`,
                34,
              ),
            )
            .join(""),
      );
    }
    console.log(
      "(×: p50 over CF Agents' p50; p95 ×: p95 over CF Agents' p50. floor + model: the floor's Durable Object call plus the ai SDK's streamText with the same model and tool, two storage writes, nothing else)",
    );
    console.log("\nTime to first streamed text (Beaver: SSE text_delta frame; CF Agents: UI-stream text-delta chunk). p50 / p95 ms:");
    console.log(pad("turn", w[0]!) + pad("CF Agents", w[2]!) + sides.map((s) => pad(s.label, 26)).join(""));
    for (const k of kinds) {
      const c = cells.get(k.key)!;
      console.log(
        pad(k.label, w[0]!) +
          pad(pair(c.cfFirst), w[2]!) +
          sides.map((_, i) => pad(`${pair(c.first[i]!)} (×${ratio(c.first[i]!, c.cfFirst)})`, 26)).join(""),
      );
    }
    console.log(
      "\nCPU per turn (user + system of each side's wrangler dev process group, a waited and a streamed turn per round; bench/cpu.ts), ms:",
    );
    console.log(
      pad("turn", w[0]!) +
        pad("floor call", w[1]!) +
        pad("floor + model", w[1]!) +
        pad("CF Agents", w[2]!) +
        sides.map((s) => pad(s.label, 26)).join(""),
    );
    for (const k of kinds) {
      const c = cells.get(k.key)!.cpu;
      const n = TURNS;
      console.log(
        pad(k.label, w[0]!) +
          pad((c.floor / n).toFixed(1), w[1]!) +
          pad(`${(c.model / n).toFixed(1)} (×${(c.model / (c.cf / 2)).toFixed(2)})`, w[1]!) +
          pad((c.cf / (2 * n)).toFixed(1), w[2]!) +
          sides.map((_, i) => pad(`${(c.sides[i]! / (2 * n)).toFixed(1)} (×${(c.sides[i]! / c.cf).toFixed(2)})`, 26)).join(""),
      );
    }
    if (long) {
      console.log(
        `\nLong session (${main.label}): a no-tool turn on a session holding ${long.events} events (filled in ${long.fillSeconds.toFixed(0)} s) against a fresh session, ${TURNS} interleaved turns each. p50 / p95 ms:`,
      );
      console.log(`fresh ${pair(long.fresh)}   ${long.events} events ${pair(long.big)}   (×${ratio(long.big, long.fresh)} p50)`);
    }
    console.log(`\nWebhook intake, ${IN_FLIGHT} in flight, ${WEBHOOKS} signed unique deliveries each, interleaved in batches:`);
    console.log(
      `minimal receiver (peer: HMAC + one D1 insert)  p50 ${ms(percentile(floorHook.ms, 50))}  p95 ${ms(percentile(floorHook.ms, 95))}  CPU ${(floorHook.cpu / WEBHOOKS).toFixed(1)} ms per delivery`,
    );
    sides.forEach((s, i) => {
      console.log(
        `${pad(`${s.label} POST /webhooks/gitea`, 46)} p50 ${ms(percentile(hooks[i]!.ms, 50))}  p95 ${ms(percentile(hooks[i]!.ms, 95))}  CPU ${(hooks[i]!.cpu / WEBHOOKS).toFixed(1)} ms  (×${ratio(hooks[i]!.ms, floorHook.ms)} p50 of the receiver)`,
      );
      console.log(
        `${pad(`${s.label} GET /api/ping`, 46)} p50 ${ms(percentile(pings[i]!.ms, 50))}  p95 ${ms(percentile(pings[i]!.ms, 95))}  CPU ${(pings[i]!.cpu / WEBHOOKS).toFixed(1)} ms`,
      );
    });
  } finally {
    if (process.env.BENCH_DEBUG) console.log(main.dev.output(), peer.output());
    await Promise.all([peer.stop(), ...sides.map((s) => s.dev.stop())]);
    await model.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) await run();
