/**
 * New-skill candidates (docs/learning.md, "New-skill candidates") with real Durable Objects, D1 and
 * R2: three similar successful chat runs without a skill (and one unrelated) make one `new_skill`
 * candidate with exactly those three as evidence and a deterministic id; the auxiliary model writes
 * the skill from their transcripts; the draft's evaluation replays their three inputs; the same runs
 * never make a second candidate, and one more similar run alone makes none.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, generated, newSession, scriptedWorkspace, text, until, replicated } from "../../support/sessions.ts";
import { testServices } from "../../support/test-services.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { evaluation } from "../../support/evaluation.ts";
import { submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { runReceiptTick } from "../../../src/domains/learning/receipts/job.ts";
import { runEvidencePass } from "../../../src/domains/governance/evidence-cron.ts";
import { newSkillCandidateId } from "../../../src/domains/learning/improvement/new-skill.ts";

const STANDUP = skillMd(
  "standup-summary",
  "Summarizes a team's standup notes. Use when asked to summarize standup notes.",
  "# Steps\n\n1. List what each person did.\n2. Name the blockers.\n",
);

function learningModel() {
  const author = { calls: 0, prompts: [] as string[] };
  const main = new ScriptedModel(() => text("Done: a summary."));
  main.model.doGenerate = async (options: LanguageModelV4CallOptions) => {
    const prompt = JSON.stringify(options.prompt);
    if (prompt.includes("You write AI agent skills")) {
      author.calls++;
      author.prompts.push(prompt);
      return generated(JSON.stringify({ found: true, name: "standup-summary", skill_md: STANDUP, rationale: "Three standup summaries." }));
    }
    if (prompt.includes("You compare two answers"))
      return generated(JSON.stringify({ baseline_score: 6, candidate_score: 7, winner: "candidate", reason: "Structured." }));
    return generated("Title");
  };
  return { main, author };
}

async function chatRun(ws: TestWorkspace, sid: string, content: string): Promise<string> {
  const { run_id } = await submitRun(env, sid, { workspace_id: ws.id, content });
  expect((await waitForRun(env, sid, run_id, 30_000, ws.id)).status).toBe("completed");
  await replicated(sid); // the run's log reaches D1 after its result (docs/sessions.md)
  for (let i = 0; i < 20 && (await runReceiptTick(env, Date.now())).derived > 0; i++);
  return run_id;
}

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test JSON, asserted field by field
const pass = (ws: TestWorkspace) => runEvidencePass(env, ws.id, Date.now(), { factory: testServices.modelFactory!, lock: "try" });

describe("new-skill candidates", () => {
  it("three similar successful runs without a skill → one deterministic candidate → a new skill's draft evaluated on their inputs", async () => {
    const { main, author } = learningModel();
    const ws = await scriptedWorkspace(main);
    const sid = await newSession(ws);
    const similar = [
      await chatRun(ws, sid, "Summarize the standup notes for team alpha"),
      await chatRun(ws, sid, "Please summarize standup notes of team beta"),
    ];
    const other = await chatRun(ws, sid, "What time is it in Tokyo right now?");
    // Two similar runs are not a pattern yet (min_runs 3).
    expect((await pass(ws)).candidates).toEqual([]);
    similar.push(await chatRun(ws, sid, "summarize the standup notes for the gamma team"));

    const report = await pass(ws);
    expect(report.candidates).toEqual([await newSkillCandidateId([...similar].sort())]);
    expect(report.drafts[0]).toMatchObject({ status: "pending_review", evaluation: { cases: 3, concurrency: 3 } });
    expect(author.calls).toBe(1);
    expect(author.prompts[0]).toContain("team alpha");
    expect(author.prompts[0]).not.toContain("Tokyo");

    const { candidates } = await json<{ candidates: J[] }>(await call("GET", "/api/candidates?kind=new_skill", { token: ws.read }));
    expect(candidates).toHaveLength(1);
    expect(candidates[0]).toMatchObject({
      kind: "new_skill",
      skill: "standup-summary",
      status: "drafted",
      evidence: { runs: [...similar].sort(), terms: expect.arrayContaining(["standup", "summarize"]) },
    });
    expect(candidates[0]!.evidence.runs).not.toContain(other);
    // Each evidence run comes with its session, for the console's links.
    expect(candidates[0]!.evidence_runs).toEqual([...similar].sort().map((run_id) => ({ run_id, session_id: sid })));

    const draftId = report.drafts[0]!.draftId!;
    const draft = await json<J>(await call("GET", `/api/drafts/${draftId}`, { token: ws.read }));
    expect(draft).toMatchObject({ skill: "standup-summary", proposal_kind: "new_skill", status: "pending_review" });
    let done = await evaluation(ws, draftId);
    await until(async () => (done = await evaluation(ws, draftId)).status !== "running", 30_000, "evaluation to finish");
    expect(done.status).toBe("passed");
    expect((done.report!.cases as unknown as { prompt: string }[]).map((c) => c.prompt).sort()).toEqual([
      "Please summarize standup notes of team beta",
      "Summarize the standup notes for team alpha",
      "summarize the standup notes for the gamma team",
    ]);

    // The same runs never make a second candidate; one more similar run alone is not a pattern.
    expect((await pass(ws)).candidates).toEqual([]);
    await chatRun(ws, sid, "summarize standup notes for team delta");
    expect((await pass(ws)).candidates).toEqual([]);
    const all = await json<{ candidates: J[] }>(await call("GET", "/api/candidates", { token: ws.read }));
    expect(all.candidates.map((c) => c.kind)).toEqual(["new_skill"]);
  });
});
