/**
 * `npm run chaos`: crash Beaver in the middle of runs and count what was lost. It starts a scripted
 * model server and `wrangler dev`, sends messages to many sessions (each run makes tool calls against
 * a slow model, so runs are in flight), SIGKILLs wrangler and workerd at a random moment, restarts on
 * the same state, and repeats. Messages whose answer the crash swallowed are sent again with the same
 * `Idempotency-Key`, as a client would. At the end it waits for the runs to settle and prints:
 *
 *   events lost        an accepted message missing from the session's log (D1)
 *   messages doubled   a message recorded more than once (an idempotency key that made two runs)
 *   duplicated seqs    two events of one session with the same seq
 *   runs stuck         runs still queued or running once the service had time to finish them
 *   D1 vs log          sessions whose D1 copy differs from the Durable Object's own log
 *
 * All must be 0; the script exits 1 otherwise. Not part of `npm test` (it takes minutes). Knobs:
 * CHAOS_ROUNDS (default 7), CHAOS_SESSIONS (12), CHAOS_MODEL_DELAY_MS (150), CHAOS_SETTLE_S (120).
 * Traffic goes to 127.0.0.1 only.
 */
import { randomUUID } from "node:crypto";
import { rmSync } from "node:fs";
import { startScriptedModelServer } from "../test/support/scripted-openai.ts";
import { startWranglerDev, type DevServer } from "../test/support/wrangler-dev.ts";

const ROUNDS = Number(process.env.CHAOS_ROUNDS ?? 7);
const SESSIONS = Number(process.env.CHAOS_SESSIONS ?? 12);
const MODEL_DELAY_MS = Number(process.env.CHAOS_MODEL_DELAY_MS ?? 150);
const SETTLE_MS = Number(process.env.CHAOS_SETTLE_S ?? 120) * 1000;
const VARS = { BEAVER_ALLOW_PRIVATE_EGRESS: "true" };

interface Sent {
  session: string;
  /** Each session gets its own token, so the per-token rate limit (docs/limits.md) is not what is tested. */
  token: string;
  content: string;
  key: string;
  runId: string | null;
}

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const rand = (lo: number, hi: number) => lo + Math.floor(Math.random() * (hi - lo));

let dev: DevServer;

async function api(method: string, path: string, token: string, body?: unknown, headers: Record<string, string> = {}): Promise<Response> {
  return fetch(`${dev.url}${path}`, {
    method,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined ? { "Content-Type": "application/json" } : {}), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
    signal: AbortSignal.timeout(15_000),
  });
}

async function json<T>(res: Response): Promise<T> {
  if (!res.ok) throw new Error(`${res.status} ${await res.text()}`);
  return (await res.json()) as T;
}

/** Sends (or sends again) one message; records the run id once an answer arrives. */
async function send(m: Sent): Promise<void> {
  try {
    const res = await api("POST", `/api/sessions/${m.session}/messages`, m.token, { content: m.content }, { "Idempotency-Key": m.key });
    if (res.status === 202 || res.status === 200) {
      const body = (await res.json()) as { run_id?: string };
      if (body.run_id) m.runId = body.run_id;
    } else await res.body?.cancel();
  } catch {
    // The crash swallowed the answer: the message is sent again after the restart.
  }
}

async function restart(adminToken: string, persistTo: string, round: number): Promise<void> {
  const started = Date.now();
  dev = await startWranglerDev({ persistTo, adminToken, vars: VARS, timeoutMs: 120_000 });
  console.log(`round ${round}: restarted in ${Date.now() - started} ms`);
}

/** Runs queued or running, as the sessions list them. */
async function openRuns(token: string, sessions: string[]): Promise<number> {
  const counts = await Promise.all(
    sessions.map(async (s) => {
      const { runs } = await json<{ runs: { status: string }[] }>(await api("GET", `/api/sessions/${s}/runs`, token));
      return runs.filter((r) => r.status === "queued" || r.status === "running").length;
    }),
  );
  return counts.reduce((a, b) => a + b, 0);
}

interface EventRow {
  id: string;
  seq: number;
  type: string;
  message?: { role: string; content?: string };
}

async function d1Events(token: string, session: string): Promise<EventRow[]> {
  const out: EventRow[] = [];
  let after = 0;
  for (;;) {
    const page = await json<{ events: EventRow[]; next_after_seq: number; has_more: boolean }>(
      await api("GET", `/api/sessions/${session}/events?after_seq=${after}&limit=500&include_hidden=true`, token),
    );
    out.push(...page.events);
    if (!page.has_more) return out;
    after = page.next_after_seq;
  }
}

async function main(): Promise<void> {
  const model = await startScriptedModelServer();
  dev = await startWranglerDev({ vars: VARS, timeoutMs: 120_000 });
  const { adminToken, persistTo } = dev;
  try {
    const ws = `chaos-${randomUUID().slice(0, 8)}`;
    await json(await api("POST", "/api/workspaces", adminToken, { id: ws, name: ws }));
    const { token } = await json<{ token: string }>(
      await api("POST", "/api/tokens", adminToken, { name: "chaos", scopes: ["admin"], workspace_id: ws }),
    );
    await json(
      await api("PUT", "/api/config", token, {
        model: { provider: "openai-compatible", id: `tools-2@${MODEL_DELAY_MS}:chaos`, base_url: model.baseUrl },
      }),
    );
    const sessions: string[] = [];
    const tokens = new Map<string, string>();
    for (let i = 0; i < SESSIONS; i++) {
      const id = (await json<{ id: string }>(await api("POST", "/api/sessions", token, { title: `chaos ${i}` }))).id;
      const own = await json<{ token: string }>(
        await api("POST", "/api/tokens", adminToken, { name: `chaos ${i}`, scopes: ["member"], workspace_id: ws }),
      );
      sessions.push(id);
      tokens.set(id, own.token);
    }

    const sent: Sent[] = [];
    let inFlightAtKills = 0;
    for (let round = 1; round <= ROUNDS; round++) {
      // Everything unanswered so far goes again (same key), then one new message per session.
      const retries = sent.filter((m) => m.runId === null);
      const fresh: Sent[] = sessions.map((session, i) => ({
        session,
        token: tokens.get(session) ?? token,
        content: `chaos round ${round} session ${i} ${randomUUID()}`,
        key: randomUUID(),
        runId: null,
      }));
      sent.push(...fresh);
      const inFlight = [...retries, ...fresh].map((m) => send(m));
      await sleep(rand(200, 1200));
      const openAtKill = await openRuns(token, sessions).catch(() => -1);
      await dev.kill();
      await Promise.allSettled(inFlight);
      inFlightAtKills += Math.max(0, openAtKill);
      console.log(
        `round ${round}: killed with ${openAtKill} run(s) open and ${sent.filter((m) => m.runId === null).length} message(s) unanswered`,
      );
      await restart(adminToken, persistTo, round);
    }
    for (let attempt = 0; attempt < 5 && sent.some((m) => m.runId === null); attempt++) {
      if (attempt > 0) await sleep(5_000);
      await Promise.all(sent.filter((m) => m.runId === null).map((m) => send(m)));
    }

    // Let the service finish (runs resume on their own after a restart); wait until no run is open.
    const deadline = Date.now() + SETTLE_MS;
    let open = await openRuns(token, sessions);
    while (open > 0 && Date.now() < deadline) {
      await sleep(2000);
      open = await openRuns(token, sessions);
    }
    await sleep(3000); // the last replication batches

    let lost = 0;
    let doubled = 0;
    let dupSeqs = 0;
    let mismatches = 0;
    let unanswered = sent.filter((m) => m.runId === null).length;
    for (const s of sessions) {
      const events = await d1Events(token, s);
      const seqs = new Set<number>();
      for (const e of events) {
        if (seqs.has(e.seq)) dupSeqs++;
        seqs.add(e.seq);
      }
      const userTexts = events.filter((e) => e.type === "message" && e.message?.role === "user").map((e) => e.message?.content ?? "");
      for (const m of sent.filter((x) => x.session === s)) {
        const n = userTexts.filter((t) => t === m.content).length;
        if (n === 0) lost++;
        if (n > 1) doubled += n - 1;
      }
      // The Durable Object's own view: its tree size and active leaf against D1's visible events.
      const tree = await json<{ active_leaf: string | null; event_count: number }>(await api("GET", `/api/sessions/${s}/tree`, token));
      const visible = await json<{ events: EventRow[]; has_more: boolean }>(
        await api("GET", `/api/sessions/${s}/events?limit=1000`, token),
      );
      const ids = new Set(visible.events.map((e) => e.id));
      if (tree.event_count !== visible.events.length || (tree.active_leaf !== null && !ids.has(tree.active_leaf))) mismatches++;
    }
    const runsStuck = open;
    unanswered = sent.filter((m) => m.runId === null).length;

    console.log("");
    console.log(
      `chaos: ${ROUNDS} SIGKILLs with ${inFlightAtKills} run(s) open at the kills, ${SESSIONS} sessions, ${sent.length} messages (${unanswered} never answered)`,
    );
    const rows: [string, number][] = [
      ["events lost", lost],
      ["messages doubled", doubled],
      ["duplicated seqs", dupSeqs],
      ["runs stuck", runsStuck],
      ["D1 vs log mismatches", mismatches],
    ];
    for (const [name, n] of rows) console.log(`  ${name.padEnd(22)} ${n}`);
    const bad = rows.some(([, n]) => n > 0) || unanswered > 0;
    console.log(bad ? "chaos: FAILED" : "chaos: all zero");
    process.exitCode = bad ? 1 : 0;
  } finally {
    await dev.stop();
    await model.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
}

main().catch((err: unknown) => {
  console.error("chaos run failed:", err instanceof Error ? err.stack : err);
  if (dev) console.error(dev.output().slice(-4000));
  process.exit(2);
});
