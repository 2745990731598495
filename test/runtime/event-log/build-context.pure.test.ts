// buildContext: what the model sees for a leaf — rewinds, branches, steers, compaction, windows.
import { describe, expect, it } from "vitest";
import type { Message } from "../../../src/runtime/session/events.ts";
import { assembleMessages, buildContext, contextForRun, trimToRecent, trimToTokens } from "../../../src/runtime/session/build-context.ts";
import { estimateMessageTokens } from "../../../src/runtime/agent/tokens.ts";
import { conversationForModel, toModelMessages } from "../../../src/runtime/agent/model-messages.ts";
import { LogBuilder, prng } from "../../support/log-builder.ts";

/** Compact view of messages: "role:text" (tool results as "tool:<id>:content"). */
function show(messages: Message[]): string[] {
  return messages.map((m) =>
    m.role === "user"
      ? `user:${m.content}`
      : m.role === "assistant"
        ? `assistant:${m.text}${m.tool_calls.length ? `[${m.tool_calls.map((c) => c.id).join(",")}]` : ""}`
        : `tool:${m.tool_call_id}:${m.content}`,
  );
}

const reminder = (kind: "steer" | "followUp", text: string) =>
  `<system-reminder>\n${kind === "steer" ? "The user sent this message while you were working:" : "The user queued this follow-up task:"}\n${text}\n</system-reminder>`;

describe("buildContext basics", () => {
  it("is empty for a session without events", () => {
    expect(buildContext(new LogBuilder().tree, null)).toEqual([]);
  });

  it("returns the path's messages in order, the stored objects untouched", () => {
    const log = new LogBuilder();
    const u = log.user("list files");
    log.calls("c", "ls");
    log.toolResult("c_0", "a.txt b.txt", "ls");
    log.assistant("There are two files.");
    const messages = buildContext(log.tree, log.leaf);
    expect(show(messages)).toEqual(["user:list files", "assistant:[c_0]", "tool:c_0:a.txt b.txt", "assistant:There are two files."]);
    expect(messages[0]).toBe(u.message);
  });

  it("skips hidden run facts, rewind/branch markers, channel, session_info and custom events", () => {
    const log = new LogBuilder();
    log.hidden("run_started");
    log.hidden("system_prompt_snapshotted");
    log.hidden("skill_activation_snapshotted");
    log.channel("telegram", "tg-1");
    log.user("hi");
    log.sessionInfo({ model: "gpt-5" });
    log.custom("bookmark", { at: 1 });
    log.assistant("hello");
    log.hidden("run_completed");
    log.hidden("run_failed");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:hi", "assistant:hello"]);
  });

  it("includes a custom_message but not a custom event", () => {
    const log = new LogBuilder();
    log.user("what do I like?");
    log.custom("bookmark", { note: "not for the model" });
    log.customMessage("memory_recall", { role: "user", content: "recalled: tabs" }, { ids: [1] });
    log.assistant("Tabs.");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:what do I like?", "user:recalled: tabs", "assistant:Tabs."]);
  });
});

describe("rewind and branch", () => {
  it("after a rewind, new messages attach to the target and the rewound branch is out of context", () => {
    const log = new LogBuilder();
    log.user("q1");
    const a1 = log.assistant("a1");
    log.user("q2 (regretted)");
    log.assistant("a2 (regretted)");
    log.rewind(a1.id);
    expect(log.leaf).toBe(a1.id);
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:q1", "assistant:a1"]);
    const q2 = log.user("q2 better");
    expect(q2.parent_id).toBe(a1.id);
    log.assistant("a2 better");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:q1", "assistant:a1", "user:q2 better", "assistant:a2 better"]);
  });

  it("switches between two leaves with branch events", () => {
    const log = new LogBuilder();
    const root = log.user("pick a name");
    const left = log.assistant("Beaver");
    log.rewind(root.id);
    const right = log.assistant("Otter");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:pick a name", "assistant:Otter"]);
    log.branch(left.id);
    expect(log.leaf).toBe(left.id);
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:pick a name", "assistant:Beaver"]);
    log.user("why?");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:pick a name", "assistant:Beaver", "user:why?"]);
    log.branch(right.id);
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:pick a name", "assistant:Otter"]);
  });
});

describe("steer and followUp", () => {
  it("merges a steer into the tool_result before it as a <system-reminder>", () => {
    const log = new LogBuilder();
    log.user("fix the build");
    log.calls("c", "bash");
    const result = log.toolResult("c_0", "error TS2322", "bash");
    log.user("use the v2 API", "steer");
    log.assistant("OK, switching to v2.");
    const messages = buildContext(log.tree, log.leaf);
    expect(show(messages)).toEqual([
      "user:fix the build",
      "assistant:[c_0]",
      `tool:c_0:error TS2322\n\n${reminder("steer", "use the v2 API")}`,
      "assistant:OK, switching to v2.",
    ]);
    expect(result.message.role === "tool_result" && result.message.content).toBe("error TS2322"); // not mutated
  });

  it("merges a steer that arrived between the results of one call group into the result before it", () => {
    const log = new LogBuilder();
    log.user("check both");
    log.calls("c", "read", "read");
    log.toolResult("c_0", "one");
    log.user("only the first matters", "steer");
    log.toolResult("c_1", "two");
    expect(show(buildContext(log.tree, log.leaf))).toEqual([
      "user:check both",
      "assistant:[c_0,c_1]",
      `tool:c_0:one\n\n${reminder("steer", "only the first matters")}`,
      "tool:c_1:two",
    ]);
  });

  it("holds a steer that arrived before any result of the open call group for the first result", () => {
    const log = new LogBuilder();
    log.user("go");
    log.calls("c", "bash");
    log.user("careful with rm", "steer");
    log.toolResult("c_0", "done");
    expect(show(buildContext(log.tree, log.leaf))).toEqual([
      "user:go",
      "assistant:[c_0]",
      `tool:c_0:done\n\n${reminder("steer", "careful with rm")}`,
    ]);
  });

  it("merges consecutive steers in the order they were sent", () => {
    const log = new LogBuilder();
    log.user("go");
    log.calls("c", "bash");
    log.toolResult("c_0", "r");
    log.user("first", "steer");
    log.user("second", "steer");
    const last = buildContext(log.tree, log.leaf).at(-1);
    expect(last?.role === "tool_result" && last.content).toBe(`r\n\n${reminder("steer", "first")}\n\n${reminder("steer", "second")}`);
  });

  it("includes a steer with no tool_result to merge into as a user message", () => {
    const log = new LogBuilder();
    log.user("write a poem");
    log.user("make it short", "steer");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:write a poem", "user:make it short"]);
    const alone = new LogBuilder();
    alone.user("first thing", "steer");
    expect(show(buildContext(alone.tree, alone.leaf))).toEqual(["user:first thing"]);
  });

  it("includes a steer after a finished turn as a user message, not merged into an older tool_result", () => {
    const log = new LogBuilder();
    log.user("go");
    log.calls("c", "bash");
    log.toolResult("c_0", "r");
    log.assistant("All done.");
    log.user("also update the docs", "steer");
    expect(show(buildContext(log.tree, log.leaf))).toEqual([
      "user:go",
      "assistant:[c_0]",
      "tool:c_0:r",
      "assistant:All done.",
      "user:also update the docs",
    ]);
  });

  it("treats a followUp like a steer: merged during a tool loop, standalone otherwise", () => {
    const log = new LogBuilder();
    log.user("deploy");
    log.calls("c", "deploy");
    log.toolResult("c_0", "deployed");
    log.user("then tag the release", "followUp");
    expect(buildContext(log.tree, log.leaf).at(-1)).toMatchObject({
      role: "tool_result",
      content: `deployed\n\n${reminder("followUp", "then tag the release")}`,
    });
    log.assistant("Deployed and tagged.");
    log.user("and announce it", "followUp");
    expect(show(buildContext(log.tree, log.leaf)).at(-1)).toBe("user:and announce it");
  });

  it("skips the empty assistant message of a failed run", () => {
    const log = new LogBuilder();
    log.user("hi");
    log.message({ role: "assistant", text: "", tool_calls: [], error: { code: "provider_error", message: "503" } });
    log.user("hi again");
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:hi", "user:hi again"]);
  });
});

describe("compaction", () => {
  it("stops the walk at the compact event and injects its summary", () => {
    const log = new LogBuilder();
    for (let i = 0; i < 20; i++) {
      log.user(`old q${i}`);
      log.assistant(`old a${i}`);
    }
    const compact = log.compact("We talked about 20 things.");
    log.user("new question");
    log.assistant("new answer");
    const result = contextForRun(log.tree, log.leaf);
    expect(result.barrierEventId).toBe(compact.id);
    expect(result.reachedStart).toBe(true);
    expect(result.eventsVisited).toBe(3);
    expect(result.messages).toHaveLength(3);
    expect(result.messages[0]).toMatchObject({ role: "user" });
    expect(result.messages[0]?.role === "user" && result.messages[0].content).toContain("We talked about 20 things.");
    expect(show(result.messages).slice(1)).toEqual(["user:new question", "assistant:new answer"]);
  });

  it("sees the uncompacted history again after rewinding to before the compaction", () => {
    const log = new LogBuilder();
    log.user("q1");
    const a1 = log.assistant("a1");
    log.compact("summary");
    log.user("q2");
    log.rewind(a1.id);
    expect(show(buildContext(log.tree, log.leaf))).toEqual(["user:q1", "assistant:a1"]);
  });
});

describe("maxMessages", () => {
  /** user, then an assistant calling `n` tools with their results, then a final answer: 3 + n messages per turn. */
  function toolHeavy(turns: number, n: number) {
    const log = new LogBuilder();
    for (let t = 0; t < turns; t++) {
      log.user(`task ${t}`);
      log.calls(`t${t}`, ...Array.from({ length: n }, () => "read"));
      for (let i = 0; i < n; i++) log.toolResult(`t${t}_${i}`, `out ${t}.${i}`);
      log.assistant(`done ${t}`);
    }
    return log;
  }

  it("keeps the most recent messages and never splits a call from its results", () => {
    const log = toolHeavy(5, 3); // 6 messages per turn: user, the call, 3 results, the answer
    const full = buildContext(log.tree, log.leaf);
    expect(full).toHaveLength(30);
    for (let max = 1; max <= 32; max++) {
      const window = buildContext(log.tree, log.leaf, { maxMessages: max });
      expect(window).toEqual(trimToRecent(full, max));
      expect(window[0]?.role).not.toBe("tool_result");
      // Every tool result's call is in the window.
      const calls = new Set(window.flatMap((m) => (m.role === "assistant" ? m.tool_calls.map((c) => c.id) : [])));
      for (const m of window) if (m.role === "tool_result") expect(calls.has(m.tool_call_id)).toBe(true);
      expect(window.length <= max || window.length === 1).toBe(true);
    }
    expect(show(buildContext(log.tree, log.leaf, { maxMessages: 5 }))).toEqual([
      "assistant:[t4_0,t4_1,t4_2]",
      "tool:t4_0:out 4.0",
      "tool:t4_1:out 4.1",
      "tool:t4_2:out 4.2",
      "assistant:done 4",
    ]);
  });

  it("keeps the newest group whole even when it alone exceeds the window", () => {
    const log = new LogBuilder();
    log.user("go");
    log.calls("c", "a", "b", "c", "d");
    for (let i = 0; i < 4; i++) log.toolResult(`c_${i}`, `r${i}`);
    const window = buildContext(log.tree, log.leaf, { maxMessages: 2 });
    expect(show(window)).toEqual(["assistant:[c_0,c_1,c_2,c_3]", "tool:c_0:r0", "tool:c_1:r1", "tool:c_2:r2", "tool:c_3:r3"]);
  });

  it("stops walking once the window is full", () => {
    const log = toolHeavy(200, 2);
    const result = contextForRun(log.tree, log.leaf, { maxMessages: 10 });
    expect(result.reachedStart).toBe(false);
    expect(result.eventsVisited).toBeLessThanOrEqual(12);
    expect(result.messages.length).toBeLessThanOrEqual(10);
    expect(result.messages).toEqual(trimToRecent(buildContext(log.tree, log.leaf), 10));
  });

  it("refuses a window that is not a positive integer", () => {
    const log = toolHeavy(1, 1);
    for (const bad of [0, -1, 1.5, Number.NaN]) {
      expect(() => buildContext(log.tree, log.leaf, { maxMessages: bad })).toThrow(RangeError);
    }
  });

  it("equals trimming the full context, on random sessions with steers, rewinds and compactions", () => {
    const random = prng(2024);
    for (let round = 0; round < 40; round++) {
      const log = new LogBuilder();
      const messageIds: string[] = [];
      let open: { id: string; left: number; next: number } | null = null;
      for (let step = 0; step < 60; step++) {
        const r = random();
        if (open !== null && r < 0.6) {
          messageIds.push(log.toolResult(`${open.id}_${open.next}`, `r${step}`).id);
          open.next += 1;
          if (--open.left === 0) open = null;
        } else if (r < 0.1) {
          log.user(`steer ${step}`, random() < 0.5 ? "steer" : "followUp");
        } else if (r < 0.13 && messageIds.length > 0) {
          log.rewind(messageIds[Math.floor(random() * messageIds.length)]!);
          open = null;
        } else if (r < 0.15) {
          log.compact(`summary ${step}`);
        } else if (r < 0.2) {
          log.hidden("run_started");
        } else if (r < 0.45 && open === null) {
          const n = 1 + Math.floor(random() * 3);
          const id = `c${step}`;
          messageIds.push(log.calls(id, ...Array.from({ length: n }, () => "t")).id);
          open = { id, left: n, next: 0 };
        } else if (r < 0.7) {
          messageIds.push(log.assistant(`a${step}`).id);
        } else {
          messageIds.push(log.user(`u${step}`).id);
        }
      }
      const full = buildContext(log.tree, log.leaf);
      for (const max of [1, 2, 3, 5, 8, 13, 100]) {
        expect(buildContext(log.tree, log.leaf, { maxMessages: max })).toEqual(trimToRecent(full, max));
      }
    }
  });
});

describe("assembleMessages", () => {
  it("turns a merge with nothing before it into a user message carrying the reminder", () => {
    expect(assembleMessages([{ action: "merge_prev", content: "<system-reminder>\nx\n</system-reminder>" }])).toEqual([
      { role: "user", content: "<system-reminder>\nx\n</system-reminder>" },
    ]);
  });

  it("releases held merges as standalone messages when the call group never gets a result", () => {
    const call: Message = { role: "assistant", text: "", tool_calls: [{ id: "c", name: "t", args: {} }] };
    const next: Message = { role: "user", content: "next" };
    const steer: Message = { role: "user", content: "s", meta: { source: "steer" } };
    expect(
      assembleMessages([
        { action: "include", message: call },
        { action: "merge_prev", content: "r", standalone: steer },
        { action: "include", message: next },
      ]),
    ).toEqual([call, steer, next]);
    expect(
      assembleMessages([
        { action: "include", message: call },
        { action: "merge_prev", content: "r", standalone: steer },
      ]),
    ).toEqual([call, steer]);
  });
});

describe("a 10,000-event session", () => {
  it("builds its context through a bounded window and in full", () => {
    const log = new LogBuilder();
    let turns = 0;
    for (let turn = 0; log.events.length < 10_000; turn++, turns++) {
      log.hidden("run_started");
      log.user(`task ${turn}`);
      log.calls(`c${turn}`, "bash", "read");
      log.toolResult(`c${turn}_0`, "ok");
      if (turn % 7 === 0) log.user(`hint ${turn}`, "steer");
      log.toolResult(`c${turn}_1`, "ok");
      log.assistant(`finished ${turn}`);
      log.hidden("run_completed");
    }
    expect(log.events.length).toBeGreaterThanOrEqual(10_000);
    const windowed = contextForRun(log.tree, log.leaf, { maxMessages: 50 });
    expect(windowed.messages.length).toBeLessThanOrEqual(50);
    expect(windowed.eventsVisited).toBeLessThan(60);
    const full = buildContext(log.tree, log.leaf);
    expect(windowed.messages).toEqual(trimToRecent(full, 50));
    expect(full.filter((m) => m.role === "user")).toHaveLength(turns);
    expect(full).toHaveLength(turns * 5);
    expect(full.filter((m) => m.role === "tool_result" && m.content.includes("<system-reminder>")).length).toBeGreaterThan(100);
  });
});

describe("maxTokens (the context window's history budget)", () => {
  /** A tool-heavy history: each turn is a user message, calls with bulky results and an answer. */
  function toolHeavy(turns: number) {
    const log = new LogBuilder();
    for (let t = 0; t < turns; t++) {
      log.user(`question ${t}`);
      log.calls(`c${t}`, "read", "read");
      log.toolResult(`c${t}_0`, "x".repeat(400), "read");
      log.toolResult(`c${t}_1`, "y".repeat(400), "read");
      log.calls(`d${t}`, "read");
      log.toolResult(`d${t}_0`, "z".repeat(400), "read");
      log.assistant(`answer ${t}`);
    }
    return log;
  }

  it("drops whole groups from the oldest end until the estimate fits; a call never loses its results", () => {
    const log = toolHeavy(6);
    const full = buildContext(log.tree, log.leaf);
    const budget = 700;
    const window = buildContext(log.tree, log.leaf, { maxTokens: budget });
    expect(window.length).toBeLessThan(full.length);
    expect(window).toEqual(full.slice(full.length - window.length));
    expect(window.reduce((n, m) => n + estimateMessageTokens(m), 0)).toBeLessThanOrEqual(budget);
    // Whole groups: the window never starts with a tool result, and every result's call is inside it.
    expect(window[0]!.role).not.toBe("tool_result");
    const callIds = new Set(window.flatMap((m) => (m.role === "assistant" ? m.tool_calls.map((c) => c.id) : [])));
    for (const m of window) if (m.role === "tool_result") expect(callIds.has(m.tool_call_id)).toBe(true);
    // One more group would not have fit.
    const groupBefore = full.slice(0, full.length - window.length);
    let extra = 0;
    for (let i = groupBefore.length - 1; i >= 0; i--) {
      extra += estimateMessageTokens(groupBefore[i]!);
      if (groupBefore[i]!.role !== "tool_result") break;
    }
    expect(window.reduce((n, m) => n + estimateMessageTokens(m), 0) + extra).toBeGreaterThan(budget);
  });

  it("a window that starts mid-turn still reaches the provider opening with a user message", () => {
    const log = toolHeavy(3);
    const window = buildContext(log.tree, log.leaf, { maxTokens: 150 });
    expect(window[0]!.role).toBe("assistant");
    const settled = conversationForModel(window);
    expect(settled[0]!.role).toBe("user");
    expect(toModelMessages(window)[0]!.role).toBe("user");
  });

  it("keeps the newest group even when it alone is over budget, and applies after maxMessages", () => {
    const log = toolHeavy(4);
    const window = buildContext(log.tree, log.leaf, { maxTokens: 1 });
    expect(show(window)).toEqual(["assistant:answer 3"]);
    const both = contextForRun(log.tree, log.leaf, { maxMessages: 8, maxTokens: 100_000 });
    expect(both.messages).toEqual(trimToRecent(buildContext(log.tree, log.leaf), 8));
    const tight = contextForRun(log.tree, log.leaf, { maxMessages: 8, maxTokens: 300 });
    expect(tight.messages.length).toBeLessThan(both.messages.length);
    expect(tight.trimmed).toBe(both.trimmed + both.messages.length - tight.messages.length);
    expect(trimToTokens(both.messages, 300)).toEqual(tight.messages);
  });
});
