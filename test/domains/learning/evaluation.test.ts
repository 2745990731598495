/**
 * Replay evaluation with real Durable Objects (docs/evaluation.md): every case runs twice in isolated
 * dry-run sessions (baseline at the current version, candidate at the draft's tree) with no more cases
 * at once than the concurrency; progress in GET and over SSE; the judge's scores in the report; cancel
 * stops the running case's runs and publishes nothing; and an evaluation whose object is aborted
 * mid-way resumes from its alarm without running a finished case's model calls again.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, deferred, readSse, scriptedWorkspace, text, until, generated, replicated } from "../../support/sessions.ts";
import { candidates, versionsOf } from "../../support/plugins.ts";
import { SKILL, armOfPrompt, draftWithCases, evaluation, type EvaluationJson } from "../../support/evaluation.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { evaluationStub, latestEvaluationVerdict } from "../../../src/domains/learning/evaluation/client.ts";
import { armSessionId } from "../../../src/domains/learning/evaluation/evaluation-do.ts";

/** A model for runs (doStream: answers by arm) and for the judge (doGenerate: scores by what it reads). */
function evalModel(opts: { runGate?: () => Promise<void> | undefined; hangRuns?: boolean } = {}) {
  const main = new ScriptedModel((_i, options) => {
    const answer = `${armOfPrompt(JSON.stringify(options.prompt))} answer`;
    if (opts.hangRuns) return { hang: true };
    const gate = opts.runGate?.();
    return gate ? { parts: text(answer), gate } : text(answer);
  });
  const judge = { calls: 0, prompts: [] as string[], hold: null as Promise<void> | null, holdFrom: Infinity };
  main.model.doGenerate = async (options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
    judge.calls++;
    const prompt = JSON.stringify(options.prompt);
    judge.prompts.push(prompt);
    if (judge.hold && judge.calls >= judge.holdFrom) await judge.hold;
    const answer = { baseline_score: 6, candidate_score: 8, winner: "candidate", reason: "B uses the name." };
    return generated(JSON.stringify(answer), { input: 20, output: 6 });
  };
  return { main, judge };
}

const start = (ws: TestWorkspace, draftId: string, body?: unknown) =>
  call("POST", `/api/drafts/${draftId}/evaluate`, { token: ws.member, ...(body !== undefined ? { body } : {}) });

async function finished(ws: TestWorkspace, draftId: string, timeoutMs = 20_000): Promise<EvaluationJson> {
  let last: EvaluationJson | null = null;
  await until(async () => (last = await evaluation(ws, draftId)).status !== "running", timeoutMs, "evaluation to finish");
  return last!;
}

describe("replay evaluation", () => {
  it("runs each case as baseline and candidate, at most `concurrency` at once, with SSE progress and a judged report", async () => {
    const release = deferred();
    const { main, judge } = evalModel({ runGate: () => release.promise });
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 4);

    const res = await start(ws, draftId, { concurrency: 2 });
    expect(res.status).toBe(202);
    expect(await json(res)).toMatchObject({ status: "running", concurrency: 2, progress: { total: 4, finished: 0 } });
    // Two cases, two arms each, are in flight; the other two cases wait.
    await until(() => main.calls.length === 4, 10_000, "four runs in flight");
    const during = await evaluation(ws, draftId);
    expect(during.progress).toEqual({ total: 4, finished: 0, running: 2, pending: 2 });
    expect(during.cases.map((c) => c.state)).toEqual(["running", "running", "pending", "pending"]);

    const frames = readSse(await call("GET", `/api/drafts/${draftId}/evaluation/stream`, { token: ws.read }));
    release.resolve();
    const all = (await frames) as unknown as { type: string; evaluation: EvaluationJson }[];
    expect(all.at(-1)!.type).toBe("done");
    const progress = all.filter((f) => f.type === "progress").map((f) => f.evaluation.progress.finished);
    expect(progress.length).toBeGreaterThanOrEqual(1);
    for (let i = 1; i < progress.length; i++) expect(progress[i]!).toBeGreaterThanOrEqual(progress[i - 1]!);
    const done = all.at(-1)!.evaluation;
    expect(done.status).toBe("passed");

    // Each case ran once per arm: 8 run model calls, 4 judge calls; baseline saw v1, candidate the draft.
    expect(main.calls).toHaveLength(8);
    expect(main.calls.map((c) => armOfPrompt(JSON.stringify(c.prompt))).sort()).toEqual([
      ...Array(4).fill("baseline"),
      ...Array(4).fill("candidate"),
    ]);
    expect(judge.calls).toBe(4);
    expect(judge.prompts[0]).toContain("baseline answer");
    expect(judge.prompts[0]).toContain("candidate answer");
    expect(judge.prompts[0]).toMatch(/mentions person \d/);
    const report = done.report!;
    expect(report.summary).toMatchObject({ cases: 4, judged: 4, errored: 0, baseline_mean: 6, candidate_mean: 8, candidate_wins: 4 });
    expect(report.cases.map((c) => [c.state, c.baseline!.output, c.candidate!.output])).toEqual(
      Array(4).fill(["done", "baseline answer", "candidate answer"]),
    );
    expect(report.cost).toMatchObject({ model_calls: 12, judge_calls: 4 });
    expect(report.cost.total_tokens).toBeGreaterThan(0);
    expect(await latestEvaluationVerdict(env, ws.id, draftId)).toBe("passed");

    // Evaluation sessions are isolated: not in D1, so neither listed nor searchable.
    const listed = await json<{ sessions: { id: string }[] }>(await call("GET", "/api/sessions", { token: ws.read }));
    expect(listed.sessions.filter((s) => s.id.startsWith("eval:"))).toEqual([]);
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM sessions WHERE workspace_id = ? AND id LIKE 'eval:%'")
      .bind(ws.id)
      .first<{ n: number }>();
    expect(rows!.n).toBe(0);
    // Nothing was published by evaluating.
    expect(await versionsOf(ws.id, SKILL)).toBe(1);
  });

  it("replays recorded sessions in which the skill was activated as further cases", async () => {
    const { main, judge } = evalModel();
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 1);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "Please greet Grace Hopper", skills: [SKILL] });
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
    await replicated(session.id); // the run's log reaches D1 after its result (docs/sessions.md)

    expect((await start(ws, draftId)).status).toBe(202);
    const done = await finished(ws, draftId);
    expect(done.cases.map((c) => c.source)).toEqual(["cases_file", "recorded_session"]);
    expect(done.report!.cases[1]).toMatchObject({ state: "done" });
    expect(judge.prompts.some((p) => p.includes("Please greet Grace Hopper"))).toBe(true);
    expect(done.status).toBe("passed");
  });

  it("cancel stops the running case's runs, starts no other case, publishes nothing, and says cancelled", async () => {
    const { main } = evalModel({ hangRuns: true });
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 3);
    expect((await start(ws, draftId, { concurrency: 1 })).status).toBe(202);
    await until(() => main.calls.length === 2, 10_000, "case 0's two runs");

    const res = await call("POST", `/api/drafts/${draftId}/evaluation/cancel`, { token: ws.member });
    expect(res.status).toBe(200);
    const cancelled = await json<EvaluationJson>(res);
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.cases.map((c) => c.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(cancelled.report).toBeNull();
    const evaluationId = cancelled.id;
    for (const arm of ["baseline", "candidate"] as const) {
      const sessionId = armSessionId(evaluationId, 0, arm);
      const runs = await SessionClient.of(env, sessionId).listRuns(ws.id, 10);
      expect(runs).toHaveLength(1);
      expect((await waitForRun(env, sessionId, runs[0]!.id, 10_000, ws.id)).status).toBe("cancelled");
      await replicated(sessionId); // the run's log reaches D1 after its result (docs/sessions.md)
    }
    expect(main.calls).toHaveLength(2);
    expect(await latestEvaluationVerdict(env, ws.id, draftId)).toBe("cancelled");
    expect((await evaluation(ws, draftId)).status).toBe("cancelled");
    expect((await candidates(ws.read, SKILL)).drafts.find((d) => d.id === draftId)!.status).toBe("pending_review");
    expect(await versionsOf(ws.id, SKILL)).toBe(1);
    // A second cancel is a conflict: there is nothing running.
    expect((await call("POST", `/api/drafts/${draftId}/evaluation/cancel`, { token: ws.member })).status).toBe(409);
  });

  it("resumes after the evaluation object is aborted mid-way without redoing finished cases", async () => {
    const { main, judge } = evalModel();
    judge.hold = new Promise(() => undefined); // the third judgement never comes back in the first instance
    judge.holdFrom = 3;
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 4);
    expect((await start(ws, draftId, { concurrency: 1 })).status).toBe(202);
    await until(() => judge.calls === 3, 10_000, "the third judgement");
    const before = await evaluation(ws, draftId);
    expect(before.cases.map((c) => c.state)).toEqual(["done", "done", "running", "pending"]);
    expect(main.calls).toHaveLength(6);

    await abortAllDurableObjects();
    judge.hold = null;
    expect(await runDurableObjectAlarm(evaluationStub(env, ws.id, draftId))).toBe(true);
    const done = await finished(ws, draftId);
    expect(done.status).toBe("passed");
    expect(done.report!.cases.map((c) => c.state)).toEqual(["done", "done", "done", "done"]);
    // 4 cases × 2 arms: the finished cases ran nothing again, case 2 found its runs by their keys.
    expect(main.calls).toHaveLength(8);
    // Cases 0 and 1 were judged once; case 2 twice (its first judgement died with the object); case 3 once.
    expect(judge.calls).toBe(5);
  });

  it("evaluating again while one runs cancels the running one and replaces it", async () => {
    const release = deferred();
    const { main } = evalModel({ runGate: () => release.promise });
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 2);
    const first = await json<EvaluationJson>(await start(ws, draftId, { concurrency: 1 }));
    await until(() => main.calls.length === 2, 10_000, "the first evaluation's runs");
    const second = await json<EvaluationJson>(await start(ws, draftId, { concurrency: 2 }));
    expect(second.id).not.toBe(first.id);
    expect(second).toMatchObject({ status: "running", concurrency: 2, progress: { total: 2 } });
    // The first evaluation's running case had its runs cancelled.
    for (const arm of ["baseline", "candidate"] as const) {
      const sessionId = armSessionId(first.id, 0, arm);
      const runs = await SessionClient.of(env, sessionId).listRuns(ws.id, 10);
      expect((await waitForRun(env, sessionId, runs[0]!.id, 10_000, ws.id)).status).toBe("cancelled");
      await replicated(sessionId); // the run's log reaches D1 after its result (docs/sessions.md)
    }
    release.resolve();
    const done = await finished(ws, draftId);
    expect(done).toMatchObject({ id: second.id, status: "passed" });
    // 2 runs of the first evaluation's case 0, then 2 cases × 2 arms of the second.
    expect(main.calls).toHaveLength(6);
  });

  it("answers 404 for another workspace's draft or none, 400 for a concurrency over the cap", async () => {
    const { main } = evalModel();
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 1);
    const other = await newWorkspace();
    for (const [method, path] of [
      ["POST", `/api/drafts/${draftId}/evaluate`],
      ["GET", `/api/drafts/${draftId}/evaluation`],
      ["GET", `/api/drafts/${draftId}/evaluation/stream`],
      ["POST", `/api/drafts/${draftId}/evaluation/cancel`],
    ] as const)
      expect((await call(method, path, { token: other.member })).status).toBe(404);
    expect((await call("GET", `/api/drafts/${draftId}/evaluation`, { token: ws.read })).status).toBe(404);
    expect(await latestEvaluationVerdict(env, ws.id, draftId)).toBe("none");
    const tooMany = await start(ws, draftId, { concurrency: 99 });
    expect(tooMany.status).toBe(400);
    expect((await start(ws, draftId, { concurrency: 1 })).status).toBe(202);
    expect((await call("POST", `/api/drafts/${draftId}/evaluate`, { token: ws.read })).status).toBe(403);
    await finished(ws, draftId);
  });
});
