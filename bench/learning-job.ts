/**
 * The candidate job's time against D1 (docs/learning.md, "Improvement candidates", "New-skill
 * candidates"; issue 23's bench): one workspace with 1,000 run receipts (the baseline) and one with
 * 10,000, seeded straight into the local D1 with `wrangler d1 execute --local` (batched multi-row
 * inserts; going through real runs would take hours), then the evidence pass for each through its
 * admin route `POST /api/candidates/run`, timed from outside. Half the runs activated the skill
 * `notes` (one in ten rated down: under the improvement threshold) and half activated none, each with
 * its own first message (no recurring pattern), so every pass does the whole detection — both
 * candidate queries, the improvement check and the new-skill grouping — and records nothing (no model
 * call): the figure is the job's D1 and CPU time, not the auxiliary model's. Configuration: the shipped
 * wrangler.toml with only the rate limits raised (bench/shipped-config.ts).
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { startWranglerDev, type DevServer } from "../test/support/wrangler-dev.ts";
import { benchClient, benchWorkspace } from "./support.ts";
import { writeBenchConfig } from "./shipped-config.ts";

const ROOT = resolve(import.meta.dirname, "..");
const WRANGLER = join(ROOT, "node_modules", ".bin", "wrangler");
const SIZES = [1_000, 10_000] as const;
const REPEATS = 5;
const ROWS_PER_INSERT = 200;
/** A made-up word per number (letters only, so the tokenizer keeps it). */
const word = (n: number) => [...n.toString(26)].map((c) => String.fromCharCode(97 + parseInt(c, 26))).join("") + "x";

const sqlText = (s: string) => `'${s.replace(/'/g, "''")}'`;

function insert(table: string, columns: string[], rows: string[][]): string[] {
  const out: string[] = [];
  for (let i = 0; i < rows.length; i += ROWS_PER_INSERT)
    out.push(
      `INSERT INTO ${table} (${columns.join(", ")}) VALUES ${rows
        .slice(i, i + ROWS_PER_INSERT)
        .map((r) => `(${r.join(", ")})`)
        .join(", ")};`,
    );
  return out;
}

/** n receipts of one workspace: even runs activated `notes` v0001, odd ones no skill (with a first message). */
function seedSql(workspaceId: string, n: number): string {
  const session = `ses_bench_${workspaceId}`;
  const receipts: string[][] = [];
  const skills: string[][] = [];
  const feedback: string[][] = [];
  const events: string[][] = [];
  const body = sqlText(JSON.stringify({ skills: [], tools: [], usage: { input_tokens: 900, output_tokens: 80 } }));
  for (let i = 0; i < n; i++) {
    const run = `run_${workspaceId}_${i}`;
    const ended = 1_700_000_000_000 + i * 1_000;
    receipts.push([
      sqlText(run),
      sqlText(workspaceId),
      sqlText(session),
      "NULL",
      "'completed'",
      "NULL",
      "'success'",
      body,
      String(ended),
      String(ended),
    ]);
    if (i % 2 === 0) {
      skills.push([sqlText(run), sqlText(workspaceId), "'notes'", "'v0001'"]);
      if (i % 20 === 0) feedback.push([sqlText(run), sqlText(workspaceId), sqlText(session), "'down'", "NULL", "'bench'", String(ended)]);
    } else {
      // Words of their own, so no two first messages share a term and nothing groups.
      const prompt = `${word(i)} ${word(i * 7919 + 1)} ${word(i * 104_729 + 2)}`;
      const payload = sqlText(JSON.stringify({ message: { role: "user", content: prompt } }));
      events.push([
        sqlText(`evt_${run}`),
        sqlText(session),
        sqlText(workspaceId),
        String(i),
        "'message'",
        sqlText(run),
        "NULL",
        "0",
        payload,
        "NULL",
        String(ended),
      ]);
    }
  }
  return [
    ...insert(
      "run_receipts",
      ["run_id", "workspace_id", "session_id", "agent_id", "status", "verification", "outcome", "body", "ended_at", "derived_at"],
      receipts,
    ),
    ...insert("run_receipt_skills", ["run_id", "workspace_id", "skill_name", "version"], skills),
    ...insert("run_feedback", ["run_id", "workspace_id", "session_id", "rating", "comment", "given_by", "created_at"], feedback),
    ...insert(
      "session_events",
      ["id", "session_id", "workspace_id", "seq", "type", "run_id", "parent_id", "hidden", "payload", "search_text", "ts"],
      events,
    ),
  ].join("\n");
}

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function run(): Promise<void> {
  const config = writeBenchConfig("shipped");
  const persistTo = mkdtempSync(join(tmpdir(), "beaver-bench-learning-"));
  let dev: DevServer | undefined;
  try {
    // 1. Workspaces and their skill through the API, then wrangler dev stops so the seeding is the only writer.
    dev = await startWranglerDev({ config, persistTo, timeoutMs: 240_000 });
    const adminToken = dev.adminToken;
    let call = benchClient(dev);
    const workspaces: { id: string; token: string; runs: number }[] = [];
    for (const runs of SIZES) {
      const ws = await benchWorkspace(dev, call);
      await call("PUT", "/api/skills/notes", ws.token, {
        files: [{ path: "SKILL.md", content: "---\nname: notes\ndescription: Takes meeting notes.\n---\n\n# Notes\n" }],
      });
      workspaces.push({ ...ws, runs });
    }
    await dev.stop();
    dev = undefined;

    const file = join(persistTo, "seed.sql");
    const seedStart = performance.now();
    writeFileSync(file, workspaces.map((w) => seedSql(w.id, w.runs)).join("\n"));
    execFileSync(WRANGLER, ["d1", "execute", "DB", "--local", "--persist-to", persistTo, "--config", config, "--file", file], {
      cwd: ROOT,
      env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
      stdio: "pipe",
    });
    console.log(
      `seeded ${workspaces.reduce((n, w) => n + w.runs, 0)} receipts in ${((performance.now() - seedStart) / 1000).toFixed(1)} s`,
    );

    // 2. The same state folder and admin token: time the evidence pass per workspace.
    dev = await startWranglerDev({ config, persistTo, adminToken, timeoutMs: 240_000 });
    call = benchClient(dev);
    const results: { runs: number; ms: number }[] = [];
    for (const w of workspaces) {
      const first = (await (await call("POST", "/api/candidates/run", w.token)).json()) as { candidates: unknown[] };
      if (first.candidates.length > 0)
        throw new Error(`the pass recorded candidates for ${w.id}: the seed is meant to stay under the thresholds`);
      const times: number[] = [];
      for (let i = 0; i < REPEATS; i++) {
        const start = performance.now();
        await call("POST", "/api/candidates/run", w.token);
        times.push(performance.now() - start);
      }
      results.push({ runs: w.runs, ms: median(times) });
    }
    const [base, big] = results;
    console.log("candidate job (evidence pass, POST /api/candidates/run, median of 5, shipped wrangler.toml):");
    for (const r of results) console.log(`  ${String(r.runs).padStart(6)} runs: ${r.ms.toFixed(1)} ms`);
    console.log(`  ×${(big!.ms / base!.ms).toFixed(2)} the time for ×${big!.runs / base!.runs} the runs`);
  } finally {
    await dev?.stop();
    rmSync(persistTo, { recursive: true, force: true });
  }
}
