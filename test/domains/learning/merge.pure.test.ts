// The pure three-way merge (src/domains/learning/skill-merge.ts): non-overlapping edits settle without
// a model, conflicts go to the resolver (here the production model resolver over the `ai` SDK's mock
// model), invalid answers are retried once and then fail the merge with the reason, the frontmatter
// merges field by field and must validate, and the preservation report finds kept and lost rules.
import { describe, expect, it } from "vitest";
import { MockLanguageModelV4 } from "ai/test";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { mergeSkillMd, mergeTextFile } from "../../../src/domains/learning/skill-merge.ts";
import { modelHunkResolver, type HunkRequest, type HunkResolver } from "../../../src/domains/learning/hunk-resolver.ts";
import { preservationReport } from "../../../src/domains/learning/preservation.ts";
import { mergeRecord } from "../../../src/domains/learning/merge-record.ts";
import { mergeLines } from "../../../src/domains/learning/text-merge.ts";
import { treeDiff, unifiedDiff } from "../../../src/domains/learning/diffs.ts";
import { USAGE } from "../../support/mock-models.ts";

const fm = (description: string, extra = "") => `---\nname: pdf-tools\ndescription: ${description}\n${extra}---\n`;

const BASE = `${fm("Work with PDF files.")}# PDF tools

## Steps
- Open the file.
- Extract the text.
- Summarise it.

## Notes
Use pdftotext.
`;

/** A model that answers each call with the next of `answers` (objects are sent as JSON text). */
function answeringModel(answers: unknown[]): { model: MockLanguageModelV4; calls: LanguageModelV4CallOptions[] } {
  const calls: LanguageModelV4CallOptions[] = [];
  const model = new MockLanguageModelV4({
    doGenerate: async (options) => {
      calls.push(options);
      const next = answers[calls.length - 1];
      return {
        content: [{ type: "text", text: typeof next === "string" ? next : JSON.stringify(next) }],
        finishReason: { unified: "stop", raw: "stop" },
        usage: USAGE,
        warnings: [],
      };
    },
  });
  return { model, calls };
}

const resolverOf = (model: MockLanguageModelV4) =>
  modelHunkResolver({ role: "auxiliary", provider: "openai-compatible", modelId: "aux", model });

const noModel: HunkResolver = {
  label: "none",
  resolve: () => {
    throw new Error("the resolver must not be asked");
  },
};

describe("line merge", () => {
  it("settles edits in different places without asking a model", async () => {
    const ours = BASE.replace("- Extract the text.\n", "- Extract the text.\n- Never upload files to third-party services.\n");
    const theirs = BASE.replace("Use pdftotext.", "Use pdftotext -layout.");
    const r = await mergeSkillMd("pdf-tools", { base: BASE, ours, theirs }, noModel);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.text).toContain("- Never upload files to third-party services.\n");
    expect(r.text).toContain("Use pdftotext -layout.");
    expect(r.decisions).toEqual([]);
    expect(r.confidence).toBe(1);
    expect(r.preservation.local).toEqual([{ kind: "rule", text: "- Never upload files to third-party services.", kept: "verbatim" }]);
    expect(r.preservation.lost_local).toBe(0);
  });

  it("reports overlapping edits as conflict hunks with context", () => {
    const m = mergeLines("a\nb\nc\n", "a\nB1\nc\n", "a\nB2\nc\n");
    expect(m.conflicts).toEqual([{ id: 0, base: "b\n", local: "B1\n", upstream: "B2\n", before: "a\n", after: "c\n" }]);
  });
});

describe("conflicts resolved by the model", () => {
  const ours = BASE.replace("- Summarise it.\n", "- Summarise it in at most five bullet points.\n");
  const theirs = BASE.replace("- Summarise it.\n", "- Summarise it and list the tables found.\n");

  it("sends the hunks with a JSON schema and applies the decisions", async () => {
    const merged = "- Summarise it in at most five bullet points and list the tables found.\n";
    const { model, calls } = answeringModel([
      { hunks: [{ id: 0, decision: "combine", merged, reason: "both constraints apply", confidence: 0.9 }] },
    ]);
    const r = await mergeSkillMd("pdf-tools", { base: BASE, ours, theirs }, resolverOf(model));
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(calls).toHaveLength(1);
    expect(calls[0]!.responseFormat).toMatchObject({ type: "json", schema: { type: "object" } });
    expect(r.text).toContain(merged);
    expect(r.decisions).toMatchObject([{ file: "SKILL.md", decision: "combine", confidence: 0.9, by: "model", merged }]);
    expect(r.confidence).toBe(0.9);
    expect(r.preservation.local[0]).toMatchObject({ kind: "rule", kept: "reworded" });
  });

  it("takes keep_local and take_upstream texts from that side, whatever the model wrote", async () => {
    const { model } = answeringModel([
      { hunks: [{ id: 0, decision: "take_upstream", merged: "garbage\n", reason: "newer", confidence: 0.7 }] },
    ]);
    const r = await mergeSkillMd("pdf-tools", { base: BASE, ours, theirs }, resolverOf(model));
    expect(r.ok && r.text).toBe(theirs);
    expect(r.ok && r.preservation.local).toEqual([{ kind: "rule", text: "- Summarise it in at most five bullet points.", kept: "lost" }]);
    expect(r.ok && r.preservation.lost_local).toBe(1);
  });

  it("retries once after an invalid answer, with the reason", async () => {
    const { model, calls } = answeringModel([
      { hunks: [{ id: 0, decision: "merge_somehow", merged: "x\n", reason: "?", confidence: 2 }] },
      { hunks: [{ id: 0, decision: "keep_local", merged: "", reason: "local is stricter", confidence: 0.8 }] },
    ]);
    const r = await mergeSkillMd("pdf-tools", { base: BASE, ours, theirs }, resolverOf(model));
    expect(calls).toHaveLength(2);
    expect(JSON.stringify(calls[1]!.prompt)).toContain("previous answer was refused");
    expect(r.ok && r.text).toBe(ours);
    expect(r.ok && r.resolverCalls).toBe(2);
  });

  it("fails the merge cleanly after two invalid answers", async () => {
    const { model, calls } = answeringModel(["not json at all", { hunks: [] }]);
    const r = await mergeSkillMd("pdf-tools", { base: BASE, ours, theirs }, resolverOf(model));
    expect(calls).toHaveLength(2);
    expect(r.ok).toBe(false);
    if (r.ok) return;
    expect(r.reason).toMatch(/no valid answer after 2 attempts/);
    expect(r.reason).toMatch(/hunk ids 0 are not answered/);
    expect(r.resolverCalls).toBe(2);
  });

  it("fails without asking when one file has more conflicting hunks than a model should decide", async () => {
    const lines = (tag: string) => Array.from({ length: 101 }, (_, i) => `line ${i} ${tag}\nkeep ${i}\n`).join("");
    const r = await mergeTextFile("pdf-tools", "big.md", { base: lines("base"), ours: lines("ours"), theirs: lines("theirs") }, noModel);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/101 conflicting hunks \(more than 100\)/);
  });

  it("refuses an answer that names a hunk the request did not have", async () => {
    const seen: HunkRequest[] = [];
    const resolver: HunkResolver = {
      label: "fake",
      resolve: async (req) => {
        seen.push(req);
        return { hunks: [{ id: 7, decision: "keep_local", merged: "", reason: "r", confidence: 1 }] };
      },
    };
    const r = await mergeTextFile("pdf-tools", "notes.md", { base: "a\n", ours: "b\n", theirs: "c\n" }, resolver);
    expect(seen).toHaveLength(2);
    expect(seen[1]!.previousError).toBe("hunk id 7 is not in the request");
    expect(r.ok).toBe(false);
  });
});

describe("frontmatter", () => {
  it("merges field by field: a local metadata key and an upstream description both survive", async () => {
    const base = `${fm("Work with PDF files.", "metadata:\n  owner: upstream\n")}body\n`;
    const ours = `${fm("Work with PDF files.", "metadata:\n  owner: upstream\n  team: docs\n")}body\n`;
    const theirs = `${fm("Work with PDF and XPS files.", "metadata:\n  owner: upstream\nlicense: MIT\n")}body\n`;
    const r = await mergeSkillMd("pdf-tools", { base, ours, theirs }, noModel);
    expect(r.ok).toBe(true);
    if (!r.ok) return;
    expect(r.frontmatter).toEqual({
      name: "pdf-tools",
      description: "Work with PDF and XPS files.",
      metadata: { owner: "upstream", team: "docs" },
      license: "MIT",
    });
  });

  it("sends a description changed on both sides to the resolver", async () => {
    const base = `${fm("Work with PDF files.")}body\n`;
    const ours = `${fm("Work with PDF files (scanned ones too).")}body\n`;
    const theirs = `${fm("Work with PDF and XPS files.")}body\n`;
    const resolver: HunkResolver = {
      label: "fake",
      resolve: async (req) => ({
        hunks: req.hunks.map((h) => ({
          id: h.id,
          decision: "combine",
          merged: "Work with PDF (also scanned) and XPS files.",
          reason: "both",
          confidence: 0.75,
        })),
      }),
    };
    const r = await mergeSkillMd("pdf-tools", { base, ours, theirs }, resolver);
    expect(r.ok && r.frontmatter.description).toBe("Work with PDF (also scanned) and XPS files.");
    expect(r.ok && r.decisions[0]).toMatchObject({ file: "SKILL.md#frontmatter.description", decision: "combine" });
  });

  it("fails when the merged frontmatter does not validate", async () => {
    const base = `${fm("Work with PDF files.")}body\n`;
    const ours = `${fm("Work with PDF files.", "compatibility: linux\n")}body\n`;
    const theirs = `---\nname: pdf-tools-renamed\ndescription: Work with PDF files.\n---\nbody\n`;
    const r = await mergeSkillMd("pdf-tools", { base, ours, theirs }, noModel);
    expect(r.ok).toBe(false);
    expect(!r.ok && r.reason).toMatch(/merged frontmatter is invalid.*name/);
  });
});

describe("preservation report", () => {
  it("finds local sections and rules, and which the merged text lost", () => {
    const base = "# T\n- a rule\n";
    const ours = "# T\n- a rule\n- always cite the page number\n## Learned pitfalls\n- scanned PDFs need OCR first\n";
    const theirs = "# T\n- a rule\n- new upstream rule\n";
    const merged = "# T\n- a rule\n- always cite the page number\n- new upstream rule\n";
    const r = preservationReport(base, ours, theirs, merged);
    expect(r.local).toEqual([
      { kind: "rule", text: "- always cite the page number", kept: "verbatim" },
      { kind: "section", text: "## Learned pitfalls", kept: "lost" },
      { kind: "rule", text: "- scanned PDFs need OCR first", kept: "lost" },
    ]);
    expect(r.upstream).toEqual([{ kind: "rule", text: "- new upstream rule", kept: "verbatim" }]);
    expect([r.lost_local, r.lost_upstream]).toEqual([2, 0]);
  });
});

describe("unified diffs", () => {
  it("writes hunks with three lines of context and correct ranges; distant changes are separate hunks", () => {
    expect(unifiedDiff("a\nb\nc\n", "a\nB\nc\n", "x.md")).toBe("--- a/x.md\n+++ b/x.md\n@@ -1,3 +1,3 @@\n a\n-b\n+B\n c\n");
    const from = Array.from({ length: 20 }, (_, i) => `l${i}`).join("\n") + "\n";
    const to = from.replace("l1\n", "L1\n").replace("l18\n", "l18\nnew\n");
    expect(unifiedDiff(from, to, "y.md")).toBe(
      "--- a/y.md\n+++ b/y.md\n@@ -1,5 +1,5 @@\n l0\n-l1\n+L1\n l2\n l3\n l4\n@@ -17,4 +17,5 @@\n l16\n l17\n l18\n+new\n l19\n",
    );
    expect(unifiedDiff("same\n", "same\n", "z.md")).toBe("");
    expect(
      treeDiff(
        [
          { path: "a", sha256: "1", text: "x\n" },
          { path: "b", sha256: "2", text: null },
        ],
        [
          { path: "a", sha256: "1", text: "x\n" },
          { path: "c", sha256: "3", text: "new\n" },
        ],
      ).files,
    ).toEqual([
      { path: "b", change: "removed", unified: null },
      { path: "c", change: "added", unified: "--- a/c\n+++ b/c\n@@ -0,0 +1,1 @@\n+new\n" },
    ]);
  });
});

describe("merge record", () => {
  it("labels each change preserved, adopted or dropped, with the resolver's reason or the line merge's rule", () => {
    const base = "# Steps\n\n1. Draw.\n";
    const ours = "# Steps\n\n1. Draw.\n2. Date every page.\n";
    const theirs = "# Steps\n\n1. Draw in pencil first.\n";
    const merged = "# Steps\n\n1. Draw in pencil first.\n";
    const record = mergeRecord(preservationReport(base, ours, theirs, merged), [
      {
        file: "SKILL.md",
        hunk: 0,
        decision: "take_upstream",
        reason: "upstream rewrote the step",
        confidence: 0.4,
        by: "model",
        base: "1. Draw.\n",
        local: "1. Draw.\n2. Date every page.\n",
        upstream: "1. Draw in pencil first.\n",
        merged: "1. Draw in pencil first.\n",
      },
    ]);
    expect(record.map((c) => [c.side, c.text, c.label, c.change_reason])).toEqual([
      ["local", "2. Date every page.", "dropped", "take_upstream (model): upstream rewrote the step"],
      ["upstream", "1. Draw in pencil first.", "adopted", "take_upstream (model): upstream rewrote the step"],
    ]);
    expect(mergeRecord(preservationReport(base, ours, base, base), [])).toEqual([
      {
        side: "local",
        kind: "rule",
        text: "2. Date every page.",
        label: "dropped",
        kept: "lost",
        change_reason: "the line merge took upstream's text for this region, which does not have it",
        hunk: null,
      },
    ]);
    expect(mergeRecord(null, [])).toEqual([]);
  });
});
