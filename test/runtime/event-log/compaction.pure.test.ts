/**
 * Compaction's pure part (docs/sessions.md, "Compaction"): what a plan summarises and keeps, how the
 * context opens with the summary and goes on with the kept events, and that rewind and branch across
 * a compaction see the uncompacted path.
 */
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/runtime/session/events.ts";
import { buildContext, contextForRun } from "../../../src/runtime/session/build-context.ts";
import { planCompaction, renderTranscript, shouldCompact } from "../../../src/runtime/session/compaction.ts";
import { estimateMessageTokens } from "../../../src/runtime/agent/tokens.ts";
import { cleanTitle, titleFromMessage } from "../../../src/runtime/session/titles.ts";
import { LogBuilder } from "../../support/log-builder.ts";

const historyTokens = (messages: readonly Message[]) => messages.reduce((n, m) => n + estimateMessageTokens(m), 0);
const show = (messages: Message[]) => messages.map((m) => `${m.role}:${m.role === "assistant" ? m.text : m.content}`);

function longSession(turns: number): LogBuilder {
  const log = new LogBuilder();
  for (let i = 0; i < turns; i++) {
    log.user(`question ${i} ${"x".repeat(200)}`);
    log.assistant(`answer ${i} ${"y".repeat(200)}`);
  }
  return log;
}

/** Appends the compact event a plan describes, as compactSession does. */
function applyPlan(log: LogBuilder, keepTokens: number, summary = "SUMMARY") {
  const plan = planCompaction(log.tree, log.leaf, keepTokens);
  if (plan === null) throw new Error("nothing to compact");
  const event = log.push(
    { type: "compact", summary, compacted_through: plan.through, tokens_before: plan.tokensBefore, tokens_after: 10 },
    { parent: plan.leafId },
  );
  return { plan, event };
}

describe("planCompaction", () => {
  it("keeps the newest whole groups within the keep budget and summarises the rest", () => {
    const log = longSession(10);
    log.user("the current request");
    const { plan } = applyPlan(log, 250);
    // Each old message is ~57 tokens, the request ~9: the newest five fit 250.
    expect(plan.summarised).toHaveLength(16);
    expect(show(plan.summarised)[0]).toMatch(/^user:question 0/);
    expect(plan.keptTokens).toBeLessThanOrEqual(250);
    expect(plan.tokensBefore).toBe(historyTokens(buildContext(log.tree, plan.leafId)));
    expect(log.tree.get(plan.firstKeptEventId)?.parent_id).toBe(plan.through);
  });

  it("always keeps the newest group and has nothing to do when only it exists", () => {
    const log = new LogBuilder();
    log.user("x".repeat(10_000));
    expect(planCompaction(log.tree, log.leaf, 1)).toBeNull();
    expect(planCompaction(longSession(3).tree, longSession(3).leaf, 1_000_000)).toBeNull();
  });

  it("never separates a tool result from its call", () => {
    const log = longSession(3);
    log.user("do it");
    log.calls("c", "t", "t");
    log.toolResult("c_0", "r0 " + "z".repeat(400));
    log.toolResult("c_1", "r1 " + "z".repeat(400));
    const plan = planCompaction(log.tree, log.leaf, 10)!;
    // The newest group (the calls and both results) is kept whole.
    expect(log.tree.get(plan.firstKeptEventId)).toMatchObject({ message: { role: "assistant" } });
  });

  it("folds the previous summary into the next compaction", () => {
    const log = longSession(6);
    applyPlan(log, 120, "FIRST");
    for (let i = 0; i < 6; i++) {
      log.user(`later ${i} ${"x".repeat(200)}`);
      log.assistant(`later answer ${i}`);
    }
    const { plan } = applyPlan(log, 120, "SECOND");
    expect(show(plan.summarised)[0]).toContain("FIRST");
    const ctx = contextForRun(log.tree, log.leaf);
    expect(ctx.messages[0]).toMatchObject({ role: "user" });
    expect(show(ctx.messages)[0]).toContain("SECOND");
    expect(show(ctx.messages).join("\n")).not.toContain("FIRST");
  });
});

describe("the context after a compaction", () => {
  it("opens with the summary, then the kept events and what came after", () => {
    const log = longSession(10);
    const { event, plan } = applyPlan(log, 250);
    log.user("next question");
    log.assistant("next answer");
    const ctx = contextForRun(log.tree, log.leaf);
    expect(ctx.barrierEventId).toBe(event.id);
    const shown = show(ctx.messages);
    expect(shown[0]).toMatch(/^user:<system-reminder>/);
    expect(shown[0]).toContain("SUMMARY");
    expect(shown.slice(1, 5)).toEqual(show(buildContext(log.tree, plan.leafId)).slice(-4));
    expect(shown.slice(-2)).toEqual(["user:next question", "assistant:next answer"]);
    expect(ctx.messages).toHaveLength(7);
  });

  it("keeps the summary when the token window trims the kept events", () => {
    const log = longSession(10);
    applyPlan(log, 250);
    log.user("next question");
    const messages = buildContext(log.tree, log.leaf, { maxTokens: 100 });
    expect(show(messages)[0]).toContain("SUMMARY");
    expect(show(messages).at(-1)).toBe("user:next question");
  });

  it("gives the uncompacted context back after a rewind to before the compaction", () => {
    const log = longSession(10);
    const before = buildContext(log.tree, log.leaf);
    const target = log.leaf!;
    applyPlan(log, 250);
    log.user("after");
    log.rewind(target);
    expect(buildContext(log.tree, log.leaf)).toEqual(before);
  });

  it("ignores a compaction on another branch", () => {
    const log = longSession(10);
    const fork = log.leaf!;
    log.user("branch A");
    const leafA = log.assistant("on A").id;
    log.rewind(fork);
    log.user("branch B");
    const { event } = applyPlan(log, 100);
    expect(show(buildContext(log.tree, log.leaf))[0]).toContain("SUMMARY");
    log.branch(leafA);
    const onA = buildContext(log.tree, log.leaf);
    expect(show(onA).slice(-2)).toEqual(["user:branch A", "assistant:on A"]);
    expect(onA).toHaveLength(22);
    expect(show(onA).join("\n")).not.toContain("SUMMARY");
    // Back on B, the compaction applies again.
    log.branch(event.id);
    expect(show(buildContext(log.tree, log.leaf))[0]).toContain("SUMMARY");
  });
});

describe("trigger, transcript and titles", () => {
  it("compacts only with a known window, above the share", () => {
    expect(shouldCompact(900, undefined, 0.5)).toBe(false);
    expect(shouldCompact(400, 1000, 0.5)).toBe(false);
    expect(shouldCompact(501, 1000, 0.5)).toBe(true);
  });

  it("renders a transcript cut from its oldest end", () => {
    const messages: Message[] = [
      { role: "user", content: "first" },
      { role: "assistant", text: "", tool_calls: [{ id: "c", name: "search", args: { q: "beavers" } }] },
      { role: "tool_result", tool_call_id: "c", tool_name: "search", content: "r".repeat(5_000), is_error: false },
      { role: "assistant", text: "last", tool_calls: [] },
    ];
    const full = renderTranscript(messages, 100_000);
    expect(full).toContain('→ called search({"q":"beavers"})');
    expect(full).toContain("more characters]");
    const cut = renderTranscript(messages, 200);
    expect(cut.startsWith("[… the oldest part is omitted …]")).toBe(true);
    expect(cut.endsWith("last")).toBe(true);
  });

  it("derives and cleans titles to at most 60 characters", () => {
    expect(titleFromMessage("\n  Plan the   release of v2\nwith details")).toBe("Plan the release of v2");
    expect(titleFromMessage("a".repeat(200))).toHaveLength(60);
    expect(cleanTitle('"Release planning for v2."\n')).toBe("Release planning for v2");
    expect(cleanTitle("Title: **Beaver dams**")).toBe("Beaver dams");
    expect(cleanTitle("  \n ")).toBeNull();
  });
});
