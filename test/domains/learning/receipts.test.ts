/**
 * Run receipts, feedback and skill stats (docs/learning.md, "Run receipts", "Feedback", "Skill stats"),
 * with real runs of the scripted model in real SessionDOs, D1's replica of their logs, and the
 * `receipts` cron job: what a receipt holds, that deriving it twice changes nothing, feedback's
 * validation and tenancy, a toolchain task's verdict as verification and feedback, and a skill's
 * rates per version against the same agent's runs without it.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { z } from "zod";
import { count, eq } from "drizzle-orm";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  newSession,
  registerToolset,
  scriptedWorkspace,
  text,
  toolCalls,
  until,
  replicated,
} from "../../support/sessions.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { defineTool, fail } from "../../../src/runtime/tools/spec.ts";
import { runReceiptTick } from "../../../src/domains/learning/receipts/job.ts";
import { makeDb } from "../../../src/storage/db/client.ts";
import { runReceipts, runReceiptSkills, toolchainTasks } from "../../../src/storage/db/schema.ts";

type J = Record<string, unknown>;

const broken = defineTool({
  name: "always_fails",
  description: "test tool that always fails",
  input: z.strictObject({}),
  idempotent: true,
  execute: async () => fail("broken", "this tool always fails"),
});
const fine = countingTool("works_fine", { idempotent: true });
const TOOLSET = registerToolset("receipts-tools", [fine.spec, broken]);

async function putSkill(ws: TestWorkspace, name: string, body: string): Promise<void> {
  const res = await call("PUT", `/api/skills/${name}`, {
    token: ws.member,
    body: { files: [{ path: "SKILL.md", content: skillMd(name, "Takes meeting notes. Use when asked for meeting notes.", body) }] },
  });
  if (res.status !== 200) throw new Error(`publish ${name}: ${res.status} ${await res.text()}`);
}

/** One run, waited for; `skills` are requested explicitly and nothing is chosen automatically. */
async function run(ws: TestWorkspace, sessionId: string, skills: string[] = [], content = "write it down"): Promise<string> {
  const { run_id } = await submitRun(env, sessionId, {
    workspace_id: ws.id,
    content,
    toolset: TOOLSET,
    skills,
    skill_choice: "requested_only",
  });
  const result = await waitForRun(env, sessionId, run_id, 30_000, ws.id);
  expect(result.status).toBe("completed");
  // The receipt job reads D1's copy, which trails the result (docs/sessions.md, "Storage first, D1 second").
  await replicated(sessionId);
  return run_id;
}

const receipt = async (ws: TestWorkspace, sessionId: string, runId: string, token = ws.read) =>
  call("GET", `/api/sessions/${sessionId}/runs/${runId}/receipt`, { token });
const rate = (ws: TestWorkspace, sessionId: string, runId: string, body: unknown, token = ws.member) =>
  call("POST", `/api/sessions/${sessionId}/runs/${runId}/feedback`, { token, body });

/** Ticks until no run is left without a receipt (other files' runs share nothing: storage is per file). */
async function tickAll(): Promise<void> {
  for (let i = 0; i < 20; i++) {
    const r = await runReceiptTick(env, Date.now());
    if (r.derived === 0 && r.waiting === 0) return;
  }
}

describe("run receipts", () => {
  it("the cron job derives a receipt once: skills with versions, tools with outcomes, status, usage; a second pass changes nothing", async () => {
    const main = new ScriptedModel([
      toolCalls({ id: "c1", name: "works_fine", args: {} }, { id: "c2", name: "always_fails", args: {} }),
      toolCalls({ id: "c3", name: "works_fine", args: {} }),
      text("noted"),
    ]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "notes", "# Steps\n\n1. Date every note.\n");
    const sid = await newSession(ws);
    const runId = await run(ws, sid, ["notes"]);

    await tickAll();
    const res = await receipt(ws, sid, runId);
    expect(res.status).toBe(200);
    const first = await json<J>(res);
    expect(first).toMatchObject({
      run_id: runId,
      session_id: sid,
      agent_id: null,
      status: "completed",
      verification: null,
      outcome: "success",
      skills: [{ name: "notes", version: "v0001", reason: "explicit" }],
      tools: [
        { name: "always_fails", calls: 1, errors: 1, denied: 0 },
        { name: "works_fine", calls: 2, errors: 0, denied: 0 },
      ],
      tool_iterations: 2,
      error: null,
      feedback: null,
    });
    // Three model steps of 10 input and 4 output tokens each (test/support/sessions.ts USAGE).
    expect(first.usage).toMatchObject({ input_tokens: 30, output_tokens: 12, total_tokens: 42 });

    await runReceiptTick(env, Date.now() + 60_000);
    const db = makeDb(env.DB);
    const [receipts] = await db.select({ n: count() }).from(runReceipts).where(eq(runReceipts.runId, runId));
    const [skills] = await db.select({ n: count() }).from(runReceiptSkills).where(eq(runReceiptSkills.runId, runId));
    expect([receipts!.n, skills!.n]).toEqual([1, 1]);
    const again = await json<J>(await receipt(ws, sid, runId));
    expect({ ...again, derived_at: 0 }).toEqual({ ...first, derived_at: 0 });
  });

  it("derives on read when the job has not reached the run; an open run is 409, another workspace's run 404", async () => {
    const gate = deferred();
    const ws = await scriptedWorkspace(new ScriptedModel([{ parts: text("hi"), gate: gate.promise }, text("hi")]));
    const sid = await newSession(ws);
    const held = await submitRun(env, sid, { workspace_id: ws.id, content: "wait", toolset: TOOLSET });
    await until(async () => (await SessionClient.of(env, sid).getRun(held.run_id, ws.id)).status === "running", 10_000, "the run to start");
    const open = await receipt(ws, sid, held.run_id);
    expect(open.status).toBe(409);
    expect((await rate(ws, sid, held.run_id, { rating: "up" })).status).toBe(409);
    gate.resolve();
    await waitForRun(env, sid, held.run_id, 30_000, ws.id);
    const runId = await run(ws, sid);
    const res = await receipt(ws, sid, runId);
    expect(res.status).toBe(200);
    expect(await json<J>(res)).toMatchObject({ run_id: runId, skills: [], tools: [], outcome: "success" });

    const other = await newWorkspace();
    expect((await receipt(other, sid, runId)).status).toBe(404);
    expect((await receipt(ws, sid, "run_unknown")).status).toBe(404);
  });
});

describe("feedback", () => {
  it("records a rating with a comment, replaces it on a second one, and the receipt reflects it", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("hi")]));
    const sid = await newSession(ws);
    const runId = await run(ws, sid);
    await tickAll();

    const down = await rate(ws, sid, runId, { rating: "down", comment: "  forgot the date  " });
    expect(down.status).toBe(200);
    expect(await json<J>(down)).toMatchObject({
      run_id: runId,
      rating: "down",
      comment: "forgot the date",
      receipt: { feedback: { rating: "down", source: "person", comment: "forgot the date" } },
    });
    expect((await rate(ws, sid, runId, { rating: "up" })).status).toBe(200);
    expect(await json<J>(await receipt(ws, sid, runId))).toMatchObject({ feedback: { rating: "up", source: "person", comment: null } });
    // The session's ratings, as the chat's thumbs read them; another workspace gets 404.
    const listed = await call("GET", `/api/sessions/${sid}/feedback`, { token: ws.read });
    expect(await json<J>(listed)).toEqual({ feedback: [{ run_id: runId, rating: "up", comment: null }] });
    const other = await newWorkspace();
    expect((await call("GET", `/api/sessions/${sid}/feedback`, { token: other.read })).status).toBe(404);
  });

  it("refuses bad input, read tokens, unknown runs and another workspace's session", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("hi")]));
    const sid = await newSession(ws);
    const runId = await run(ws, sid);
    const bad = await rate(ws, sid, runId, { rating: "meh" });
    expect(bad.status).toBe(400);
    expect(await json<{ error: { code: string } }>(bad)).toMatchObject({ error: { code: "validation_failed" } });
    expect((await rate(ws, sid, runId, { rating: "up", comment: "x".repeat(2_001) })).status).toBe(400);
    expect((await rate(ws, sid, runId, { rating: "up", extra: 1 })).status).toBe(400);
    expect((await rate(ws, sid, runId, { rating: "up" }, ws.read)).status).toBe(403);
    expect((await rate(ws, sid, "run_nope", { rating: "up" })).status).toBe(404);
    const other = await newWorkspace();
    expect((await rate(other, sid, runId, { rating: "up" }, other.member)).status).toBe(404);
    expect(await json<J>(await receipt(ws, sid, runId))).toMatchObject({ feedback: null });
  });

  it("a toolchain task's verdict is the run's verification and counts as feedback; a person's rating wins", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("fixed")]));
    await putSkill(ws, "notes", "# Steps\n\n1. Date every note.\n");
    const taskId = "tsk_receipt_1";
    const sid = `task:${taskId}`;
    // The session a toolchain task's run gets (src/domains/toolchain/dispatcher.ts: metadata names the task and agent).
    await createSession(env, {
      workspaceId: ws.id,
      id: sid,
      title: "fix it",
      metadata: { task_id: taskId, task_type: "toolchain", agent_id: "coder" },
    });
    const runId = await run(ws, sid, ["notes"]);
    const db = makeDb(env.DB);
    const now = Date.now();
    // The task row as the dispatcher leaves it while the run's evidence is judged.
    await db.insert(toolchainTasks).values({
      id: taskId,
      workspaceId: ws.id,
      agentId: "coder",
      title: "fix it",
      description: "fix it",
      eventType: "issues",
      actionType: "issue_assigned",
      mustHaves: "{}",
      status: "working",
      attempts: 1,
      businessFailures: 0,
      reminderSent: 0,
      notBefore: now,
      sessionId: sid,
      runId,
      createdAt: now,
      updatedAt: now,
    });
    await tickAll();
    expect(await json<J>(await receipt(ws, sid, runId))).toMatchObject({
      agent_id: "coder",
      task_id: taskId,
      verification: "pending",
      outcome: "pending",
      feedback: null,
    });

    await db.update(toolchainTasks).set({ status: "failed" }).where(eq(toolchainTasks.id, taskId));
    await runReceiptTick(env, Date.now());
    expect(await json<J>(await receipt(ws, sid, runId))).toMatchObject({
      verification: "failed",
      outcome: "failure",
      feedback: { rating: "down", source: "verification" },
    });
    const stats = await json<J>(await call("GET", "/api/skills/notes/stats", { token: ws.read }));
    expect(stats).toMatchObject({ runs: 1, overall: { failure: 1, success_rate: 0, feedback: { down: 1, up_rate: 0 } } });

    expect((await rate(ws, sid, runId, { rating: "up", comment: "the task was wrong, the run was right" })).status).toBe(200);
    expect(await json<J>(await receipt(ws, sid, runId))).toMatchObject({
      verification: "failed",
      feedback: { rating: "up", source: "person" },
    });
  });
});

describe("skill stats", () => {
  it("rates per version against the same agent's runs without the skill, with counts", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    await putSkill(ws, "notes", "# Steps\n\n1. Date every note.\n");
    const sid = await newSession(ws);
    const v1 = [await run(ws, sid, ["notes"]), await run(ws, sid, ["notes"]), await run(ws, sid, ["notes"]), await run(ws, sid, ["notes"])];
    await putSkill(ws, "notes", "# Steps\n\n1. Date every note.\n2. Name who spoke.\n");
    const v2 = [await run(ws, sid, ["notes"]), await run(ws, sid, ["notes"])];
    const plain = [await run(ws, sid), await run(ws, sid), await run(ws, sid)];
    // A toolchain agent's run without the skill is not comparable with chat runs: it stays out of the baseline.
    const agentSid = `task:tsk_stats_other`;
    await createSession(env, { workspaceId: ws.id, id: agentSid, title: "t", metadata: { task_type: "mail", agent_id: "mailer" } });
    await run(ws, agentSid);
    await tickAll();
    for (const [runId, rating] of [
      [v1[0]!, "down"],
      [v1[1]!, "down"],
      [v1[2]!, "up"],
      [v2[0]!, "up"],
      [plain[0]!, "down"],
    ] as const)
      expect((await rate(ws, sid, runId, { rating })).status).toBe(200);

    const res = await call("GET", "/api/skills/notes/stats", { token: ws.read });
    expect(res.status).toBe(200);
    const stats = await json<J>(res);
    expect(stats).toMatchObject({
      skill: "notes",
      runs: 6,
      overall: { runs: 6, success: 6, success_rate: 1, feedback: { up: 2, down: 2, none: 2, up_rate: 0.5 } },
      versions: [
        { version: "v0001", runs: 4, success_rate: 1, feedback: { up: 1, down: 2, none: 1, up_rate: 0.333 } },
        { version: "v0002", runs: 2, feedback: { up: 1, down: 0, none: 1, up_rate: 1 } },
      ],
      baseline: { runs: 3, success: 3, feedback: { up: 0, down: 1, none: 2, up_rate: 0 } },
      by_agent: [{ agent_id: null, with_skill: { runs: 6 }, without_skill: { runs: 3 } }],
    });

    expect((await call("GET", "/api/skills/never-had/stats", { token: ws.read })).status).toBe(404);
    expect((await call("GET", "/api/skills/Bad!/stats", { token: ws.read })).status).toBe(400);
    const other = await newWorkspace();
    expect((await call("GET", "/api/skills/notes/stats", { token: other.read })).status).toBe(404);
  });

  it("compares with the runs without the skill whose messages are similar to its runs' (similar_baseline)", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    await putSkill(ws, "notes", "# Steps\n\n1. Date every note.\n");
    const sid = await newSession(ws);
    await run(ws, sid, ["notes"], "take the meeting notes for planning");
    await run(ws, sid, ["notes"], "meeting notes for the retro please");
    const similar = await run(ws, sid, [], "take notes of the design meeting");
    const unrelated = [await run(ws, sid, [], "what is the weather in Oslo"), await run(ws, sid, [], "translate hello to French")];
    await tickAll();
    expect((await rate(ws, sid, similar, { rating: "up" })).status).toBe(200);
    for (const r of unrelated) expect((await rate(ws, sid, r, { rating: "down" })).status).toBe(200);

    const stats = await json<J>(await call("GET", "/api/skills/notes/stats", { token: ws.read }));
    expect(stats.baseline).toMatchObject({ runs: 3, feedback: { up: 1, down: 2, up_rate: 0.333 } });
    expect(stats.similar_baseline).toEqual({
      runs: 1,
      success: 1,
      failure: 0,
      cancelled: 0,
      pending: 0,
      success_rate: 1,
      feedback: { up: 1, down: 0, none: 0, up_rate: 1 },
      looked_at: { with_skill: 2, without_skill: 3 },
    });
  });
});
