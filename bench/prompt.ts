/**
 * Cost of what a run is given (docs/agent-loop.md, "Prompt budget", "Tool assembly", "History
 * window"), against the baseline turn of bench/session-context.ts (add a turn to the in-memory tree
 * and build the 200-message window): building the system prompt with and without budget pressure,
 * assembling 60 tools, and the same window trimmed to a context window's token budget.
 */
import { z } from "zod";
import { buildContext } from "../src/runtime/session/build-context.ts";
import { SessionTree } from "../src/runtime/session/tree.ts";
import { runSystemPromptSnapshot } from "../src/runtime/agent/prompt.ts";
import { assembleTools } from "../src/runtime/tools/assemble.ts";
import { defineTool, ok } from "../src/runtime/tools/spec.ts";
import { perTurn, seedLog } from "./session-context.ts";

const WINDOW = 200;
const session = { id: "ses_bench", title: "Bench", metadata: { team: "infra" } };
const runtime = { timezone: "Europe/Berlin", system_prompt: "Follow the house style and keep answers short. ".repeat(40) };
const task = `# Task\n${"Review the pull request carefully and report findings. ".repeat(60)}`;

const TOOLS = Array.from({ length: 60 }, (_, i) =>
  defineTool({
    name: `tool_${i}_${["gitea", "mail", "weather", "calendar", "files"][i % 5]}`,
    description: `Does thing ${i} with ${["pull requests", "email", "forecasts", "events", "documents"][i % 5]} and returns a summary.`,
    input: z.strictObject({}),
    always: i < 3,
    execute: async () => ok("x"),
  }),
);

export async function run(): Promise<void> {
  const log = seedLog();
  const tree = SessionTree.fromEvents(log.events);
  const baseline = perTurn((t) => {
    for (const event of log.turn(200_000 + t)) tree.add(event);
    buildContext(tree, log.leaf, { maxMessages: WINDOW });
  });

  let unpressured = 0;
  const plain = perTurn(() => {
    unpressured = runSystemPromptSnapshot({ now: new Date(), session, runtime, extra: task, contextWindow: 200_000 }).text.length;
  });
  let report = "";
  const pressured = perTurn(() => {
    const snap = runSystemPromptSnapshot({ now: new Date(), session, runtime, extra: task, contextWindow: 8_000 });
    report = `shortened ${snap.budget!.shortened.map((s) => s.id).join(",") || "-"}, dropped ${snap.budget!.dropped.join(",") || "-"}`;
  });
  let chosen = 0;
  const tools = perTurn(() => {
    chosen = assembleTools(TOOLS, { query: "Check the weather forecast and email the team", maxTools: 24, budgetTokens: 3_000 }).specs
      .length;
  });
  let windowed = 0;
  const tokenWindow = perTurn((t) => {
    for (const event of log.turn(300_000 + t)) tree.add(event);
    windowed = buildContext(tree, log.leaf, { maxMessages: WINDOW, maxTokens: 8_000 }).length;
  });

  const ms = (x: number) => `${x.toFixed(4)} ms`;
  const line = (label: string, x: number, tail = "") => console.log(`${label.padEnd(72)}: ${ms(x)}${tail}`);
  const vs = (x: number) => `${((x / baseline) * 100).toFixed(1)}% of the baseline turn`;
  line(`baseline turn (add + ${WINDOW}-message window, 10,000-event log)`, baseline);
  line(`system prompt, no budget pressure (${unpressured} chars)`, plain, `  ${vs(plain)}`);
  line(`system prompt under budget pressure (${report})`, pressured, `  ${vs(pressured)}`);
  line(`tool assembly (once per run), 60 tools → ${chosen}`, tools, `  ${vs(tools)}`);
  line(`add + window with an 8,000-token budget (${windowed} messages)`, tokenWindow, `  ${vs(tokenWindow)}`);
}
