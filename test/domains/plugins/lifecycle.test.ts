/** Pause, resume, disable, missing package and adopt — nothing ever deletes a version or snapshot. */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { resolveSkills } from "../../../src/domains/skills/resolver.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { candidates, plugin, pluginPackage, post, uploadPackage, versionsOf, type SkillFiles } from "../../support/plugins.ts";

const V1: SkillFiles = { "SKILL.md": skillMd("inker", "Inks drawings.") };
const V2: SkillFiles = { "SKILL.md": skillMd("inker", "Inks drawings.", "# Steps\n\n1. Ink twice.\n") };

async function setup(): Promise<TestWorkspace> {
  const ws = await newWorkspace();
  await uploadPackage(ws.admin, await pluginPackage("ink", "1.0.0", { inker: V1 }));
  await post(ws.admin, "/api/plugins/ink/enable");
  return ws;
}
const snapshots = async (ws: TestWorkspace) =>
  (await env.DB.prepare("SELECT count(*) AS n FROM upstream_snapshots WHERE workspace_id = ?").bind(ws.id).first<{ n: number }>())!.n;
const active = async (ws: TestWorkspace) => (await resolveSkills(env, ws.id)).filter((s) => s.sourceKind !== "builtin").map((s) => s.name);

describe("plugin lifecycle", () => {
  it("pause suspends candidate creation while skills stay active; resume reconciles and syncs", async () => {
    const ws = await setup();
    expect((await post(ws.admin, "/api/plugins/ink/pause")).body).toMatchObject({ changed: true, updates_paused: true });
    expect((await plugin(ws.read, "ink")).state).toBe("paused");
    await uploadPackage(ws.admin, await pluginPackage("ink", "1.1.0", { inker: V2 }));
    const s = await post(ws.admin, "/api/plugins/sync");
    expect(s.body.plugins).toEqual([expect.objectContaining({ plugin_id: "ink", skipped: "paused", skills: [] })]);
    expect((await candidates(ws.read, "inker")).candidates).toEqual([]);
    expect(await active(ws)).toEqual(["inker"]);
    const r = await post(ws.admin, "/api/plugins/ink/resume");
    expect(r.body).toMatchObject({
      changed: true,
      updates_paused: false,
      sync: { skipped: null, skills: [{ skill: "inker", action: "fast_forward", candidate_status: "drafted" }] },
    });
  });

  it("disable needs disable_linked_skills: true, disables linked skills, keeps everything; re-enable restores and syncs", async () => {
    const ws = await setup();
    expect((await post(ws.admin, "/api/plugins/ink/disable")).status).toBe(400);
    const noConfirm = await post(ws.admin, "/api/plugins/ink/disable", { disable_linked_skills: false });
    expect(noConfirm.status).toBe(400);
    expect(noConfirm.body.error?.message).toContain("disable_linked_skills");
    const d = await post(ws.admin, "/api/plugins/ink/disable", { disable_linked_skills: true });
    expect(d.body).toMatchObject({ changed: true, disabled_skills: ["inker"] });
    expect(await active(ws)).toEqual([]);
    expect(await versionsOf(ws.id, "inker")).toBe(1);
    expect(await snapshots(ws)).toBe(1);
    expect(await plugin(ws.read, "ink")).toMatchObject({
      state: "disabled",
      enabled: false,
      updates_paused: true,
      skills: [{ status: "disabled", skill_status: "disabled" }],
    });
    expect((await json(await call("GET", "/api/skills/inker", { token: ws.read }))).status).toBe("disabled");

    await uploadPackage(ws.admin, await pluginPackage("ink", "1.1.0", { inker: V2 }));
    const re = await post(ws.admin, "/api/plugins/ink/enable");
    expect(re.body).toMatchObject({
      changed: true,
      mirrored: [],
      restored: ["inker"],
      sync: { plugins: [{ skills: [{ action: "fast_forward" }] }] },
    });
    expect(await active(ws)).toEqual(["inker"]);
    expect((await plugin(ws.read, "ink")).state).toBe("enabled");
  });

  it("a missing package is a supply-chain status only: current skills stay active, sync is suspended", async () => {
    const ws = await setup();
    expect((await call("DELETE", "/api/plugins/packages/ink", { token: ws.admin })).status).toBe(200);
    expect(await plugin(ws.read, "ink")).toMatchObject({ state: "missing", package_status: "missing", enabled: true });
    expect(await active(ws)).toEqual(["inker"]);
    expect((await post(ws.admin, "/api/plugins/sync")).body.plugins).toEqual([expect.objectContaining({ skipped: "missing" })]);
    expect((await post(ws.admin, "/api/plugins/ink/enable")).status).toBe(409);
    // The package comes back: present again, sync resumes.
    const back = await uploadPackage(ws.admin, await pluginPackage("ink", "1.1.0", { inker: V2 }));
    expect(back.body).toMatchObject({ plugins: [{ state: "enabled", package_status: "present", changed: true }] });
    expect((await post(ws.admin, "/api/plugins/sync")).body.plugins).toEqual([expect.objectContaining({ skipped: null })]);
    // A never-enabled plugin whose package is withdrawn is simply forgotten.
    await uploadPackage(ws.admin, await pluginPackage("other", "1", { solo: { "SKILL.md": skillMd("solo", "Solo.") } }));
    expect(await json(await call("DELETE", "/api/plugins/packages/other", { token: ws.admin }))).toEqual({
      plugin_id: "other",
      package_status: "removed",
    });
  });

  it("adopt detaches a skill: managed, current version kept, no more plugin updates", async () => {
    const ws = await setup();
    await uploadPackage(ws.admin, await pluginPackage("ink", "1.1.0", { inker: V2 }));
    await post(ws.admin, "/api/plugins/sync");
    const pending = (await candidates(ws.read, "inker")).candidates[0]!;
    const a = await post(ws.admin, "/api/plugins/ink/skills/inker/adopt");
    expect(a.body).toEqual({ plugin_id: "ink", skill: "inker", source_kind: "managed" });
    expect(await json(await call("GET", "/api/skills/inker", { token: ws.read }))).toMatchObject({
      source_kind: "managed",
      plugin_id: null,
      current_version: "v0001",
      status: "active",
    });
    expect((await candidates(ws.read, "inker")).candidates.map((c) => [c.id, c.status])).toEqual([[pending.id, "superseded"]]);
    await uploadPackage(ws.admin, await pluginPackage("ink", "1.2.0", { inker: { "SKILL.md": skillMd("inker", "Inks v3.") } }));
    const s = await post(ws.admin, "/api/plugins/sync");
    expect((s.body.plugins as { skills: unknown[] }[])[0]!.skills).toEqual([
      { skill: "inker", action: "adopted", status: "adopted", candidate_id: null, candidate_status: null },
    ]);
    expect((await candidates(ws.read, "inker")).candidates).toHaveLength(1);
    // Disabling the plugin no longer touches the adopted skill, and re-enabling does not re-mirror it.
    await post(ws.admin, "/api/plugins/ink/disable", { disable_linked_skills: true });
    expect(await active(ws)).toEqual(["inker"]);
    expect((await post(ws.admin, "/api/plugins/ink/enable")).body).toMatchObject({ mirrored: [] });
    expect((await post(ws.admin, "/api/plugins/ink/skills/nope/adopt")).status).toBe(404);
  });

  it("a skill the new package no longer declares keeps its current version; new declared skills wait for enable", async () => {
    const ws = await setup();
    await uploadPackage(ws.admin, await pluginPackage("ink", "2.0.0", { colorist: { "SKILL.md": skillMd("colorist", "Colors.") } }));
    const s = await post(ws.admin, "/api/plugins/sync");
    expect(s.body.plugins).toEqual([
      expect.objectContaining({
        new_skills: ["colorist"],
        skills: [expect.objectContaining({ skill: "inker", action: "removed_upstream" })],
      }),
    ]);
    expect(await active(ws)).toEqual(["inker"]);
    expect((await post(ws.admin, "/api/plugins/ink/enable")).body).toMatchObject({ mirrored: [{ skill: "colorist", version: "v0001" }] });
    expect(await active(ws)).toEqual(["colorist", "inker"]);
  });
});
