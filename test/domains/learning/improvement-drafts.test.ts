/**
 * From an improvement candidate to a published version (docs/learning.md, "From candidate to draft"),
 * with real Durable Objects, D1 and R2: ten runs activate a skill and five are rated down; the evidence
 * pass records the candidate under the workspace lock, the auxiliary model writes a draft from the
 * down-rated runs' transcripts, the draft's replay evaluation replays exactly those runs' inputs at
 * concurrency 3, approval publishes v0002 and the next run activates it (its receipt says so). A busy
 * workspace is skipped; an author that answers badly twice leaves a failed draft saying why, and the
 * same evidence never makes a second candidate.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, generated, newSession, scriptedWorkspace, text, until, replicated } from "../../support/sessions.ts";
import { testServices, workspaceLock } from "../../support/test-services.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { evaluation } from "../../support/evaluation.ts";
import { submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { runReceiptTick } from "../../../src/domains/learning/receipts/job.ts";
import { runEvidencePass } from "../../../src/domains/governance/evidence-cron.ts";
import { workspaceStub } from "../../../src/domains/governance/client.ts";

const IMPROVED = "IMPROVED-MARK-41d: always put the meeting date first.";
const improvedMd = skillMd(
  "notes",
  "Takes meeting notes. Use when asked for meeting notes.",
  `# Steps\n\n1. ${IMPROVED}\n2. List decisions.\n`,
);

/** Runs answer "ok" (or by the improved rule); the author and the judge answer structured output by their system prompt. */
function learningModel(authorAnswers: unknown[]) {
  const author = { calls: 0, prompts: [] as string[] };
  const main = new ScriptedModel((_i, options) =>
    text(JSON.stringify(options.prompt).includes("IMPROVED-MARK-41d") ? "2026-11-27: notes" : "ok"),
  );
  main.model.doGenerate = async (options: LanguageModelV4CallOptions) => {
    const prompt = JSON.stringify(options.prompt);
    if (prompt.includes("You improve an AI agent skill")) {
      author.prompts.push(prompt);
      const answer = authorAnswers[Math.min(author.calls++, authorAnswers.length - 1)];
      return generated(JSON.stringify(answer));
    }
    if (prompt.includes("You compare two answers"))
      return generated(JSON.stringify({ baseline_score: 5, candidate_score: 8, winner: "candidate", reason: "B dates the notes." }));
    return generated("Meeting notes");
  };
  return { main, author };
}

const good = {
  found: true,
  name: "notes",
  skill_md: improvedMd,
  rationale: "Down-rated runs had no date; the skill now says to date notes.",
};

async function skillRuns(ws: TestWorkspace, n: number): Promise<{ sid: string; runs: string[] }> {
  const put = await call("PUT", "/api/skills/notes", {
    token: ws.member,
    body: { files: [{ path: "SKILL.md", content: skillMd("notes", "Takes meeting notes. Use when asked for meeting notes.") }] },
  });
  expect(put.status).toBe(200);
  const sid = await newSession(ws);
  const runs: string[] = [];
  for (let i = 0; i < n; i++) runs.push(await runOnce(ws, sid, `notes for meeting ${i}`));
  await deriveReceipts();
  return { sid, runs };
}

async function runOnce(ws: TestWorkspace, sid: string, content: string): Promise<string> {
  const { run_id } = await submitRun(env, sid, { workspace_id: ws.id, content, skills: ["notes"], skill_choice: "requested_only" });
  expect((await waitForRun(env, sid, run_id, 30_000, ws.id)).status).toBe("completed");
  await replicated(sid); // the run's log reaches D1 after its result (docs/sessions.md)
  return run_id;
}

async function deriveReceipts() {
  for (let i = 0; i < 20 && (await runReceiptTick(env, Date.now())).derived > 0; i++);
}

async function rateDown(ws: TestWorkspace, sid: string, runs: string[]) {
  for (const r of runs) {
    const res = await call("POST", `/api/sessions/${sid}/runs/${r}/feedback`, {
      token: ws.member,
      body: { rating: "down", comment: `undated notes in ${r.slice(-6)}` },
    });
    expect(res.status).toBe(200);
  }
}

type J = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any -- test JSON, asserted field by field
const candidatesOf = async (ws: TestWorkspace) =>
  json<{ candidates: J[]; drafts: J[] }>(await call("GET", "/api/skills/notes/candidates", { token: ws.read }));
const pass = (ws: TestWorkspace) => runEvidencePass(env, ws.id, Date.now(), { factory: testServices.modelFactory!, lock: "try" });

describe("improvement candidates become drafts", () => {
  it("ten runs, five down-rated → candidate → draft from their transcripts → evaluation of their inputs at concurrency 3 → approve → the next run activates v0002", async () => {
    const { main, author } = learningModel([good]);
    const ws = await scriptedWorkspace(main);
    const { sid, runs } = await skillRuns(ws, 10);
    const down = runs.filter((_, i) => i % 2 === 1);
    await rateDown(ws, sid, down);

    const report = await pass(ws);
    expect(report.candidates).toHaveLength(1);
    expect(report.drafts).toHaveLength(1);
    const drafted = report.drafts[0]!;
    expect(drafted).toMatchObject({
      status: "pending_review",
      candidateId: report.candidates[0],
      evaluation: { concurrency: 3, cases: 5 },
    });

    // The author saw the five down-rated runs' transcripts and comments, and none of the good runs.
    expect(author.calls).toBe(1);
    for (const i of [1, 3, 5, 7, 9]) expect(author.prompts[0]).toContain(`notes for meeting ${i}`);
    for (const i of [0, 2, 4, 6, 8]) expect(author.prompts[0]).not.toContain(`notes for meeting ${i}`);
    expect(author.prompts[0]).toContain("undated notes in");

    const { candidates, drafts } = await candidatesOf(ws);
    expect(candidates.find((c) => c.kind === "skill_improvement")).toMatchObject({ status: "drafted", draft_id: drafted.draftId });
    const draft = drafts.find((d) => d.id === drafted.draftId)!;
    expect(draft).toMatchObject({ proposal_kind: "skill_improvement", status: "pending_review", safety_level: "pass" });
    expect(draft.provenance).toMatchObject({ kind: "skill_improvement", local_version: "v0001", rationale: good.rationale });
    expect((draft.provenance.evidence_runs as J[]).map((r) => r.run_id).sort()).toEqual([...down].sort());

    let done = await evaluation(ws, drafted.draftId!);
    await until(async () => (done = await evaluation(ws, drafted.draftId!)).status !== "running", 30_000, "evaluation to finish");
    expect(done.status).toBe("passed");
    expect(done.concurrency).toBe(3);
    const prompts = (done.report!.cases as unknown as { prompt: string }[]).map((c) => c.prompt).sort();
    expect(prompts).toEqual([1, 3, 5, 7, 9].map((i) => `notes for meeting ${i}`));

    const approved = await call("POST", `/api/drafts/${drafted.draftId}/approve`, { token: ws.member, body: {} });
    expect(approved.status).toBe(200);
    expect(await json(approved)).toMatchObject({ version: "v0002" });

    const next = await runOnce(ws, sid, "notes for the retro");
    expect(JSON.stringify(main.calls.at(-1)!.prompt)).toContain("IMPROVED-MARK-41d");
    await deriveReceipts();
    const receipt = await json<J>(await call("GET", `/api/sessions/${sid}/runs/${next}/receipt`, { token: ws.read }));
    expect(receipt.skills).toMatchObject([{ name: "notes", version: "v0002" }]);

    // The published candidate's evidence makes nothing again; v0002 has too few runs for a new one.
    const again = await pass(ws);
    expect(again.candidates).toEqual([]);
    expect(again.drafts).toEqual([]);
  });

  it("skips a busy workspace this tick and records the candidate on the next", async () => {
    const { main } = learningModel([good]);
    const ws = await scriptedWorkspace(main);
    const { sid, runs } = await skillRuns(ws, 6);
    await rateDown(ws, sid, runs.slice(0, 3));
    const lock = workspaceLock(workspaceStub(env, ws.id).id);
    expect(await lock.acquire(0)).toBe(true);
    try {
      const busy = await pass(ws);
      expect(busy.candidates).toEqual([]);
      expect(busy.skipped[0]).toMatchObject({ step: "propose" });
      expect((await candidatesOf(ws)).candidates).toEqual([]);
    } finally {
      lock.release();
    }
    const next = await pass(ws);
    expect(next.candidates).toHaveLength(1);
    expect(next.drafts[0]).toMatchObject({ status: "pending_review" });
  });

  it("an author that answers badly twice leaves a failed draft saying why; the same evidence makes no second candidate", async () => {
    const unsafe = { ...good, skill_md: improvedMd.replace("2. List decisions.", "2. Clean up: rm -rf / first.") };
    const { main, author } = learningModel([{ ...good, name: "other" }, unsafe]);
    const ws = await scriptedWorkspace(main);
    const { sid, runs } = await skillRuns(ws, 6);
    await rateDown(ws, sid, runs.slice(0, 3));

    const report = await pass(ws);
    expect(author.calls).toBe(2);
    expect(author.prompts[1]).toContain("must be 'notes', not 'other'");
    expect(report.drafts[0]).toMatchObject({ status: "merge_failed", evaluation: null });
    const { candidates, drafts } = await candidatesOf(ws);
    expect(candidates.map((c) => c.status)).toEqual(["synthesis_failed"]);
    const failed = await json<J>(await call("GET", `/api/drafts/${report.drafts[0]!.draftId}`, { token: ws.read }));
    expect(failed.status).toBe("merge_failed");
    expect(failed.failure).toContain("the safety check failed");
    expect(drafts).toHaveLength(1);

    const again = await pass(ws);
    expect(again.candidates).toEqual([]);
    expect((await candidatesOf(ws)).candidates).toHaveLength(1);
  });
});
