/**
 * Cost of raw tool-call detection, which runs on every model step that returns text only. Each
 * case is shown as a ratio against work the step does on the same text anyway: serialising it for
 * the session log (`JSON.stringify`), or parsing it once (`JSON.parse`) when the text is a call.
 */
import { performance } from "node:perf_hooks";
import { extractRawToolCalls } from "../src/runtime/agent/raw-tool-calls.ts";

const TOOLS = ["echo", "current_time", "read_file", "grep", "gitea_comment"];

function timePerOp(fn: () => unknown, minMs = 200): number {
  for (let i = 0; i < 50; i++) fn();
  let ops = 0;
  const start = performance.now();
  let elapsed = 0;
  while (elapsed < minMs) {
    for (let i = 0; i < 100; i++) fn();
    ops += 100;
    elapsed = performance.now() - start;
  }
  return (elapsed * 1000) / ops; // µs per op
}

const prose = Array.from({ length: 400 }, (_, i) => `Paragraph ${i}: the module parses {"config": ${i}} and returns a summary.`).join("\n");
const oneCall = JSON.stringify({ name: "echo", arguments: { text: "hello ".repeat(20) } });
const manyCalls =
  "```json\n" +
  JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ name: "read_file", arguments: { path: `src/file-${i}.ts`, start: i } }))) +
  "\n```";
const tagged = `I'll read both files.\n${Array.from({ length: 5 }, (_, i) => `<tool_call>{"name":"grep","arguments":{"pattern":"x${i}"}}</tool_call>`).join("\n")}`;

interface Case {
  name: string;
  text: string;
  baselineName: string;
  baseline: (t: string) => unknown;
}

const cases: Case[] = [
  {
    name: `prose answer (${(prose.length / 1024).toFixed(0)} KiB, left alone)`,
    text: prose,
    baselineName: "JSON.stringify",
    baseline: (t) => JSON.stringify(t),
  },
  { name: "one JSON call", text: oneCall, baselineName: "JSON.parse", baseline: (t) => JSON.parse(t) },
  {
    name: "fenced array of 50 calls",
    text: manyCalls,
    baselineName: "JSON.parse of the array",
    baseline: (t) => JSON.parse(t.slice(8, -4)),
  },
  { name: "prose + 5 <tool_call> tags", text: tagged, baselineName: "JSON.stringify", baseline: (t) => JSON.stringify(t) },
];

export async function run(): Promise<void> {
  for (const c of cases) {
    const detected = extractRawToolCalls(c.text, TOOLS, "bench");
    const base = timePerOp(() => c.baseline(c.text));
    const detect = timePerOp(() => extractRawToolCalls(c.text, TOOLS, "bench"));
    console.log(
      `${c.name.padEnd(42)} calls=${String(detected?.tool_calls.length ?? 0).padStart(2)}  ` +
        `detect ${detect.toFixed(2)} µs vs ${c.baselineName} ${base.toFixed(2)} µs  → ×${(detect / base).toFixed(2)}`,
    );
  }
}
