/** Package discovery: beaver.plugin.json as docs/skills-and-plugins.md specifies it, Claude Code plugins and the real marketplace. */
import { describe, expect, it } from "vitest";
import { discoverPlugins } from "../../../src/domains/plugins/package.ts";
import { parseBeaverManifest } from "../../../src/domains/plugins/manifest.ts";
import type { ArchiveFile } from "../../../src/storage/archive/index.ts";
import { AGENT_SKILL_FILES, FIXTURE_SKILLS, MARKETPLACE_JSON, fixtureSkill } from "../../fixtures/skills/agent-skills.ts";
import { beaverManifest, skillMd } from "../../fixtures/skills/bundles.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const files = (m: Record<string, string>): ArchiveFile[] =>
  Object.entries(m).map(([path, text]) => ({ path, bytes: enc(text), executable: false }));

describe("beaver.plugin.json", () => {
  it("accepts the documented example package", () => {
    const d = parseBeaverManifest(
      JSON.stringify({
        schema_version: 1,
        id: "baoyu-comic",
        name: "Baoyu Comic",
        version: "1.2.0",
        skills: [{ name: "baoyu-comic", path: "skills/baoyu-comic" }],
      }),
    );
    expect(d).toMatchObject({
      id: "baoyu-comic",
      version: "1.2.0",
      skills: [{ name: "baoyu-comic", path: "skills/baoyu-comic" }],
      problems: [],
    });
  });

  it("names the field of every violation", () => {
    const base = { schema_version: 1, id: "p", name: "P", version: "1", skills: [{ name: "s", path: "skills/s" }] };
    const cases: [unknown, string, RegExp][] = [
      [{ ...base, schema_version: 2 }, "schema_version", /1/],
      [{ ...base, id: "Bad Id" }, "id", /lowercase/],
      [{ ...base, extra: true }, "extra", /unsupported key/],
      [{ ...base, skills: [] }, "skills", /at least one/],
      [{ ...base, skills: [{ name: "S!", path: "skills/s" }] }, "skills[0].name", /lowercase/],
      [{ ...base, skills: [{ name: "s", path: "../outside/s" }] }, "skills[0].path", /inside the plugin/],
      [{ ...base, skills: [{ name: "s", path: "/abs/s" }] }, "skills[0].path", /inside the plugin/],
      [{ ...base, skills: [{ name: "s", path: "skills/other" }] }, "skills[0].path", /named like the skill/],
      [
        {
          ...base,
          skills: [
            { name: "s", path: "skills/s" },
            { name: "s", path: "x/s" },
          ],
        },
        "skills[1].name",
        /duplicate skill name/,
      ],
    ];
    for (const [manifest, field, message] of cases) {
      const d = parseBeaverManifest(JSON.stringify(manifest));
      const problems = "problems" in d ? d.problems : [];
      const p = problems.find((x) => x.field === field);
      expect(p, `${field}: ${JSON.stringify(problems)}`).toBeDefined();
      expect(p!.message).toMatch(message);
      expect(p!.path).toBe("beaver.plugin.json");
    }
    expect(parseBeaverManifest("{ not json")).toMatchObject({
      problems: [{ path: "beaver.plugin.json", message: expect.stringContaining("invalid JSON") }],
    });
  });

  it("finds the package root inside a single top folder (Gitea archives) and requires SKILL.md", async () => {
    const d = await discoverPlugins(
      files({
        "repo-main/beaver.plugin.json": beaverManifest("p", "1.0.0", ["a", "b"]),
        "repo-main/skills/a/SKILL.md": skillMd("a", "A."),
        "repo-main/skills/b/README.md": "no skill here",
      }),
    );
    if (!d.ok) throw new Error("discovery failed");
    expect(d.plugins[0]!.problems).toEqual([
      { path: "skills/b/SKILL.md", message: "SKILL.md is required at the root of the skill folder" },
    ]);
    expect(d.plugins[0]!.skills).toEqual([]);
    const none = await discoverPlugins(files({ "a/x.md": "x", "b/y.md": "y" }));
    expect(none).toMatchObject({ ok: false, reason: "no_manifest" });
  });
});

describe("Claude Code packages", () => {
  it("maps a Claude Code plugin (.claude-plugin/plugin.json + skills/<name>/SKILL.md)", async () => {
    const d = await discoverPlugins(
      files({
        ".claude-plugin/plugin.json": JSON.stringify({ name: "doc-tools", version: "0.3.0", description: "Docs", commands: "./commands" }),
        "skills/summarise/SKILL.md": skillMd("summarise", "Summarise."),
        "skills/summarise/ref.md": "ref",
        "commands/hello.md": "a command",
      }),
    );
    if (!d.ok) throw new Error("discovery failed");
    const p = d.plugins[0]!;
    expect(p.declaration).toMatchObject({
      id: "doc-tools",
      version: "0.3.0",
      manifestKind: "claude_plugin",
      skills: [{ name: "summarise", path: "skills/summarise" }],
    });
    expect(p.declaration.warnings).toEqual([
      { path: ".claude-plugin/plugin.json", field: "commands", message: "ignored: Beaver plugins are declarative skill bundles" },
    ]);
    expect(p.problems).toEqual([]);
    expect(p.skills[0]!.prepared.files.map((f) => f.path).sort()).toEqual(["SKILL.md", "ref.md"]);
  });

  it("reads the real anthropics/skills marketplace.json as it is", async () => {
    const pkg: ArchiveFile[] = [{ path: ".claude-plugin/marketplace.json", bytes: enc(MARKETPLACE_JSON), executable: false }];
    for (const name of FIXTURE_SKILLS) for (const f of fixtureSkill(name)) pkg.push({ ...f, path: `skills/${name}/${f.path}` });
    const d = await discoverPlugins(pkg);
    if (!d.ok) throw new Error(`discovery failed: ${JSON.stringify(d.problems)}`);
    expect(d.plugins.map((p) => p.declaration.id)).toEqual(["document-skills", "example-skills", "claude-api"]);
    const claudeApi = d.plugins[2]!;
    expect(claudeApi.problems).toEqual([]);
    expect(claudeApi.declaration).toMatchObject({
      version: "1.0.0",
      manifestKind: "claude_marketplace",
      skills: [{ name: "claude-api", path: "skills/claude-api" }],
    });
    expect(claudeApi.skills[0]!.prepared.frontmatter.name).toBe("claude-api");
    // example-skills lists twelve skill folders; only three of them are in the fixture bundle.
    const example = d.plugins[1]!;
    expect(example.declaration.skills).toHaveLength(12);
    expect(example.problems.map((p) => p.path)).toContain("skills/algorithmic-art/SKILL.md");
    expect(example.problems.map((p) => p.path)).not.toContain("skills/mcp-builder/SKILL.md");
    expect(Object.keys(AGENT_SKILL_FILES)).toContain("marketplace.json");
  });

  it("reports remote marketplace sources instead of fetching them", async () => {
    const market = JSON.stringify({ name: "m", plugins: [{ name: "remote", source: { source: "github", repo: "x/y" } }] });
    const d = await discoverPlugins(files({ ".claude-plugin/marketplace.json": market }));
    if (!d.ok) throw new Error("discovery failed");
    expect(d.plugins[0]!.problems).toEqual([
      expect.objectContaining({ field: "plugins[0].source", message: expect.stringContaining("remote plugin sources are not fetched") }),
    ]);
  });
});
