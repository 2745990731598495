import { describe, expect, it } from "vitest";
import { BASE_PROMPT, buildSystemPrompt, systemPromptSections } from "../../../src/runtime/agent/prompt.ts";
import { SYSTEM_REMINDER_NOTE } from "../../../src/runtime/session/system-reminder.ts";

const now = new Date("2026-05-26T03:18:35.000Z");
const session = { id: "ses_abc", title: "Release planning", metadata: { team: "infra", a: 1 } };

describe("buildSystemPrompt", () => {
  it("contains every section in order", () => {
    const prompt = buildSystemPrompt({
      now,
      timezone: "Asia/Shanghai",
      session,
      workspacePrompt: "  Always answer in French.  ",
      extraSections: ["# Task\nReview PR #12.", "# Skill: git\nUse small commits."],
    });
    const expectedOrder = [
      BASE_PROMPT,
      SYSTEM_REMINDER_NOTE,
      "# Workspace instructions\nAlways answer in French.",
      "# Task\nReview PR #12.",
      "# Skill: git\nUse small commits.",
      '# Session\nSession id: ses_abc\nTitle: Release planning\nMetadata: {"a":1,"team":"infra"}',
      // Volatile last: the clock changes every run, everything before it is a cacheable prefix.
      "# Runtime context\nCurrent time (UTC): 2026-05-26T03:18:35.000Z\nLocal time: 2026-05-26T11:18:35+08:00 (Tuesday)\nTime zone: Asia/Shanghai (UTC+08:00)",
    ];
    expect(prompt).toBe(expectedOrder.join("\n\n"));
    expect(prompt).toContain("<system-reminder>");
  });

  it("is deterministic for the same input and changes with the clock", () => {
    const input = { now, timezone: "UTC", session };
    expect(buildSystemPrompt(input)).toBe(buildSystemPrompt({ ...input, session: { ...session, metadata: { a: 1, team: "infra" } } }));
    expect(buildSystemPrompt({ ...input, now: new Date(now.getTime() + 60_000) })).not.toBe(buildSystemPrompt(input));
  });

  it("omits empty optional sections and marks an untitled session", () => {
    const sections = systemPromptSections({
      now,
      timezone: "UTC",
      session: { id: "ses_x", title: null },
      workspacePrompt: "   ",
      extraSections: ["", "  "],
    });
    expect(sections.map((s) => s.id)).toEqual(["base", "system_reminder", "session", "runtime"]);
    expect(sections[2]!.text).toBe("# Session\nSession id: ses_x\nTitle: (untitled)");
  });

  it("falls back to UTC for a zone it does not know instead of failing the run", () => {
    const prompt = buildSystemPrompt({ now, timezone: "Not/AZone", session });
    expect(prompt).toContain("Time zone: UTC (UTC+00:00)");
  });
});
