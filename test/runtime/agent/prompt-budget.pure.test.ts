// The prompt's policy table and budget: stable sections first, the clock last, lowest priority cut first, base never.
import { describe, expect, it } from "vitest";
import {
  SECTION_POLICY,
  SHORTENED_MARKER,
  fitPromptToBudget,
  orderSections,
  promptBudgetTokens,
  stablePrefixLength,
  type PromptSection,
} from "../../../src/runtime/agent/prompt-budget.ts";
import { renderSystemPrompt, runSystemPromptSnapshot, systemPromptSections } from "../../../src/runtime/agent/prompt.ts";
import { estimateTokens } from "../../../src/runtime/agent/tokens.ts";

const now = new Date("2026-05-26T03:18:35.000Z");
const session = { id: "ses_abc", title: "Release planning" };
const words = (n: number, word = "lorem") => Array.from({ length: n }, () => word).join(" ");

/** Every section kind, in a deliberately scrambled order. */
function allSections(): PromptSection[] {
  return [
    { id: "runtime", text: "# Runtime context\nnow" },
    { id: "memory", text: `# Memory\n${words(200, "memo")}` },
    { id: "session", text: "# Session\nSession id: ses_abc" },
    { id: "extra_0", text: `# Task\n${words(200, "task")}` },
    { id: "workspace", text: `# Workspace instructions\n${words(200, "ws")}` },
    { id: "skills", text: `# Skills\n${words(200, "skilllist")}` },
    { id: "tools", text: `# Using your tools\n${words(200, "tool")}` },
    { id: "system_reminder", text: "reminder note" },
    { id: "base", text: `You are Beaver. ${words(50, "base")}` },
  ];
}

describe("section order and the cacheable prefix", () => {
  it("puts stable sections first and volatile ones (memory, the clock) last", () => {
    const ids = orderSections(allSections()).map((s) => s.id);
    expect(ids).toEqual(["base", "system_reminder", "tools", "skills", "workspace", "extra_0", "session", "memory", "runtime"]);
    const firstVolatile = ids.findIndex((id) => !SECTION_POLICY[id.startsWith("extra_") ? "extra" : (id as "base")].stable);
    expect(ids.slice(firstVolatile).every((id) => ["memory", "runtime"].includes(id))).toBe(true);
  });

  it("stablePrefixLength ends right where the first volatile section starts", () => {
    const sections = orderSections(allSections());
    const text = renderSystemPrompt(sections);
    const n = stablePrefixLength(sections);
    expect(text.slice(n).startsWith("# Memory")).toBe(true);
    expect(text.slice(0, n).endsWith("Session id: ses_abc\n\n")).toBe(true);
  });

  it("two runs of one session an hour apart share the prompt up to the runtime section", () => {
    const runtime = { timezone: "Europe/Berlin", system_prompt: "Be brief." };
    const a = runSystemPromptSnapshot({ now, session, runtime, extra: "# Task\nDo it." });
    const b = runSystemPromptSnapshot({ now: new Date(now.getTime() + 3_600_000), session, runtime, extra: "# Task\nDo it." });
    expect(a.text).not.toBe(b.text);
    expect(a.stableChars).toBe(b.stableChars);
    expect(a.text.slice(0, a.stableChars)).toBe(b.text.slice(0, b.stableChars));
    expect(a.text.slice(a.stableChars)).toMatch(/^# Runtime context/);
    expect(a.budget).toBeNull();
  });
});

describe("fitPromptToBudget", () => {
  it("leaves a prompt within budget untouched", () => {
    const sections = orderSections(allSections());
    const { sections: out, report } = fitPromptToBudget(sections, 100_000);
    expect(out).toEqual(sections);
    expect(report).toMatchObject({ dropped: [], shortened: [], over_budget: false });
  });

  it("cuts the lowest priority first: memory, then the skills list, shortening the last one cut with a marker", () => {
    const sections = orderSections(allSections());
    const before = estimateTokens(renderSystemPrompt(sections));
    const memory = estimateTokens(sections.find((s) => s.id === "memory")!.text);
    // Over by memory's size plus 100 tokens: memory (priority 30) goes, the skills list (40) is shortened.
    const budget = before - memory - 100;
    const { sections: out, report } = fitPromptToBudget(sections, budget);
    expect(report.dropped).toEqual(["memory"]);
    expect(report.shortened.map((s) => s.id)).toEqual(["skills"]);
    expect(out.find((s) => s.id === "skills")!.text.endsWith(SHORTENED_MARKER)).toBe(true);
    expect(estimateTokens(renderSystemPrompt(out))).toBeLessThanOrEqual(budget);
    expect(report.tokens_after).toBeLessThanOrEqual(budget);
    expect(report.over_budget).toBe(false);
    // Order is kept and nothing of higher priority was touched.
    expect(out.map((s) => s.id)).toEqual(sections.map((s) => s.id).filter((id) => id !== "memory"));
    expect(out.find((s) => s.id === "extra_0")).toEqual(sections.find((s) => s.id === "extra_0"));
  });

  it("never cuts base: with a tiny budget everything else goes and the report says it is still over", () => {
    const sections = orderSections(allSections());
    const { sections: out, report } = fitPromptToBudget(sections, 10);
    expect(out.map((s) => s.id)).toEqual(["base"]);
    expect(out[0]).toEqual(sections[0]);
    expect(report.over_budget).toBe(true);
    expect(report.dropped).toHaveLength(sections.length - 1);
    expect(report.dropped).not.toContain("base");
  });

  it("keeps the task instructions (priority 80) longer than the workspace instructions (60)", () => {
    const sections = orderSections(allSections());
    const keep = ["base", "system_reminder", "runtime", "extra_0"];
    const budget = estimateTokens(renderSystemPrompt(sections.filter((s) => keep.includes(s.id)))) + 5;
    const { sections: out } = fitPromptToBudget(sections, budget);
    expect(out.map((s) => s.id)).toEqual(expect.arrayContaining(["base", "extra_0", "runtime"]));
    expect(out.map((s) => s.id)).not.toContain("workspace");
  });

  it("a run's snapshot applies the budget from the model's context window and share", () => {
    expect(promptBudgetTokens(10_000)).toBe(1_500);
    const big = words(2_000, "instruction");
    const runtime = { timezone: "UTC", system_prompt: big, system_prompt_budget_share: 0.15 };
    const snap = runSystemPromptSnapshot({ now, session, runtime, extra: "# Task\nReview PR #1.", contextWindow: 10_000 });
    expect(snap.budget).toMatchObject({ budget_tokens: 1_500, over_budget: false });
    expect(snap.budget!.shortened.map((s) => s.id)).toEqual(["workspace"]);
    expect(estimateTokens(snap.text)).toBeLessThanOrEqual(1_500);
    expect(snap.text).toContain("# Task\nReview PR #1.");
    expect(snap.text).toMatch(/# Runtime context[^]*$/);
  });

  it("systemPromptSections orders sections no matter who pushed them where", () => {
    const ids = systemPromptSections({
      now,
      timezone: "UTC",
      session,
      toolGuidance: "Prefer echo.",
      memory: "Likes tabs.",
      extraSections: ["x"],
    }).map((s) => s.id);
    expect(ids).toEqual(["base", "system_reminder", "tools", "extra_0", "session", "memory", "runtime"]);
  });
});
