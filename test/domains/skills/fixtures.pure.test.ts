import { describe, expect, it } from "vitest";
import { AGENT_SKILL_FILES, fixtureSkill } from "../../fixtures/skills/agent-skills.ts";

describe("fixture loading", () => {
  it("sees the copied public bundles", () => {
    expect(Object.keys(AGENT_SKILL_FILES).sort()).toContain("claude-api/SKILL.md");
    expect(
      fixtureSkill("mcp-builder")
        .map((f) => f.path)
        .sort(),
    ).toContain("reference/evaluation.md");
  });
});
