/**
 * Cost of run receipts and of the improvement check (docs/learning.md, "Run receipts", "Improvement
 * candidates"), pure CPU only (D1's reads and writes are not measured here): deriving one run's
 * receipt from a 20-step run's events against the baseline of parsing those events' stored JSON (which the job
 * does anyway), and — for 10,000 runs of one skill — the improvement check and the stats shaping.
 */
import { deriveReceipt } from "../src/domains/learning/receipts/derive.ts";
import { shapeStats, type StatGroup } from "../src/domains/learning/receipts/stats.ts";
import { improvementEvidence, type RecentRun } from "../src/domains/learning/improvement/detect.ts";
import type { PersistentEvent } from "../src/runtime/session/events.ts";

const ITERATIONS = 2_000;
const RUNS = 10_000;

function runEvents(): PersistentEvent[] {
  const base = { session_id: "ses_b", client_id: "x", parent_id: null, ts: 1, run_id: "run_b" };
  const events: PersistentEvent[] = [
    { ...base, id: "e0", seq: 0, type: "run_started", input: { toolset: "default" } },
    {
      ...base,
      id: "e1",
      seq: 1,
      type: "skill_activation_snapshotted",
      skills: [{ name: "notes", version: "v0003", content_hash: "h".repeat(64) }],
    },
  ];
  for (let i = 0; i < 20; i++) {
    events.push({
      ...base,
      id: `a${i}`,
      seq: 2 + i * 2,
      type: "message",
      message: {
        role: "assistant",
        text: "Working on it. ".repeat(20),
        tool_calls: [{ id: `c${i}`, name: `tool_${i % 4}`, args: { path: "/x".repeat(20) } }],
        usage: { input_tokens: 900, output_tokens: 80, total_tokens: 980 },
      },
    });
    events.push({
      ...base,
      id: `r${i}`,
      seq: 3 + i * 2,
      type: "message",
      message: {
        role: "tool_result",
        tool_call_id: `c${i}`,
        tool_name: `tool_${i % 4}`,
        content: "output ".repeat(200),
        is_error: i % 7 === 0,
      },
    });
  }
  events.push({ ...base, id: "end", seq: 99, type: "run_completed", result: { status: "completed" } });
  return events;
}

function perIteration(step: () => void): number {
  for (let w = 0; w < 100; w++) step();
  const start = performance.now();
  for (let i = 0; i < ITERATIONS; i++) step();
  return (performance.now() - start) / ITERATIONS;
}

export async function run(): Promise<void> {
  const stored = runEvents().map((e) => JSON.stringify(e));
  let parsed: PersistentEvent[] = [];
  const baseline = perIteration(() => {
    parsed = stored.map((s) => JSON.parse(s) as PersistentEvent);
  });
  let tools = 0;
  const receipt = perIteration(() => {
    const events = stored.map((s) => JSON.parse(s) as PersistentEvent);
    tools = deriveReceipt({
      run: { id: "run_b", sessionId: "ses_b", status: "completed", endedAt: 1, result: null },
      events,
      sessionMetadata: { task_type: "toolchain", task_id: "t", agent_id: "coder" },
      task: { id: "t", status: "done", runId: "run_b" },
    }).body.tools.length;
  });

  const recent: RecentRun[] = Array.from({ length: RUNS }, (_, i) => ({
    runId: `run_${i}`,
    outcome: i % 3 === 0 ? "failure" : "success",
    rating: i % 5 === 0 ? "down" : null,
  }));
  const window = { enabled: true, window_runs: RUNS, min_runs: 5, bad_share: 0.3 };
  let evidenceRuns = 0;
  const start = performance.now();
  for (let i = 0; i < 20; i++) evidenceRuns = improvementEvidence("notes", "v0003", recent, window)?.runs.length ?? 0;
  const check = (performance.now() - start) / 20;
  const groups: StatGroup[] = recent.map((r, i) => ({
    version: `v000${i % 3}`,
    agentId: `agent_${i % 10}`,
    outcome: r.outcome,
    rating: r.rating,
    runs: 1,
  }));
  const s0 = performance.now();
  for (let i = 0; i < 20; i++) shapeStats("notes", groups, groups);
  const stats = (performance.now() - s0) / 20;

  const ms = (x: number) => `${x.toFixed(4)} ms`;
  const line = (label: string, x: number, tail = "") => console.log(`${label.padEnd(72)}: ${ms(x)}${tail}`);
  line(`baseline: parse one run's ${parsed.length} stored events`, baseline);
  line(`derive one receipt (parse + derive, ${tools} tools)`, receipt, `  ${((receipt / baseline) * 100).toFixed(1)}% of the baseline`);
  line(`improvement check over ${RUNS.toLocaleString("en")} runs (${evidenceRuns} evidence runs)`, check);
  line(`stats shaping over ${RUNS.toLocaleString("en")} ungrouped rows (worst case; D1 groups them)`, stats);
}
