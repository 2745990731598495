/**
 * Fixed vectors for skill_tree_hash and skill_content_hash (docs/skills-hashing.md). The expected
 * hex strings were computed once, outside Beaver, from the documented canonical form (a Python
 * script over the same bytes); if the form changes, these fail.
 */
import { describe, expect, it } from "vitest";
import {
  canonicalTreeText,
  contentHashOf,
  manifestEntriesOf,
  normalizeSkillMd,
  treeHashOf,
  type TreeFile,
} from "../../../src/kernel/content-tree/hashing.ts";
import { FIXTURE_SKILLS, fixtureSkill } from "../../fixtures/skills/agent-skills.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const SKILL = "---\nname: demo\ndescription: A demo skill.\n---\n\n# Demo\n";
const DEMO: TreeFile[] = [
  { path: "SKILL.md", bytes: enc(SKILL), executable: false },
  { path: "scripts/run.sh", bytes: enc("#!/bin/sh\necho hi\n"), executable: true },
  { path: "assets/logo.bin", bytes: new Uint8Array([0, 1, 2, 255]), executable: false },
  { path: "notes/caf\u00e9.md", bytes: enc("x"), executable: false },
];

const treeHash = async (files: TreeFile[]) => treeHashOf(await manifestEntriesOf(files));

describe("skill_tree_hash", () => {
  it("matches the fixed vector of the documented canonical form", async () => {
    expect(await treeHash(DEMO)).toBe("13f148bbba939de603b66725f3bac50ac57b3e1cf1c3961f819fc0d5ba50a388");
    expect(await treeHash([])).toBe("e2b289113e23ad9c0883002d7b0a49330e6bedd4a8e71fb976145be08ff6f251");
  });

  it("depends on the executable bit, not on file order", async () => {
    expect(await treeHash(DEMO.map((f) => ({ ...f, executable: false })))).toBe(
      "c60fa88156d0dcf08a4591a5ee568beeb99ff373da3157e9148679c208b3914f",
    );
    expect(await treeHash([...DEMO].reverse())).toBe("13f148bbba939de603b66725f3bac50ac57b3e1cf1c3961f819fc0d5ba50a388");
  });

  it("excludes Beaver metadata and orders paths by UTF-8 bytes", async () => {
    const withMeta = [
      ...DEMO,
      { path: "version.json", bytes: enc("{}"), executable: false },
      { path: "upstream.json", bytes: enc("{}"), executable: false },
    ];
    expect(await treeHash(withMeta)).toBe(await treeHash(DEMO));
    const text = canonicalTreeText(await manifestEntriesOf(DEMO));
    expect(text.split("\n")[0]).toBe("beaver-skill-tree/v1");
    expect(
      text
        .split("\n")
        .slice(1, -1)
        .map((l) => l.split("\t")[0]),
    ).toEqual(["SKILL.md", "assets/logo.bin", "notes/caf\u00e9.md", "scripts/run.sh"]);
    expect(text).toContain("scripts/run.sh\t18\tx\t");
  });

  it("hashes the public fixture bundles to their fixed vectors", async () => {
    const expected: Record<string, [string, string]> = {
      "brand-guidelines": [
        "01b76a7e5795dc434c2ab1caf812318b3804944fcf3af9c34f85e0142379010f",
        "1565b6a45de3817f570ac44bc309545042e7e67d5a709595a4c15074bf850ce4",
      ],
      "claude-api": [
        "1e5c3862d19fcea22cca99dabbde9c68b6d347944483d617770318d80853bc6c",
        "01a54826ce0cc09009f2a6a663590d2cb4229cc2c8527d41bc7746c71af707af",
      ],
      "mcp-builder": [
        "94952ae682d9434c8aea69dbd05ec0f61c0ba84361b23b69a48c8e159decb4fc",
        "52ad250de93aa2ff12982266ce410137f56ada2b487cce032e284a2af235de39",
      ],
      "skill-creator": [
        "17836713c059a86182ef25bf505613212e82e891c3ef6b1c542594014f5b7d7b",
        "6ec88d96e6b3d1e203dc82f332dcd5a5f49d0bed87285df167090cffa239c520",
      ],
    };
    for (const name of FIXTURE_SKILLS) {
      const files = fixtureSkill(name);
      expect(await treeHash(files), name).toBe(expected[name]![0]);
      expect(await contentHashOf(files.find((f) => f.path === "SKILL.md")!.bytes), name).toBe(expected[name]![1]);
    }
  });
});

describe("skill_content_hash", () => {
  it("matches the fixed vector and ignores BOM, CRLF and trailing blank lines", async () => {
    expect(await contentHashOf(enc(SKILL))).toBe("746b074c183d6350f4db609e52011c40fb7489108a6c07101ae82f56bcfe3905");
    const messy = new Uint8Array([0xef, 0xbb, 0xbf, ...enc(SKILL.replace(/\n/g, "\r\n") + "\r\n\r\n")]);
    expect(await contentHashOf(messy)).toBe("746b074c183d6350f4db609e52011c40fb7489108a6c07101ae82f56bcfe3905");
  });

  it("normalises to NFC and changes with the content", async () => {
    expect(normalizeSkillMd(enc("cafe\u0301"))).toBe("caf\u00e9\n");
    expect(await contentHashOf(enc(SKILL + "more"))).not.toBe("746b074c183d6350f4db609e52011c40fb7489108a6c07101ae82f56bcfe3905");
    expect(() => normalizeSkillMd(new Uint8Array([0xff, 0xfe, 0x00]))).toThrow();
  });
});
