/**
 * Improvement candidates from run evidence (docs/learning.md, "Improvement candidates"): ten real runs
 * activate a skill, five are rated down; the `improvement` job records one `skill_improvement`
 * candidate with exactly those runs as evidence and a deterministic id, a second pass records nothing,
 * and a workspace whose threshold is not reached gets none.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, newSession, scriptedWorkspace, text, replicated } from "../../support/sessions.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { runReceiptTick } from "../../../src/domains/learning/receipts/job.ts";
import { runLocked } from "../../../src/domains/governance/client.ts";
import { improvementCandidateId } from "../../../src/domains/learning/improvement/detect.ts";

type Candidate = {
  id: string;
  kind: string;
  status: string;
  evidence: { skill: string; version: string; runs: string[]; considered: number };
};

async function skillRuns(ws: TestWorkspace, n: number): Promise<{ sid: string; runs: string[] }> {
  const put = await call("PUT", "/api/skills/notes", {
    token: ws.member,
    body: { files: [{ path: "SKILL.md", content: skillMd("notes", "Takes meeting notes. Use when asked for meeting notes.") }] },
  });
  expect(put.status).toBe(200);
  const sid = await newSession(ws);
  const runs: string[] = [];
  for (let i = 0; i < n; i++) {
    const { run_id } = await submitRun(env, sid, {
      workspace_id: ws.id,
      content: `notes ${i}`,
      skills: ["notes"],
      skill_choice: "requested_only",
    });
    expect((await waitForRun(env, sid, run_id, 30_000, ws.id)).status).toBe("completed");
    await replicated(sid); // the run's log reaches D1 after its result (docs/sessions.md)
    runs.push(run_id);
  }
  for (let i = 0; i < 20 && (await runReceiptTick(env, Date.now())).derived > 0; i++);
  return { sid, runs };
}

/** The detection step of the evidence pass, under the workspace lock as the cron runs it. */
const detect = (ws: TestWorkspace) => runLocked(env, ws.id, { kind: "propose_improvements", now: Date.now() }, "try");

const candidatesOf = async (ws: TestWorkspace) =>
  (await json<{ candidates: Candidate[] }>(await call("GET", "/api/skills/notes/candidates", { token: ws.read }))).candidates.filter(
    (c) => c.kind === "skill_improvement",
  );

describe("improvement candidates", () => {
  it("ten runs, five rated down: one candidate with those five as evidence, deterministic and made once", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const { sid, runs } = await skillRuns(ws, 10);
    const down = runs.filter((_, i) => i % 2 === 1);
    for (const r of down)
      expect((await call("POST", `/api/sessions/${sid}/runs/${r}/feedback`, { token: ws.member, body: { rating: "down" } })).status).toBe(
        200,
      );

    await detect(ws);
    const [candidate, ...more] = await candidatesOf(ws);
    expect(more).toEqual([]);
    expect(candidate).toMatchObject({
      kind: "skill_improvement",
      status: "pending",
      evidence: { skill: "notes", version: "v0001", runs: [...down].sort(), considered: 10, bad_share: 0.5 },
    });
    expect(candidate!.id).toBe(await improvementCandidateId({ skill: "notes", version: "v0001", runs: [...down].sort() }));

    await detect(ws);
    expect((await candidatesOf(ws)).map((c) => c.id)).toEqual([candidate!.id]);
  });

  it("records nothing below the configured threshold, or when the job is off", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const current = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const configure = async (improvement: Record<string, unknown>) =>
      expect((await call("PUT", "/api/config", { token: ws.admin, body: { ...current, learning: { improvement } } })).status).toBe(200);
    await configure({ bad_share: 0.8 });
    const { sid, runs } = await skillRuns(ws, 6);
    for (const r of runs.slice(0, 4))
      expect((await call("POST", `/api/sessions/${sid}/runs/${r}/feedback`, { token: ws.member, body: { rating: "down" } })).status).toBe(
        200,
      );
    await detect(ws);
    expect(await candidatesOf(ws)).toEqual([]);

    await configure({ enabled: false, bad_share: 0.5 });
    await detect(ws);
    expect(await candidatesOf(ws)).toEqual([]);

    await configure({ bad_share: 0.5 });
    await detect(ws);
    expect(await candidatesOf(ws)).toHaveLength(1);
  });
});
