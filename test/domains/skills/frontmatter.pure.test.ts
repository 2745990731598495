import { describe, expect, it } from "vitest";
import { allowedToolsOf, parseSkillMd } from "../../../src/domains/skills/frontmatter.ts";
import { prepareSkill } from "../../../src/domains/skills/prepare.ts";
import { FIXTURE_SKILLS, fixtureSkill } from "../../fixtures/skills/agent-skills.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const md = (front: string, body = "# Body\n") => enc(`---\n${front}\n---\n\n${body}`);

describe("SKILL.md frontmatter", () => {
  it("parses every public fixture as it is, including claude-api's |- block scalar", async () => {
    for (const name of FIXTURE_SKILLS) {
      const res = await prepareSkill(name, fixtureSkill(name));
      expect(res.ok, `${name}: ${JSON.stringify(!res.ok && res.problems)}`).toBe(true);
      if (!res.ok) continue;
      expect(res.skill.frontmatter.name).toBe(name);
      // claude-api's description is 1068 characters: over the specification's 1024, accepted with a warning.
      expect(res.skill.warnings.map((w) => w.field)).toEqual(name === "claude-api" ? ["frontmatter.description"] : []);
    }
    const claude = await prepareSkill("claude-api", fixtureSkill("claude-api"));
    if (!claude.ok) throw new Error("claude-api did not parse");
    const description = claude.skill.frontmatter.description;
    expect(description.startsWith("Reference for the Claude API")).toBe(true);
    expect(description).toContain("\nTRIGGER");
    expect(description.endsWith("\n")).toBe(false);
    expect(claude.skill.frontmatter.license).toBe("Complete terms in LICENSE.txt");
  });

  it("names the field in every error", () => {
    const cases: [string, string][] = [
      ["description: x", "frontmatter.name"],
      ["name: Bad_Name\ndescription: x", "frontmatter.name"],
      ["name: a--b\ndescription: x", "frontmatter.name"],
      [`name: ${"a".repeat(65)}\ndescription: x`, "frontmatter.name"],
      ["name: other\ndescription: x", "frontmatter.name"],
      ["name: demo", "frontmatter.description"],
      [`name: demo\ndescription: ${"d".repeat(4097)}`, "frontmatter.description"],
      ["name: demo\ndescription: x\ncompatibility: ''", "frontmatter.compatibility"],
      ["name: demo\ndescription: x\nmetadata:\n  n: 1", "frontmatter.metadata.n"],
      ["name: demo\ndescription: x\nallowed-tools: 3", "frontmatter.allowed-tools"],
      ["name: demo\nname: demo\ndescription: x", "frontmatter"],
      ["- a\n- b", "frontmatter"],
    ];
    for (const [front, field] of cases) {
      const res = parseSkillMd(md(front), "skills/demo/SKILL.md", "demo");
      expect(res.ok, front).toBe(false);
      if (res.ok) continue;
      expect(res.errors[0]?.field, front).toBe(field);
      expect(res.errors[0]?.path).toBe("skills/demo/SKILL.md");
    }
    const missing = parseSkillMd(enc("# no frontmatter\n"), "SKILL.md", "demo");
    expect(missing.ok).toBe(false);
  });

  it("tolerates Claude Code keys silently and warns about other unknown keys", () => {
    const res = parseSkillMd(
      md("name: demo\ndescription: x\nallowed-tools: Read Grep\nargument-hint: '[file]'\ndisable-model-invocation: true\nflavour: mint"),
      "SKILL.md",
      "demo",
    );
    expect(res.ok).toBe(true);
    if (!res.ok) return;
    expect(res.warnings.map((w) => w.field)).toEqual(["frontmatter.flavour"]);
    expect(res.frontmatter["argument-hint"]).toBe("[file]");
  });

  it("requires SKILL.md and reports unsafe or duplicate paths with their location", async () => {
    const none = await prepareSkill("demo", [{ path: "README.md", bytes: enc("x"), executable: false }], "skills/demo");
    expect(none.ok).toBe(false);
    if (!none.ok) expect(none.problems[0]?.path).toBe("skills/demo/SKILL.md");
    const bad = await prepareSkill("demo", [
      { path: "SKILL.md", bytes: md("name: demo\ndescription: x"), executable: false },
      { path: "../escape.txt", bytes: enc("x"), executable: false },
      { path: "./SKILL.md", bytes: enc("dup"), executable: false },
    ]);
    expect(bad.ok).toBe(false);
    if (!bad.ok) expect(bad.problems.map((p) => p.message)).toEqual([expect.stringContaining("'..' segment"), "duplicate path"]);
  });

  it("reads allowed-tools as a space-separated string, a list, or Claude Code's comma and pattern forms", () => {
    expect(allowedToolsOf({ "allowed-tools": "echo  current_time echo" })).toEqual(["echo", "current_time"]);
    expect(allowedToolsOf({ "allowed-tools": ["gitea_comment", "echo"] })).toEqual(["gitea_comment", "echo"]);
    expect(allowedToolsOf({ "allowed-tools": "Read, Grep, Bash(git status:*) Bash(npm:*)" })).toEqual(["Read", "Grep", "Bash"]);
    expect(allowedToolsOf({})).toEqual([]);
    expect(allowedToolsOf({ "allowed-tools": 3 })).toEqual([]);
    // `tools` hints too (seed tools-blueprint), after `allowed-tools`, without repeats.
    expect(allowedToolsOf({ tools: ["web_fetch", "echo"], "allowed-tools": "echo" })).toEqual(["echo", "web_fetch"]);
    expect(allowedToolsOf({ tools: "memory session_search" })).toEqual(["memory", "session_search"]);
  });

  it("accepts `tools` as a hint key without a warning and refuses a malformed one", () => {
    const good = parseSkillMd(md("name: s\ndescription: d\ntools: web_fetch echo"), "s/SKILL.md", "s");
    expect(good.ok).toBe(true);
    expect(good.warnings).toEqual([]);
    const bad = parseSkillMd(md("name: s\ndescription: d\ntools: 3"), "s/SKILL.md", "s");
    expect(bad.ok).toBe(false);
  });
});
