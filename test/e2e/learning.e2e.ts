/**
 * The learning pipeline on a real `wrangler dev` (docs/learning.md): a plugin whose new upstream edits
 * SKILL.md in lines the local version also edited → sync → a three-way candidate → a merged draft
 * (the scripted OpenAI-compatible model answers the conflict hunk through structured output) whose
 * preservation report keeps the local rule → safety passes → approve with skip_evaluation → v0003 is
 * current with the review in its provenance → rollback restores v0002 byte-identical.
 */
import { describe, expect, inject, it } from "vitest";
import { packTar } from "modern-tar";
import { api, baseUrl, newWorkspace } from "./client.ts";
import { scriptedModelClient } from "../support/scripted-openai.ts";

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

async function pluginPackage(version: string, skillMd: string): Promise<Uint8Array> {
  const files: Record<string, string> = {
    "beaver.plugin.json": JSON.stringify({
      schema_version: 1,
      id: "e2e-learning",
      name: "E2E learning",
      version,
      skills: [{ name: SKILL, path: `skills/${SKILL}` }],
    }),
    [`skills/${SKILL}/SKILL.md`]: skillMd,
  };
  const tar = await packTar(
    Object.entries(files).map(([name, body]) => ({ header: { name, size: new TextEncoder().encode(body).byteLength, mode: 0o644 }, body })),
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

describe("wrangler dev: learning pipeline", () => {
  it("sync → three-way candidate → merged draft keeping the local rule → approve (skip evaluation) → v0003 → rollback restores v0002", async () => {
    const { token } = await newWorkspace();
    const mergeModel = `merge-e2e-${Date.now()}`;
    const config = { auxiliary_model: { provider: "openai-compatible", id: mergeModel, base_url: `${modelUrl}/v1` } };
    expect((await api("PUT", "/api/config", { token, body: config })).status).toBe(200);

    await upload(token, await pluginPackage("1.0.0", BASE));
    expect((await call("POST", "/api/plugins/e2e-learning/enable", token)).body).toMatchObject({
      mirrored: [{ skill: SKILL, version: "v0001" }],
    });
    const local = await call("PUT", `/api/skills/${SKILL}`, token, { files: [{ path: "SKILL.md", content: LOCAL }] });
    expect(local.body).toMatchObject({ version: "v0002" });
    const v2Bytes = await fileOf(token, "v0002");
    const v2Tree = ((await call("GET", `/api/skills/${SKILL}`, token)).body.current as { tree_hash: string }).tree_hash;
    await upload(token, await pluginPackage("1.1.0", UPSTREAM));

    await models.script(mergeModel, [
      {
        text: JSON.stringify({
          hunks: [
            {
              id: 0,
              decision: "combine",
              merged: MERGED_HUNK,
              reason: "adopt upstream colouring, keep the local ink rule",
              confidence: 0.92,
            },
          ],
        }),
      },
    ]);
    const sync = await call("POST", "/api/plugins/sync", token);
    expect(sync.status).toBe(200);
    expect(sync.body).toMatchObject({
      plugins: [{ skills: [{ skill: SKILL, action: "three_way", candidate_status: "pending_synthesis" }] }],
    });
    const [synthesis] = sync.body.synthesis as { draft_id: string; status: string }[];
    expect(synthesis).toMatchObject({ status: "pending_review" });
    const [req] = await models.requests(mergeModel);
    expect(req?.body.response_format).toMatchObject({ type: "json_schema", json_schema: { name: "merge_hunks" } });

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

    const refused = await call("POST", `/api/drafts/${synthesis!.draft_id}/approve`, token);
    expect(refused).toMatchObject({ status: 409, body: { error: { code: "evaluation_required" } } });
    const approved = await call("POST", `/api/drafts/${synthesis!.draft_id}/approve`, token, {
      skip_evaluation: true,
      reason: "e2e: evaluation is exercised elsewhere",
    });
    expect(approved).toMatchObject({ status: 200, body: { version: "v0003", plugin_state_updated: true } });
    const skill = await call("GET", `/api/skills/${SKILL}`, token);
    expect(skill.body).toMatchObject({
      current_version: "v0003",
      current: {
        provenance: {
          kind: "plugin_skill_update",
          merge_mode: "three_way",
          draft_id: synthesis!.draft_id,
          review: { skip_evaluation: true, skip_reason: "e2e: evaluation is exercised elsewhere" },
        },
      },
    });
    const v3 = await fileOf(token, "v0003");
    expect(v3).toContain(MERGED_HUNK);
    expect(v3).toContain("Keep it short: four panels.");

    const rolled = await call("POST", `/api/skills/${SKILL}/rollback`, token, { version: "v0002" });
    expect(rolled.status).toBe(200);
    const after = await call("GET", `/api/skills/${SKILL}`, token);
    expect(after.body).toMatchObject({ current_version: "v0002", current: { tree_hash: v2Tree } });
    expect(await fileOf(token, after.body.current_version as string)).toBe(v2Bytes);
  });
});
