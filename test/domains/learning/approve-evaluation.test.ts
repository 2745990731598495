/**
 * The evaluation gate of approval, wired end to end with real Durable Objects (docs/learning.md,
 * "Gates"; docs/evaluation.md, "Verdict for the gates"): `POST /api/drafts/:id/approve` reads the
 * draft's latest evaluation verdict — a running evaluation answers 409, a failed one 409 with the
 * reason, a cancelled one 409 until the draft is evaluated again, and a reasoned `skip_evaluation`
 * overrides none of them (it only stands in for a missing evaluation). A passed verdict publishes
 * and is recorded in provenance; with `learning.auto_publish` on, the verdict itself publishes
 * through the EvaluationDO's `onFinished` observer (src/app/evaluation.ts), and a failed one does not.
 */
import { describe, expect, it } from "vitest";
import type { LanguageModelV4CallOptions, LanguageModelV4GenerateResult } from "@ai-sdk/provider";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, deferred, scriptedWorkspace, text, until, generated } from "../../support/sessions.ts";
import { candidates, versionsOf, type J } from "../../support/plugins.ts";
import { CANDIDATE_MARK, SKILL, casesJsonl, draftWithCases, evaluation, type EvaluationJson } from "../../support/evaluation.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";

interface ModelControl {
  /** Runs wait on this gate while it is set. */
  gate: Promise<void> | null;
  /** Runs never answer (until cancelled) while true. */
  hang: boolean;
  /** What the judge scores: baseline and candidate. */
  scores: { baseline: number; candidate: number };
}

/** One model for the runs (doStream) and the judge (doGenerate), steered through `control`. */
function controlledModel(): { main: ScriptedModel; control: ModelControl } {
  const control: ModelControl = { gate: null, hang: false, scores: { baseline: 6, candidate: 8 } };
  const main = new ScriptedModel(() => {
    if (control.hang) return { hang: true };
    return control.gate ? { parts: text("an answer"), gate: control.gate } : text("an answer");
  });
  main.model.doGenerate = async (_options: LanguageModelV4CallOptions): Promise<LanguageModelV4GenerateResult> => {
    const { baseline, candidate } = control.scores;
    const winner = candidate > baseline ? "candidate" : candidate < baseline ? "baseline" : "tie";
    const answer = { baseline_score: baseline, candidate_score: candidate, winner, reason: "scored by the test" };
    return generated(JSON.stringify(answer), { input: 10, output: 5 });
  };
  return { main, control };
}

const evaluate = async (ws: TestWorkspace, draftId: string, concurrency = 1) => {
  const res = await call("POST", `/api/drafts/${draftId}/evaluate`, { token: ws.member, body: { concurrency } });
  expect(res.status).toBe(202);
  return json<EvaluationJson>(res);
};
const approve = async (ws: TestWorkspace, draftId: string, body?: unknown) => {
  const res = await call("POST", `/api/drafts/${draftId}/approve`, { token: ws.member, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, body: await json<J>(res) };
};
const SKIP = { skip_evaluation: true, reason: "the reviewer read the diff" };

async function settled(ws: TestWorkspace, draftId: string): Promise<EvaluationJson> {
  let last: EvaluationJson | null = null;
  await until(async () => (last = await evaluation(ws, draftId)).status !== "running", 20_000, "the evaluation's verdict");
  return last!;
}

/** The refusal of the evaluation gate: 409 `conflict` at gate `evaluation`, its message saying why. */
function expectEvaluationRefusal(res: { status: number; body: J }, why: RegExp): void {
  expect(res.status).toBe(409);
  expect(res.body.error).toMatchObject({ code: "conflict", details: { gate: "evaluation" } });
  expect(res.body.error!.message).toMatch(why);
}

describe("approval and the evaluation verdict", () => {
  it("is refused with 409 while the evaluation runs, even with skip_evaluation, and publishes once it passed", async () => {
    const { main, control } = controlledModel();
    const release = deferred();
    control.gate = release.promise;
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 2);
    await evaluate(ws, draftId);
    await until(() => main.calls.length === 2, 10_000, "case 0's runs in flight");

    expectEvaluationRefusal(await approve(ws, draftId), /still running/);
    expectEvaluationRefusal(await approve(ws, draftId, SKIP), /still running/);
    expect(await versionsOf(ws.id, SKILL)).toBe(1);

    release.resolve();
    expect((await settled(ws, draftId)).status).toBe("passed");
    const approved = await approve(ws, draftId);
    expect(approved).toMatchObject({ status: 200, body: { status: "published", version: "v0002" } });
    const v2 = await json<{ provenance: Record<string, unknown> }>(
      await call("GET", `/api/skills/${SKILL}/versions/v0002`, { token: ws.read }),
    );
    expect(v2.provenance).toMatchObject({ draft_id: draftId, review: { mode: "manual", evaluation: "passed" } });
    expect(v2.provenance.review).not.toHaveProperty("skip_evaluation");
  });

  it("is refused with 409 at the evaluation gate when the evaluation failed, skip or not", async () => {
    const { main, control } = controlledModel();
    control.scores = { baseline: 8, candidate: 3 };
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 2);
    await evaluate(ws, draftId, 2);
    const done = await settled(ws, draftId);
    expect(done.status).toBe("failed");
    expect(done.report!.verdict).toBe("failed");

    expectEvaluationRefusal(await approve(ws, draftId), /evaluation failed/);
    expectEvaluationRefusal(await approve(ws, draftId, SKIP), /evaluation failed/);
    expect(await versionsOf(ws.id, SKILL)).toBe(1);
    expect((await candidates(ws.read, SKILL)).drafts.find((d) => d.id === draftId)!.status).toBe("pending_review");
  });

  it("a cancelled evaluation blocks approval until the draft is evaluated again", async () => {
    const { main, control } = controlledModel();
    control.hang = true;
    const ws = await scriptedWorkspace(main);
    const draftId = await draftWithCases(ws, 2);
    await evaluate(ws, draftId);
    await until(() => main.calls.length === 2, 10_000, "case 0's runs in flight");
    const cancelled = await call("POST", `/api/drafts/${draftId}/evaluation/cancel`, { token: ws.member });
    expect(cancelled.status).toBe(200);
    expect((await json<EvaluationJson>(cancelled)).status).toBe("cancelled");

    expectEvaluationRefusal(await approve(ws, draftId), /cancelled/);
    expectEvaluationRefusal(await approve(ws, draftId, SKIP), /cancelled/);
    expect(await versionsOf(ws.id, SKILL)).toBe(1);

    control.hang = false;
    await evaluate(ws, draftId, 2);
    expect((await settled(ws, draftId)).status).toBe("passed");
    expect(await approve(ws, draftId)).toMatchObject({ status: 200, body: { version: "v0002" } });
  });

  it("with learning.auto_publish on, a passed verdict publishes the draft by itself and a failed one does not", async () => {
    const { main, control } = controlledModel();
    const ws = await scriptedWorkspace(main);
    // PUT replaces the whole configuration: keep the scripted model, add the setting.
    const current = await json(await call("GET", "/api/config", { token: ws.admin }));
    const config = { ...current, learning: { auto_publish: { enabled: true, min_confidence: 0.8 } } };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);

    // A plugin update is never published automatically, even with a passed verdict: a reviewer approves it.
    control.scores = { baseline: 6, candidate: 8 };
    const pluginDraft = await draftWithCases(ws, 2);
    await evaluate(ws, pluginDraft, 2);
    expect((await settled(ws, pluginDraft)).status).toBe("passed");
    expect((await candidates(ws.read, SKILL)).drafts.find((d) => d.id === pluginDraft)!.status).toBe("pending_review");
    expect(await versionsOf(ws.id, SKILL)).toBe(1);
    expect((await call("POST", `/api/drafts/${pluginDraft}/reject`, { token: ws.member, body: { reason: "next" } })).status).toBe(200);

    // An uploaded draft (not a plugin update). A failed verdict: the draft waits for review.
    control.scores = { baseline: 8, candidate: 3 };
    const upload = await call("PUT", `/api/skills/${SKILL}?draft=true`, {
      token: ws.member,
      body: {
        files: [
          { path: "SKILL.md", content: skillMd(SKILL, "Greets people by name.", `# Greeting\n\n${CANDIDATE_MARK}: use the name.\n`) },
          { path: "evals/cases.jsonl", content: casesJsonl(2) },
        ],
      },
    });
    expect(upload.status).toBe(200);
    const draftId = (await json<{ draft_id: string }>(upload)).draft_id;
    await evaluate(ws, draftId, 2);
    expect((await settled(ws, draftId)).status).toBe("failed");
    expect((await candidates(ws.read, SKILL)).drafts.find((d) => d.id === draftId)!.status).toBe("pending_review");
    expect(await versionsOf(ws.id, SKILL)).toBe(1);

    // Evaluated again and passed: the observer publishes it, recorded as an automatic review.
    control.scores = { baseline: 6, candidate: 8 };
    await evaluate(ws, draftId, 2);
    expect((await settled(ws, draftId)).status).toBe("passed");
    await until(async () => (await versionsOf(ws.id, SKILL)) === 2, 10_000, "the automatic publish");
    const v2 = await json<{ provenance: Record<string, unknown> }>(
      await call("GET", `/api/skills/${SKILL}/versions/v0002`, { token: ws.read }),
    );
    expect(v2.provenance).toMatchObject({
      draft_id: draftId,
      review: { mode: "auto", approved_by: "learning:auto_publish", evaluation: "passed" },
    });
    expect((await candidates(ws.read, SKILL)).drafts.find((d) => d.id === draftId)!.status).toBe("published");
  });
});
