/**
 * The learning pipeline in the Worker: a plugin whose new upstream and the local version edit the
 * same SKILL.md lines → sync → a merged draft (the merge model is a fake OpenAI-compatible server
 * behind the outbound fetch, so the real provider and structured-output path run) → the review API:
 * detail with diffs and reports, approve through the gates (evaluation_required, skip with a reason,
 * concurrent approvals publish once), reject, regenerate after a failed merge, list filters and
 * pagination, scopes and other workspaces.
 */
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { runLocked } from "../../../src/domains/governance/client.ts";
import { runLearningTick } from "../../../src/domains/governance/learning-drafts.ts";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { setOutboundFetch } from "../../support/test-services.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { candidates, plugin, pluginPackage, post, uploadPackage, type J, type SkillFiles } from "../../support/plugins.ts";
import { ScriptedModel, generated, newSession, scriptedWorkspace, text, replicated } from "../../support/sessions.ts";
import { submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { runReceiptTick } from "../../../src/domains/learning/receipts/job.ts";

const STEPS = "# Steps\n\n1. Sketch the panels.\n2. Ink the lines.\n3. Letter the balloons.\n\n## Notes\n\nKeep it short.\n";
const LOCAL_RULE = "2. Ink the lines with waterproof ink (regular ink smears under colour).";
const UPSTREAM_LINE = "2. Ink the lines, then colour flat.";
const MERGED_LINE = "2. Ink the lines with waterproof ink (regular ink smears under colour), then colour flat.";

const V1: SkillFiles = { "SKILL.md": skillMd("comic", "Draws comics.", STEPS), "ref/style.md": "Use thick outlines.\n" };
const LOCAL: SkillFiles = { ...V1, "SKILL.md": skillMd("comic", "Draws comics.", STEPS.replace("2. Ink the lines.", LOCAL_RULE)) };
const V2: SkillFiles = {
  ...V1,
  "SKILL.md": skillMd(
    "comic",
    "Draws comics.",
    STEPS.replace("2. Ink the lines.", UPSTREAM_LINE).replace("Keep it short.", "Keep it short: four panels."),
  ),
};

/** A fake OpenAI-compatible server: each chat completion answers the next of `answers` (JSON text). */
function fakeModelServer(answers: unknown[]) {
  const requests: Record<string, unknown>[] = [];
  const fetch = async (input: RequestInfo | URL, init?: RequestInit): Promise<Response> => {
    const url = new URL(input instanceof Request ? input.url : String(input));
    if (url.host !== "models.test") return new Response("not found", { status: 404 });
    const body = JSON.parse(String(init?.body)) as Record<string, unknown>;
    requests.push(body);
    const next = answers.shift();
    const content = typeof next === "string" ? next : JSON.stringify(next ?? {});
    return Response.json({
      id: `cmpl-${requests.length}`,
      object: "chat.completion",
      created: 0,
      model: body.model,
      choices: [{ index: 0, message: { role: "assistant", content }, finish_reason: "stop" }],
      usage: { prompt_tokens: 10, completion_tokens: 10, total_tokens: 20 },
    });
  };
  return { fetch, requests, answers };
}

const combine = (confidence = 0.9) => ({
  hunks: [
    {
      id: 0,
      decision: "combine",
      merged: `${MERGED_LINE}\n`,
      reason: "keeps the local ink lesson and adds upstream colouring",
      confidence,
    },
  ],
});

const publishLocal = (ws: TestWorkspace, files: SkillFiles) =>
  call("PUT", "/api/skills/comic", {
    token: ws.member,
    body: { files: Object.entries(files).map(([path, d]) => ({ path, content: d as string })) },
  });

/** A workspace with the plugin enabled (v0001), a local edit (v0002) and the new upstream uploaded. */
async function threeWay(answers: unknown[]): Promise<{ ws: TestWorkspace; model: ReturnType<typeof fakeModelServer> }> {
  const model = fakeModelServer(answers);
  setOutboundFetch(model.fetch);
  const ws = await newWorkspace();
  const config = { auxiliary_model: { provider: "openai-compatible", id: "merge-model", base_url: "https://models.test/v1" } };
  expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);
  await uploadPackage(ws.admin, await pluginPackage("comics", "1.0.0", { comic: V1 }));
  expect((await post(ws.admin, "/api/plugins/comics/enable")).status).toBe(200);
  expect((await publishLocal(ws, LOCAL)).status).toBe(200);
  await uploadPackage(ws.admin, await pluginPackage("comics", "1.1.0", { comic: V2 }));
  return { ws, model };
}

const get = async (token: string, path: string) => {
  const res = await call("GET", path, { token });
  return { status: res.status, body: await json<J>(res) };
};
const draftOf = (sync: J) => (sync.synthesis as { candidate_id: string; draft_id: string | null; status: string }[])[0]!;

afterEach(() => setOutboundFetch(null));

describe("merged drafts from a three-way plugin update", () => {
  it("sync merges the conflicting lines with the model, and the draft shows decisions, preservation, diffs and safety", async () => {
    const { ws, model } = await threeWay([combine()]);
    const sync = await post(ws.admin, "/api/plugins/sync");
    expect(sync.status).toBe(200);
    const s = draftOf(sync.body);
    expect(s).toMatchObject({ status: "pending_review" });
    // Structured output went out as a JSON schema, not a bare json_object.
    expect(model.requests).toHaveLength(1);
    expect(model.requests[0]!.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "merge_hunks", schema: { type: "object" } },
    });

    const d = await get(ws.read, `/api/drafts/${s.draft_id}`);
    expect(d.status).toBe(200);
    expect(d.body).toMatchObject({
      status: "pending_review",
      skill: "comic",
      merge_mode: "three_way",
      local_version: "v0002",
      confidence: 0.9,
      safety: { level: "pass" },
      merge: { resolver: "auxiliary:merge-model", resolver_calls: 1, decisions: [{ file: "SKILL.md", decision: "combine", by: "model" }] },
      evaluation: null,
    });
    const preservation = d.body.preservation as { local: { text: string; kept: string }[]; lost_local: number };
    expect(preservation.lost_local).toBe(0);
    // The merge record: per change between local and upstream, what the merge did and why.
    const record = (d.body.merge as { record: J[] }).record;
    expect(record.find((c) => c.side === "local")).toEqual({
      side: "local",
      kind: "rule",
      text: LOCAL_RULE,
      label: "preserved",
      kept: "reworded",
      change_reason: "combine (model): keeps the local ink lesson and adds upstream colouring",
      hunk: { file: "SKILL.md", hunk: 0, decision: "combine" },
    });
    expect(record.find((c) => c.text === "Keep it short: four panels.")).toMatchObject({
      side: "upstream",
      label: "adopted",
      kept: "verbatim",
      change_reason: "only upstream changed this region: the line merge kept it",
      hunk: null,
    });
    expect(preservation.local).toEqual([{ kind: "rule", text: LOCAL_RULE, kept: "reworded" }]);
    const diffs = d.body.diffs as {
      current: { version: string; files: { path: string; unified: string }[] };
      upstream: { files: { unified: string }[] };
    };
    expect(diffs.current.version).toBe("v0002");
    expect(diffs.current.files.map((f) => f.path)).toEqual(["SKILL.md"]);
    expect(diffs.current.files[0]!.unified).toContain(`-${LOCAL_RULE}\n+${MERGED_LINE}\n`);
    expect(diffs.current.files[0]!.unified).toContain("+Keep it short: four panels.");
    expect(diffs.upstream.files[0]!.unified).toContain(`-${UPSTREAM_LINE}\n+${MERGED_LINE}\n`);
    // The candidate is drafted; a re-sync neither merges again nor asks the model.
    expect((await candidates(ws.read, "comic")).candidates[0]).toMatchObject({ status: "drafted", draft_id: s.draft_id });
    expect(draftOf((await post(ws.admin, "/api/plugins/sync")).body)).toBeUndefined();
    expect(model.requests).toHaveLength(1);
  });

  it("approve needs an evaluation or a reasoned skip, publishes once under concurrency, and records the review in provenance", async () => {
    const { ws } = await threeWay([combine()]);
    const id = draftOf((await post(ws.admin, "/api/plugins/sync")).body).draft_id!;
    // The merged line rewrote upstream's new ink step past recognition: a dropped upstream addition to acknowledge.
    expect((await get(ws.read, `/api/drafts/${id}`)).body.acknowledgements_required).toEqual([
      { id: "dropped_upstream:0", kind: "dropped_upstream", message: `the draft drops the upstream addition "${UPSTREAM_LINE}"` },
    ]);
    const unacked = await post(ws.member, `/api/drafts/${id}/approve`);
    expect(unacked.status).toBe(409);
    expect(unacked.body.error).toMatchObject({ code: "conflict", details: { gate: "acknowledgements" } });
    const none = await post(ws.member, `/api/drafts/${id}/approve`, { acknowledge: ["dropped_upstream:0"] });
    expect(none.status).toBe(409);
    expect(none.body.error).toMatchObject({ code: "evaluation_required", details: { gate: "evaluation" } });
    expect((await post(ws.member, `/api/drafts/${id}/approve`, { skip_evaluation: true })).status).toBe(400);
    expect((await post(ws.read, `/api/drafts/${id}/approve`, { skip_evaluation: true, reason: "x" })).status).toBe(403);
    const other = await newWorkspace();
    expect((await post(other.member, `/api/drafts/${id}/approve`, { skip_evaluation: true, reason: "x" })).status).toBe(404);
    expect((await get(other.read, `/api/drafts/${id}`)).status).toBe(404);

    const body = { skip_evaluation: true, reason: "reviewed the merge by hand", acknowledge: ["dropped_upstream:0"] };
    const results = await Promise.all([
      post(ws.member, `/api/drafts/${id}/approve`, body),
      post(ws.member, `/api/drafts/${id}/approve`, body),
    ]);
    expect(results.map((r) => r.status).sort()).toEqual([200, 409]);
    expect(results.find((r) => r.status === 200)!.body).toMatchObject({
      status: "published",
      version: "v0003",
      plugin_state_updated: true,
    });

    const v = await get(ws.read, "/api/skills/comic/versions/v0003");
    expect(v.body).toMatchObject({
      provenance: {
        kind: "plugin_skill_update",
        merge_mode: "three_way",
        draft_id: id,
        review: { mode: "manual", evaluation: "none", skip_evaluation: true, skip_reason: "reviewed the merge by hand" },
      },
    });
    const file = await call("GET", "/api/skills/comic/versions/v0003/file?path=SKILL.md", { token: ws.read });
    expect(await file.text()).toContain(MERGED_LINE);
    const st = (await plugin(ws.read, "comics")).skills[0]!;
    expect(st).toMatchObject({ status: "synced", accepted_beaver_version: "v0003", pending_candidate_id: null });
    expect((await get(ws.read, `/api/drafts/${id}`)).body).toMatchObject({ status: "published", published_version: "v0003" });
  });

  it("an invalid model answer is retried once; two fail the merge cleanly, and regenerate supersedes the failed draft", async () => {
    const { ws, model } = await threeWay([
      "{not json",
      { hunks: [{ id: 3, decision: "combine", merged: "x", reason: "r", confidence: 0.5 }] },
      combine(0.7),
    ]);
    const s = draftOf((await post(ws.admin, "/api/plugins/sync")).body);
    expect(s.status).toBe("merge_failed");
    expect(model.requests).toHaveLength(2);
    const failed = await get(ws.read, `/api/drafts/${s.draft_id}`);
    expect(failed.body).toMatchObject({ status: "merge_failed", merge: { resolver_calls: 2 } });
    expect(String(failed.body.failure)).toMatch(/no valid answer after 2 attempts/);
    expect((await post(ws.member, `/api/drafts/${s.draft_id}/approve`, { skip_evaluation: true, reason: "x" })).status).toBe(409);
    expect((await candidates(ws.read, "comic")).candidates[0]).toMatchObject({ status: "synthesis_failed" });

    const again = await post(ws.member, `/api/drafts/${s.draft_id}/regenerate`);
    expect(again.status).toBe(200);
    const fresh = again.body.draft as { id: string; status: string; confidence: number };
    expect(fresh).toMatchObject({ status: "pending_review", confidence: 0.7 });
    expect((await get(ws.read, `/api/drafts/${s.draft_id}`)).body).toMatchObject({ status: "superseded", superseded_by: fresh.id });
    expect((await candidates(ws.read, "comic")).candidates[0]).toMatchObject({ status: "drafted", draft_id: fresh.id });
    // Two regenerations of the same draft at once record one new draft.
    model.answers.push(combine(0.6), combine(0.5));
    const twice = await Promise.all([
      post(ws.member, `/api/drafts/${fresh.id}/regenerate`),
      post(ws.member, `/api/drafts/${fresh.id}/regenerate`),
    ]);
    expect(twice.map((r) => r.status).sort()).toEqual([200, 409]);
    const open = (await get(ws.read, "/api/drafts?skill=comic&status=pending_review")).body.drafts as { id: string }[];
    expect(open).toHaveLength(1);
  });

  it("reject keeps history; lists filter by skill and status and page newest first", async () => {
    const { ws } = await threeWay([combine()]);
    const id = draftOf((await post(ws.admin, "/api/plugins/sync")).body).draft_id!;
    expect((await post(ws.member, `/api/drafts/${id}/reject`, {})).status).toBe(400);
    const r = await post(ws.member, `/api/drafts/${id}/reject`, { reason: "the colouring step is wrong for us" });
    expect(r.body).toMatchObject({ status: "rejected" });
    expect((await get(ws.read, `/api/drafts/${id}`)).body).toMatchObject({
      status: "rejected",
      review_reason: "the colouring step is wrong for us",
    });
    expect((await post(ws.member, `/api/drafts/${id}/reject`, { reason: "again" })).status).toBe(409);
    expect((await candidates(ws.read, "comic")).candidates[0]).toMatchObject({ status: "rejected" });
    // The current version is untouched.
    expect((await get(ws.read, "/api/skills/comic")).body).toMatchObject({ current_version: "v0002" });

    const regenerated = await post(ws.member, `/api/drafts/${id}/regenerate`);
    expect(regenerated.status).toBe(200);
    const newId = (regenerated.body.draft as { id: string }).id;
    const all = await get(ws.read, "/api/drafts?skill=comic");
    expect((all.body.drafts as { id: string }[]).map((d) => d.id)).toEqual([newId, id]);
    const page1 = await get(ws.read, "/api/drafts?limit=1");
    expect((page1.body.drafts as { id: string }[]).map((d) => d.id)).toEqual([newId]);
    const page2 = await get(ws.read, `/api/drafts?limit=1&before=${page1.body.next_before}&before_id=${page1.body.next_before_id}`);
    expect((page2.body.drafts as { id: string }[]).map((d) => d.id)).toEqual([id]);
    expect((await get(ws.read, "/api/drafts?status=rejected")).body.drafts).toMatchObject([{ id, status: "rejected" }]);
    expect((await get(ws.read, "/api/drafts?skill=other")).body.drafts).toEqual([]);
  });

  it("a supporting text file both sides edited in different lines merges without a model; the cron job merges what a sync left", async () => {
    const model = fakeModelServer([]);
    setOutboundFetch(model.fetch);
    const ws = await newWorkspace();
    const style = "Use thick outlines.\nShade with hatching.\nLetter in capitals.\n";
    const base: SkillFiles = { ...V1, "ref/style.md": style };
    await uploadPackage(ws.admin, await pluginPackage("comics", "1.0.0", { comic: base }));
    expect((await post(ws.admin, "/api/plugins/comics/enable")).status).toBe(200);
    expect((await publishLocal(ws, { ...base, "ref/style.md": style.replace("thick", "brush") })).status).toBe(200);
    await uploadPackage(
      ws.admin,
      await pluginPackage("comics", "1.1.0", { comic: { ...base, "ref/style.md": style.replace("capitals", "mixed case") } }),
    );
    // A sync that does not go through the route (a Gitea push, the plugin cron) leaves the candidate waiting.
    await runLocked(env, ws.id, { kind: "sync_plugins" });
    expect((await candidates(ws.read, "comic")).candidates[0]).toMatchObject({
      status: "pending_synthesis",
      merge_plan: { conflicts: [{ path: "ref/style.md", kind: "both_modified" }], blocked: true },
    });
    await runLearningTick(env);
    const c = (await candidates(ws.read, "comic")).candidates[0]!;
    expect(c).toMatchObject({ status: "drafted", merge_plan: { conflicts: [], blocked: false } });
    expect(model.requests).toHaveLength(0);
    const d = await get(ws.read, `/api/drafts/${c.draft_id}`);
    expect(d.body).toMatchObject({ status: "pending_review", confidence: 1, merge: { merged_files: ["ref/style.md"], decisions: [] } });
    const ok = await post(ws.member, `/api/drafts/${c.draft_id}/approve`, { skip_evaluation: true, reason: "clean merge" });
    expect(ok.body).toMatchObject({ version: "v0003" });
    const file = await call("GET", "/api/skills/comic/versions/v0003/file?path=ref/style.md", { token: ws.read });
    expect(await file.text()).toBe("Use brush outlines.\nShade with hatching.\nLetter in mixed case.\n");
  });

  it("a fast-forward draft is approved through the same route", async () => {
    const ws = await newWorkspace();
    await uploadPackage(ws.admin, await pluginPackage("comics", "1.0.0", { comic: V1 }));
    expect((await post(ws.admin, "/api/plugins/comics/enable")).status).toBe(200);
    await uploadPackage(ws.admin, await pluginPackage("comics", "1.1.0", { comic: V2 }));
    await post(ws.admin, "/api/plugins/sync");
    const [draft] = (await get(ws.read, "/api/drafts?skill=comic&status=pending_review")).body.drafts as {
      id: string;
      merge_mode: string;
    }[];
    expect(draft).toMatchObject({ merge_mode: "fast_forward", confidence: null });
    expect((await post(ws.member, `/api/drafts/${draft!.id}/regenerate`)).status).toBe(409);
    const ok = await post(ws.member, `/api/drafts/${draft!.id}/approve`, { skip_evaluation: true, reason: "upstream only" });
    expect(ok.body).toMatchObject({ version: "v0002", plugin_state_updated: true });
  });

  it("the SKILL.md merge request carries the local version's runs where its learned line mattered", async () => {
    const main = new ScriptedModel(() => text("Inked the lines with waterproof ink so the colour does not smear."));
    main.model.doGenerate = async () => generated("Comic inking");
    const ws = await scriptedWorkspace(main);
    await uploadPackage(ws.admin, await pluginPackage("comics", "1.0.0", { comic: V1 }));
    expect((await post(ws.admin, "/api/plugins/comics/enable")).status).toBe(200);
    expect((await publishLocal(ws, LOCAL)).status).toBe(200);
    const sid = await newSession(ws);
    const { run_id } = await submitRun(env, sid, {
      workspace_id: ws.id,
      content: "ink the panels, the colour must not smear",
      skills: ["comic"],
      skill_choice: "requested_only",
    });
    expect((await waitForRun(env, sid, run_id, 30_000, ws.id)).status).toBe("completed");
    await replicated(sid); // the run's log reaches D1 after its result (docs/sessions.md)
    for (let i = 0; i < 20 && (await runReceiptTick(env, Date.now())).derived > 0; i++);
    // The merge model is the fake OpenAI-compatible server (the sync's resolver uses the provider packages).
    const model = fakeModelServer([combine()]);
    setOutboundFetch(model.fetch);
    const current = await json<J>(await call("GET", "/api/config", { token: ws.admin }));
    const aux = { provider: "openai-compatible", id: "merge-model", base_url: "https://models.test/v1" };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: { ...current, auxiliary_model: aux } })).status).toBe(200);
    await uploadPackage(ws.admin, await pluginPackage("comics", "1.1.0", { comic: V2 }));

    const s = draftOf((await post(ws.admin, "/api/plugins/sync")).body);
    expect(s).toMatchObject({ status: "pending_review" });
    const mergePrompt = JSON.stringify(model.requests[0]!.messages);
    expect(mergePrompt).toContain("Evidence: runs of the LOCAL version where its learned lines mattered");
    expect(mergePrompt).toContain(run_id);
    const d = await get(ws.read, `/api/drafts/${s.draft_id}`);
    expect((d.body.merge as { local_evidence: J[] }).local_evidence).toEqual([
      { run_id, outcome: "success", rating: null, lines: [LOCAL_RULE] },
    ]);
  });
});
