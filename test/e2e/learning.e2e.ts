/**
 * The learning pipeline as one flow on a real `wrangler dev` (docs/learning.md, docs/evaluation.md;
 * issue 12's "Done when"): a plugin whose new upstream edits SKILL.md in lines the local version also
 * edited → sync → a three-way candidate → a merged draft (the scripted OpenAI-compatible model answers
 * the conflict hunk through structured output) whose preservation report keeps the local rule →
 * safety passes → the replay evaluation of the 6 cases the upstream ships in `evals/cases.jsonl` at
 * concurrency 3, watched over SSE → approve without skipping the evaluation (the gate reads its
 * verdict) → v0003 is current with the draft and the review in its provenance → rollback restores
 * v0002 byte-identical. A second, smaller test approves a merged draft with a reasoned
 * `skip_evaluation` instead, and shows the skip recorded in provenance.
 */
import { describe, expect, inject, it } from "vitest";
import { packTar } from "modern-tar";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient, type RecordedRequest } from "../support/scripted-openai.ts";
import { readSseFrames } from "../support/sse.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

const SKILL = "e2e-comic";
const md = (body: string) => `---\nname: ${SKILL}\ndescription: Draws four-panel comics.\n---\n\n# Steps\n\n${body}`;
const BASE = md("1. Sketch the panels.\n2. Ink the lines.\n3. Letter the balloons.\n\n## Notes\n\nKeep it short.\n");
const LOCAL_RULE = "- Use waterproof ink: regular ink smears when coloured.";
const LOCAL = BASE.replace("2. Ink the lines.\n", `2. Ink the lines.\n${LOCAL_RULE}\n`);
const UPSTREAM = BASE.replace("2. Ink the lines.\n", "2. Ink the lines, then colour flat.\n").replace(
  "Keep it short.",
  "Keep it short: four panels.",
);
const MERGED_HUNK = `2. Ink the lines, then colour flat.\n${LOCAL_RULE}\n`;
const CASES = 6;
const casePrompt = (i: number) => `Draw a comic about cat ${i}`;
/** The upstream ships replay-evaluation cases (docs/evaluation.md, "Cases"); the local version never had them. */
const CASES_JSONL = Array.from({ length: CASES }, (_, i) =>
  JSON.stringify({ prompt: casePrompt(i), expect: `four panels about cat ${i}` }),
).join("\n");

async function pluginPackage(version: string, files: Record<string, string>): Promise<Uint8Array> {
  const all: Record<string, string> = {
    "beaver.plugin.json": JSON.stringify({
      schema_version: 1,
      id: "e2e-learning",
      name: "E2E learning",
      version,
      skills: [{ name: SKILL, path: `skills/${SKILL}` }],
    }),
    ...Object.fromEntries(Object.entries(files).map(([path, body]) => [`skills/${SKILL}/${path}`, body])),
  };
  const tar = await packTar(
    Object.entries(all).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).byteLength, mode: 0o644 }, body })),
  );
  return new Uint8Array(await new Response(new Blob([tar]).stream().pipeThrough(new CompressionStream("gzip"))).arrayBuffer());
}

async function upload(token: string, bytes: Uint8Array): Promise<void> {
  const res = await fetch(`${baseUrl()}/api/plugins/packages`, {
    method: "PUT",
    headers: { Authorization: `Bearer ${token}`, "Content-Type": "application/gzip" },
    body: bytes,
  });
  expect(res.status).toBe(200);
}

const call = async (method: string, path: string, token: string, body?: unknown) => {
  const res = await api(method, path, { token, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> & { error?: { code: string } } };
};
const fileOf = async (token: string, version: string) =>
  (await api("GET", `/api/skills/${SKILL}/versions/${version}/file?path=SKILL.md`, { token })).text();
const currentOf = async (token: string) =>
  (await call("GET", `/api/skills/${SKILL}`, token)).body as {
    current_version: string;
    current: Record<string, unknown> & { tree_hash: string };
  };

/** The structured output a request asked for: `response_format.json_schema.name`, when it is a JSON schema. */
const schemaName = (r: RecordedRequest) => {
  const f = r.body.response_format as { type?: string; json_schema?: { name?: string } } | undefined;
  return f?.type === "json_schema" ? (f.json_schema?.name ?? null) : null;
};
const schemaOf = (r: RecordedRequest) =>
  (r.body.response_format as { json_schema: { schema: { properties: Record<string, unknown> } } }).json_schema.schema;
const lastUser = (r: RecordedRequest) => {
  const c = r.body.messages.filter((m) => m.role === "user").at(-1)?.content;
  return typeof c === "string" ? c : JSON.stringify(c);
};

interface Evaluation {
  status: string;
  concurrency: number;
  progress: { total: number; finished: number; running: number; pending: number };
  cases: { index: number; state: string; prompt: string }[];
  report: {
    verdict: string;
    reasons: string[];
    summary: Record<string, unknown>;
    cost: { model_calls: number; judge_calls: number };
  } | null;
}

/**
 * A workspace whose skill has v0001 (plugin 1.0.0) and a local edit v0002, a plugin 1.1.0 upstream
 * that edits the same lines (and ships the cases), and a sync that merged them into a draft; the
 * merge model (the workspace's auxiliary model) answers the one conflict hunk with `combine`.
 */
async function mergedDraft(token: string, config: Record<string, unknown>, mergeModel: string) {
  expect((await api("PUT", "/api/config", { token, body: config })).status).toBe(200);
  await upload(token, await pluginPackage("1.0.0", { "SKILL.md": BASE }));
  expect((await call("POST", "/api/plugins/e2e-learning/enable", token)).body).toMatchObject({
    mirrored: [{ skill: SKILL, version: "v0001" }],
  });
  const local = await call("PUT", `/api/skills/${SKILL}`, token, { files: [{ path: "SKILL.md", content: LOCAL }] });
  expect(local.body).toMatchObject({ version: "v0002" });
  const v2 = await currentOf(token);
  const v2Bytes = await fileOf(token, "v0002");
  await upload(token, await pluginPackage("1.1.0", { "SKILL.md": UPSTREAM, "evals/cases.jsonl": CASES_JSONL }));

  const answer = {
    id: 0,
    decision: "combine",
    merged: MERGED_HUNK,
    reason: "adopt upstream colouring, keep the local ink rule",
    confidence: 0.92,
  };
  await models.script(mergeModel, [{ text: JSON.stringify({ hunks: [answer] }) }]);
  const sync = await call("POST", "/api/plugins/sync", token);
  expect(sync.status).toBe(200);
  expect(sync.body).toMatchObject({
    plugins: [{ skills: [{ skill: SKILL, action: "three_way", candidate_status: "pending_synthesis" }] }],
  });
  const [synthesis] = sync.body.synthesis as { draft_id: string; status: string }[];
  expect(synthesis).toMatchObject({ status: "pending_review" });

  const draft = await call("GET", `/api/drafts/${synthesis!.draft_id}`, token);
  expect(draft.body).toMatchObject({
    status: "pending_review",
    merge_mode: "three_way",
    local_version: "v0002",
    confidence: 0.92,
    safety: { level: "pass" },
    merge: { decisions: [{ file: "SKILL.md", decision: "combine", confidence: 0.92 }] },
    preservation: { local: [{ kind: "rule", text: LOCAL_RULE, kept: "verbatim" }], lost_local: 0 },
  });
  return { draftId: synthesis!.draft_id, v2Tree: v2.current.tree_hash, v2Bytes };
}

describe("wrangler dev: learning pipeline", () => {
  it("sync → three-way draft keeping the local rule → evaluation of 6 cases at concurrency 3 over SSE → approve → v0003 → rollback to v0002", async () => {
    const { token } = await newWorkspace();
    const tag = Math.random().toString(36).slice(2, 10);
    // Runs answer on the main model (a little slow, so progress shows); the merge and the judge use the auxiliary one.
    const runModel = `echo@200:learn-run-${tag}`;
    const auxModel = `echo:learn-aux-${tag}`;
    const config = {
      model: { provider: "openai-compatible", id: runModel, base_url: `${modelUrl}/v1` },
      auxiliary_model: { provider: "openai-compatible", id: auxModel, base_url: `${modelUrl}/v1` },
    };
    const { draftId, v2Tree, v2Bytes } = await mergedDraft(token, config, auxModel);

    // Evaluation: 3 lanes claim 3 cases at once; progress frames over SSE until the verdict.
    const started = await call("POST", `/api/drafts/${draftId}/evaluate`, token, { concurrency: 3 });
    expect(started.status).toBe(202);
    expect(started.body).toMatchObject({
      status: "running",
      concurrency: 3,
      baseline_version: "v0002",
      progress: { total: CASES, finished: 0, running: 3, pending: 3 },
    });
    const stream = await api("GET", `/api/drafts/${draftId}/evaluation/stream`, { token });
    expect(stream.status).toBe(200);
    expect(stream.headers.get("content-type")).toContain("text/event-stream");
    const frames = await readSseFrames<{ type: string; evaluation: Evaluation }>(stream);
    const progress = frames.filter((f) => f.type === "progress");
    expect(progress.length).toBeGreaterThan(0);
    for (const f of progress) {
      expect(f.evaluation.progress.running).toBeLessThanOrEqual(3);
      expect(f.evaluation.progress.total).toBe(CASES);
    }
    const done = frames.at(-1)!;
    expect(done.type).toBe("done");
    expect(done.evaluation.status).toBe("passed");
    expect(done.evaluation.report).toMatchObject({ verdict: "passed", reasons: [], summary: { cases: CASES, judged: CASES, errored: 0 } });
    expect(done.evaluation.cases.map((c) => c.prompt).sort()).toEqual(Array.from({ length: CASES }, (_, i) => casePrompt(i)).sort());

    // What the model server saw: the JSON schema for the merge and for every judgement (structured
    // outputs, not a bare json_object), and each case run once per arm on the main model.
    const aux = await models.requests(auxModel);
    const merges = aux.filter((r) => schemaName(r) === "merge_hunks");
    expect(merges).toHaveLength(1);
    expect(merges[0]!.body.response_format).toMatchObject({
      type: "json_schema",
      json_schema: { name: "merge_hunks", schema: { type: "object" } },
    });
    const judgements = aux.filter((r) => schemaName(r) === "judgement");
    expect(judgements).toHaveLength(CASES);
    for (const j of judgements)
      expect(Object.keys(schemaOf(j).properties)).toEqual(["baseline_score", "candidate_score", "winner", "reason"]);
    expect(Object.keys(schemaOf(merges[0]!).properties)).toEqual(["hunks"]);
    // Nothing else reached the auxiliary model: evaluation runs activate only the skill under test
    // (`skill_choice: requested_only`), so the report's cost counts every model call.
    expect(aux.filter((r) => schemaName(r) !== "merge_hunks" && schemaName(r) !== "judgement")).toEqual([]);
    const runs = new Map<string, number>();
    for (const r of await models.requests(runModel)) runs.set(lastUser(r), (runs.get(lastUser(r)) ?? 0) + 1);
    expect([...runs.entries()].sort()).toEqual(Array.from({ length: CASES }, (_, i) => [casePrompt(i), 2]).sort());
    expect(done.evaluation.report!.cost).toMatchObject({ model_calls: 2 * CASES + CASES, judge_calls: CASES });

    // Approve without skip_evaluation: the evaluation gate reads the passed verdict.
    const approved = await call("POST", `/api/drafts/${draftId}/approve`, token);
    expect(approved.status).toBe(200);
    expect(approved.body).toMatchObject({
      draft_id: draftId,
      status: "published",
      skill: SKILL,
      version: "v0003",
      plugin_state_updated: true,
    });
    expect(approved.body.gates).toContainEqual({ gate: "evaluation", status: "passed", message: "passed" });
    const v3 = await currentOf(token);
    expect(v3).toMatchObject({
      current_version: "v0003",
      current: {
        provenance: {
          kind: "plugin_skill_update",
          merge_mode: "three_way",
          draft_id: draftId,
          review: { mode: "manual", evaluation: "passed", confidence: 0.92 },
        },
      },
    });
    const review = (v3.current.provenance as { review: Record<string, unknown> }).review;
    expect(review.approved_by).toEqual(expect.any(String));
    expect(review).not.toHaveProperty("skip_evaluation");
    const v3Bytes = await fileOf(token, "v0003");
    expect(v3Bytes).toContain(MERGED_HUNK);
    expect(v3Bytes).toContain("Keep it short: four panels.");
    expect((await call("GET", `/api/drafts/${draftId}`, token)).body).toMatchObject({ status: "published" });

    // Rollback restores v0002: the same tree and the same bytes.
    const rolled = await call("POST", `/api/skills/${SKILL}/rollback`, token, { version: "v0002" });
    expect(rolled.status).toBe(200);
    const after = await currentOf(token);
    expect(after).toMatchObject({ current_version: "v0002", current: { tree_hash: v2Tree } });
    expect(after.current.tree_hash).not.toBe(v3.current.tree_hash);
    expect(await fileOf(token, after.current_version)).toBe(v2Bytes);
  });

  it("a merged draft approved with a reasoned skip_evaluation records the skip in provenance", async () => {
    const { token } = await newWorkspace();
    const mergeModel = `merge-e2e-${Math.random().toString(36).slice(2, 10)}`;
    const config = { auxiliary_model: { provider: "openai-compatible", id: mergeModel, base_url: `${modelUrl}/v1` } };
    const { draftId } = await mergedDraft(token, config, mergeModel);
    const [req] = await models.requests(mergeModel);
    expect(req?.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "merge_hunks" } });

    const refused = await call("POST", `/api/drafts/${draftId}/approve`, token);
    expect(refused).toMatchObject({ status: 409, body: { error: { code: "evaluation_required" } } });
    const approved = await call("POST", `/api/drafts/${draftId}/approve`, token, {
      skip_evaluation: true,
      reason: "e2e: approved without evaluating",
    });
    expect(approved).toMatchObject({ status: 200, body: { version: "v0003", plugin_state_updated: true } });
    expect(approved.body.gates).toContainEqual(expect.objectContaining({ gate: "evaluation", status: "skipped" }));
    expect(await currentOf(token)).toMatchObject({
      current_version: "v0003",
      current: {
        provenance: {
          draft_id: draftId,
          review: { mode: "manual", evaluation: "none", skip_evaluation: true, skip_reason: "e2e: approved without evaluating" },
        },
      },
    });
  });
});
