/** The four-row upgrade classification and every supporting-file merge rule, as pure functions (docs/skills-and-plugins.md). */
import { describe, expect, it } from "vitest";
import { classifyUpgrade, pluginUpdateCandidateId } from "../../../src/domains/plugins/classify.ts";
import { planSupportingFileMerge } from "../../../src/domains/plugins/merge-plan.ts";
import type { ManifestEntry } from "../../../src/kernel/content-tree/hashing.ts";

describe("upgrade classification", () => {
  it("covers the four rows in the documented order (docs/skills-and-plugins.md)", () => {
    expect(classifyUpgrade({ base: "B", local: "B", upstream: "B" })).toBe("none");
    expect(classifyUpgrade({ base: "B", local: "L", upstream: "B" })).toBe("none"); // U == B wins even when L diverged
    expect(classifyUpgrade({ base: "B", local: "U", upstream: "U" })).toBe("acknowledge");
    expect(classifyUpgrade({ base: "B", local: "B", upstream: "U" })).toBe("fast_forward");
    expect(classifyUpgrade({ base: "B", local: "L", upstream: "U" })).toBe("three_way");
  });

  it("derives deterministic candidate ids", () => {
    const hash = "0123456789abcdef".repeat(4);
    expect(pluginUpdateCandidateId("baoyu-comic", "baoyu-comic", hash)).toBe("plugin-update:baoyu-comic:baoyu-comic:0123456789ab");
    expect(pluginUpdateCandidateId("p", "s", hash)).toBe(pluginUpdateCandidateId("p", "s", hash));
  });
});

const f = (path: string, sha: string, executable = false): ManifestEntry => ({ path, sha256: sha.padEnd(64, "0"), size: 1, executable });

describe("supporting-file merge plan", () => {
  const B = [
    f("SKILL.md", "s0"),
    f("a.md", "a0"),
    f("b.md", "b0"),
    f("c.md", "c0"),
    f("d.md", "d0"),
    f("e.md", "e0"),
    f("g.sh", "g0"),
    f("gone.md", "x0"),
    f("kept.md", "k0"),
  ];
  const L = [
    f("SKILL.md", "s1"),
    f("a.md", "a0"),
    f("b.md", "b1"),
    f("c.md", "c1"),
    f("d.md", "d1"),
    f("e.md", "e0"),
    f("g.sh", "g0"),
    f("local-new.md", "n1"),
    f("both-same.md", "q1"),
    f("clash.md", "z1"),
    f("kept.md", "k1"),
  ];
  const U = [
    f("SKILL.md", "s2"),
    f("a.md", "a2"),
    f("b.md", "b0"),
    f("c.md", "c1"),
    f("d.md", "d2"),
    f("g.sh", "g0", true),
    f("up-new.md", "u2"),
    f("both-same.md", "q1"),
    f("clash.md", "z2"),
    f("gone.md", "x0"),
  ];
  const plan = planSupportingFileMerge(B, L, U);
  const res = (path: string) => plan.files.find((p) => p.path === path)?.resolution;
  const conflict = (path: string) => plan.conflicts.find((c) => c.path === path)?.kind;

  it("local unchanged from B → take U", () => expect(res("a.md")).toBe("take_upstream"));
  it("upstream unchanged from B → keep L", () => expect(res("b.md")).toBe("keep_local"));
  it("both sides equal → keep", () => expect(res("c.md")).toBe("same"));
  it("added on one side only → keep it", () => {
    expect(res("local-new.md")).toBe("keep_local");
    expect(res("up-new.md")).toBe("take_upstream");
    expect(res("both-same.md")).toBe("same");
  });
  it("deleted upstream, unchanged locally → deleted; deleted locally, unchanged upstream → stays deleted", () => {
    expect(res("e.md")).toBe("deleted");
    expect(res("gone.md")).toBe("deleted");
    expect(plan.files.find((p) => p.path === "gone.md")?.result).toBeNull();
  });
  it("an executable-bit change counts as a change", () => expect(res("g.sh")).toBe("take_upstream"));
  it("divergent edits, delete-versus-edit and different additions are conflicts that block publication", () => {
    expect(conflict("d.md")).toBe("both_modified");
    expect(conflict("clash.md")).toBe("both_added");
    expect(conflict("kept.md")).toBe("delete_vs_edit");
    expect(plan.blocked).toBe(true);
  });
  it("leaves SKILL.md to synthesis only when both sides changed it", () => {
    expect(plan.skill_md).toBe("needs_synthesis");
    expect(planSupportingFileMerge(B, B, U).skill_md).toBe("take_upstream");
    expect(planSupportingFileMerge(B, L, B).skill_md).toBe("keep_local");
    expect(plan.files.some((p) => p.path === "SKILL.md")).toBe(false);
  });
  it("is not blocked without conflicts", () => {
    const clean = planSupportingFileMerge(
      [f("SKILL.md", "s0"), f("a.md", "a0")],
      [f("SKILL.md", "s1"), f("a.md", "a0")],
      [f("SKILL.md", "s2"), f("a.md", "a2")],
    );
    expect(clean).toEqual({
      skill_md: "needs_synthesis",
      files: [{ path: "a.md", resolution: "take_upstream", result: { sha256: "a2".padEnd(64, "0"), executable: false, size: 1 } }],
      conflicts: [],
      blocked: false,
    });
  });
});
