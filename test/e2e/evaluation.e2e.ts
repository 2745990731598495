/**
 * Replay evaluation on a real `wrangler dev` (docs/evaluation.md) with the scripted OpenAI-compatible
 * model (an `@ms` delay slows each call; judge requests get the scripted judgement): a fast-forward
 * draft with 6 cases evaluated at concurrency 3 with SSE progress frames and the JSON schema sent to
 * the judge; a cancelled evaluation publishes nothing; and a private `wrangler dev` killed
 * mid-evaluation and started again on the same state finishes without repeating finished cases.
 */
import { describe, expect, inject, it } from "vitest";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { SKILL, at, draftOn, ok } from "../support/evaluation-draft.ts";
import { scriptedModelClient, type RecordedRequest } from "../support/scripted-openai.ts";
import { readSseFrames } from "../support/sse.ts";
import { startWranglerDev } from "../support/wrangler-dev.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);
interface Evaluation {
  id: string;
  status: string;
  progress: { total: number; finished: number; running: number; pending: number };
  cases: { index: number; state: string; prompt: string }[];
  report: { verdict: string; summary: Record<string, unknown>; cost: { model_calls: number; judge_calls: number } } | null;
}

const isJudge = (r: RecordedRequest) => (r.body.response_format as { type?: string } | undefined)?.type === "json_schema";
const lastUser = (r: RecordedRequest) => {
  const users = r.body.messages.filter((m) => m.role === "user");
  const c = users.at(-1)?.content;
  return typeof c === "string" ? c : JSON.stringify(c);
};
/** Run requests (not the judge's) per case prompt. */
function runsPerPrompt(requests: RecordedRequest[]): Map<string, number> {
  const out = new Map<string, number>();
  for (const r of requests.filter((x) => !isJudge(x))) out.set(lastUser(r), (out.get(lastUser(r)) ?? 0) + 1);
  return out;
}

async function poll(
  url: string,
  token: string,
  draftId: string,
  until: (e: Evaluation) => boolean,
  what: string,
  timeoutMs = 60_000,
): Promise<Evaluation> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const e = (await ok(await at(url, "GET", `/api/drafts/${draftId}/evaluation`, token), "evaluation")) as unknown as Evaluation;
    if (until(e)) return e;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}: ${JSON.stringify(e.progress)} ${e.status}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

describe("wrangler dev: replay evaluation", () => {
  it("evaluates 6 cases at concurrency 3 with SSE progress frames and a judged report", async () => {
    const { token } = await newWorkspace();
    const modelId = `echo@300:eval-${Math.random().toString(36).slice(2, 10)}`;
    const draftId = await draftOn(baseUrl(), token, modelUrl, modelId, 6);

    const started = await ok(await api("POST", `/api/drafts/${draftId}/evaluate`, { token, body: { concurrency: 3 } }), "evaluate");
    expect(started).toMatchObject({ status: "running", concurrency: 3, progress: { total: 6 } });
    const stream = await api("GET", `/api/drafts/${draftId}/evaluation/stream`, { token });
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const frames = await readSseFrames<{ type: string; evaluation: Evaluation }>(stream);

    const progress = frames.filter((f) => f.type === "progress");
    expect(progress.length).toBeGreaterThan(0);
    for (const f of progress) expect(f.evaluation.progress.running).toBeLessThanOrEqual(3);
    expect(progress.some((f) => f.evaluation.progress.finished > 0 && f.evaluation.progress.finished < 6)).toBe(true);
    const done = frames.at(-1)!;
    expect(done.type).toBe("done");
    expect(done.evaluation.status).toBe("passed");
    expect(done.evaluation.report).toMatchObject({
      verdict: "passed",
      summary: { cases: 6, judged: 6, baseline_mean: 6, candidate_mean: 8 },
    });

    const requests = await models.requests(modelId);
    // Each case: one baseline and one candidate run (echo answers in one step), and one judgement.
    expect([...runsPerPrompt(requests).entries()].sort()).toEqual(Array.from({ length: 6 }, (_, i) => [`Greet person ${i}`, 2]));
    const judge = requests.filter(isJudge);
    expect(judge).toHaveLength(6);
    // The judge's JSON schema went to the server (structured outputs), not a bare json_object.
    const format = judge[0]!.body.response_format as { json_schema: { name: string; schema: { properties: Record<string, unknown> } } };
    expect(format.json_schema.name).toBe("judgement");
    expect(Object.keys(format.json_schema.schema.properties)).toEqual(["baseline_score", "candidate_score", "winner", "reason"]);
    expect(done.evaluation.report!.cost).toMatchObject({ model_calls: 18, judge_calls: 6 });
  });

  it("a cancelled evaluation stops, says cancelled and publishes nothing", async () => {
    const { token } = await newWorkspace();
    const modelId = `echo@4000:eval-cancel-${Math.random().toString(36).slice(2, 10)}`;
    const draftId = await draftOn(baseUrl(), token, modelUrl, modelId, 3);
    await ok(await api("POST", `/api/drafts/${draftId}/evaluate`, { token, body: { concurrency: 1 } }), "evaluate");
    await poll(baseUrl(), token, draftId, (e) => e.progress.running === 1, "a running case");

    const cancelled = (await ok(
      await api("POST", `/api/drafts/${draftId}/evaluation/cancel`, { token }),
      "cancel",
    )) as unknown as Evaluation;
    expect(cancelled.status).toBe("cancelled");
    expect(cancelled.cases.map((c) => c.state)).toEqual(["cancelled", "cancelled", "cancelled"]);
    expect(((await ok(await api("GET", `/api/drafts/${draftId}/evaluation`, { token }), "get")) as { status: string }).status).toBe(
      "cancelled",
    );
    const skill = (await ok(await api("GET", `/api/skills/${SKILL}`, { token }), "skill")) as {
      current_version?: string;
      versions?: unknown[];
    };
    expect(JSON.stringify(skill)).toContain("v0001");
    expect(JSON.stringify(skill)).not.toContain("v0002");
    const drafts = (await ok(await api("GET", `/api/skills/${SKILL}/candidates`, { token }), "candidates")) as {
      drafts: { id: string; status: string }[];
    };
    expect(drafts.drafts.find((d) => d.id === draftId)!.status).toBe("pending_review");
  });

  it("a wrangler dev restart mid-evaluation finishes without repeating finished cases", async () => {
    const persistTo = mkdtempSync(join(tmpdir(), "beaver-eval-restart-"));
    let dev = await startWranglerDev({ persistTo });
    try {
      const adminToken = dev.adminToken;
      const ws = `e2e-${Math.random().toString(36).slice(2, 10)}`;
      await ok(await at(dev.url, "POST", "/api/workspaces", adminToken, { id: ws, name: ws }), "workspace");
      const token = (
        (await ok(await at(dev.url, "POST", "/api/tokens", adminToken, { name: "e2e", scopes: ["admin"], workspace_id: ws }), "token")) as {
          token: string;
        }
      ).token;
      const modelId = `echo@500:eval-restart-${Math.random().toString(36).slice(2, 10)}`;
      const draftId = await draftOn(dev.url, token, modelUrl, modelId, 6);
      await ok(await at(dev.url, "POST", `/api/drafts/${draftId}/evaluate`, token, { concurrency: 1 }), "evaluate");
      const before = await poll(dev.url, token, draftId, (e) => e.progress.finished >= 2, "two finished cases");
      const finishedBefore = before.cases.filter((c) => c.state === "done").map((c) => c.prompt);
      expect(finishedBefore.length).toBeGreaterThanOrEqual(2);

      await dev.kill();
      dev = await startWranglerDev({ persistTo, adminToken });
      const done = await poll(dev.url, token, draftId, (e) => e.status !== "running", "the resumed evaluation", 90_000);
      expect(done.status).toBe("passed");
      expect(done.cases.map((c) => c.state)).toEqual(Array(6).fill("done"));

      const requests = await models.requests(modelId);
      const runs = runsPerPrompt(requests);
      // Cases finished before the restart ran exactly once per arm and were judged once.
      for (const prompt of finishedBefore) {
        expect(runs.get(prompt)).toBe(2);
        expect(requests.filter((r) => isJudge(r) && lastUser(r).includes(`Request:\n${prompt}\n`))).toHaveLength(1);
      }
      for (let i = 0; i < 6; i++) expect(runs.get(`Greet person ${i}`) ?? 0).toBeGreaterThanOrEqual(2);
    } finally {
      await dev.stop();
      rmSync(persistTo, { recursive: true, force: true });
    }
  });
});
