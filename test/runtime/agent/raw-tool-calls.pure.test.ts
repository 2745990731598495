import { describe, expect, it } from "vitest";
import { extractRawToolCalls } from "../../../src/runtime/agent/raw-tool-calls.ts";

const TOOLS = ["echo", "current_time"];
const calls = (text: string) => extractRawToolCalls(text, TOOLS, "seed")?.tool_calls.map(({ name, args }) => ({ name, args })) ?? null;

describe("extractRawToolCalls: converts", () => {
  it.each([
    ["name/arguments", '{"name":"echo","arguments":{"text":"hi"}}', [{ name: "echo", args: { text: "hi" } }]],
    ["tool/args", '{"tool": "echo", "args": {"text": "hi"}}', [{ name: "echo", args: { text: "hi" } }]],
    ["tool_name/tool_input", '{"tool_name":"echo","tool_input":{"text":"hi"}}', [{ name: "echo", args: { text: "hi" } }]],
    [
      "llama name/parameters with type",
      '{"type":"function","name":"echo","parameters":{"text":"hi"}}',
      [{ name: "echo", args: { text: "hi" } }],
    ],
    ["arguments as a JSON string", '{"name":"echo","arguments":"{\\"text\\":\\"hi\\"}"}', [{ name: "echo", args: { text: "hi" } }]],
    ["no arguments", '{"name":"current_time"}', [{ name: "current_time", args: {} }]],
    [
      "OpenAI function wrapper",
      '{"type":"function","id":"x","function":{"name":"echo","arguments":"{\\"text\\":\\"hi\\"}"}}',
      [{ name: "echo", args: { text: "hi" } }],
    ],
    ["surrounding whitespace", '\n\n  {"name":"echo","arguments":{"text":"hi"}}  \n', [{ name: "echo", args: { text: "hi" } }]],
    ["fenced json block", '```json\n{"name":"echo","arguments":{"text":"hi"}}\n```', [{ name: "echo", args: { text: "hi" } }]],
    ["fence without a language", '```\n{"name":"echo","arguments":{"text":"hi"}}\n```', [{ name: "echo", args: { text: "hi" } }]],
    [
      "array of calls",
      '[{"name":"echo","arguments":{"text":"a"}},{"name":"current_time","arguments":{}}]',
      [
        { name: "echo", args: { text: "a" } },
        { name: "current_time", args: {} },
      ],
    ],
    ["tool_calls wrapper", '{"tool_calls":[{"name":"echo","arguments":{"text":"a"}}]}', [{ name: "echo", args: { text: "a" } }]],
    [
      "two consecutive objects",
      '{"name":"echo","arguments":{"text":"a"}}\n{"name":"echo","arguments":{"text":"b"}}',
      [
        { name: "echo", args: { text: "a" } },
        { name: "echo", args: { text: "b" } },
      ],
    ],
    ["python tag prefix", '<|python_tag|>{"name":"echo","parameters":{"text":"hi"}}', [{ name: "echo", args: { text: "hi" } }]],
    [
      "braces inside strings",
      '{"name":"echo","arguments":{"text":"a } and { \\" ]"}}',
      [{ name: "echo", args: { text: 'a } and { " ]' } }],
    ],
  ])("%s", (_label, text, expected) => {
    expect(calls(text)).toEqual(expected);
  });

  it("reads <tool_call> tags and keeps the prose around them", () => {
    const out = extractRawToolCalls(
      'I will look that up.\n<tool_call>\n{"name":"echo","arguments":{"text":"a"}}\n</tool_call>\n<tool_call>{"name":"current_time","arguments":{}}</tool_call>',
      TOOLS,
    );
    expect(out?.tool_calls.map((c) => c.name)).toEqual(["echo", "current_time"]);
    expect(out?.remaining_text).toBe("I will look that up.");
  });

  it("reads a final <tool_call> tag the model forgot to close", () => {
    expect(calls('<tool_call>{"name":"echo","arguments":{"text":"a"}}')).toEqual([{ name: "echo", args: { text: "a" } }]);
  });

  it("gives stable, distinct ids: same input same ids, another seed other ids", () => {
    const text = '[{"name":"echo","arguments":{"text":"a"}},{"name":"echo","arguments":{"text":"a"}}]';
    const one = extractRawToolCalls(text, TOOLS, "s1")!.tool_calls.map((c) => c.id);
    const again = extractRawToolCalls(text, TOOLS, "s1")!.tool_calls.map((c) => c.id);
    const other = extractRawToolCalls(text, TOOLS, "s2")!.tool_calls.map((c) => c.id);
    expect(one).toEqual(again);
    expect(new Set(one).size).toBe(2);
    expect(other[0]).not.toBe(one[0]);
    for (const id of one) expect(id).toMatch(/^call_raw_[0-9a-f]{8}_\d+$/);
  });
});

describe("extractRawToolCalls: leaves alone", () => {
  it.each([
    ["prose before JSON", 'Sure! {"name":"echo","arguments":{"text":"hi"}}'],
    ["prose after JSON", '{"name":"echo","arguments":{"text":"hi"}} is how you would call it'],
    ["prose around a fence", 'Example:\n```json\n{"name":"echo","arguments":{"text":"hi"}}\n```'],
    ["an unknown tool", '{"name":"rm_rf","arguments":{}}'],
    ["one unknown tool among known ones", '[{"name":"echo","arguments":{"text":"a"}},{"name":"nope","arguments":{}}]'],
    ["JSON data that is not a call", '{"name":"echo","age":3}'],
    ["a person record", '{"name":"Alice","email":"a@example.com"}'],
    ["two names", '{"name":"echo","tool":"current_time","arguments":{}}'],
    ["two argument keys", '{"name":"echo","arguments":{},"args":{}}'],
    ["arguments that are not an object", '{"name":"echo","arguments":[1,2]}'],
    ["arguments string that is not JSON", '{"name":"echo","arguments":"text=hi"}'],
    ["malformed JSON", '{"name":"echo","arguments":{"text":"hi"}'],
    ["a bare string", '"echo"'],
    ["plain text", "The echo tool repeats text."],
    ["empty text", "   "],
    ["an empty array", "[]"],
    ["a fence with a sentence as info string", '```this is json\n{"name":"echo","arguments":{"text":"hi"}}\n```'],
    ["a <tool_call> tag holding prose", "<tool_call>call echo with hi</tool_call>"],
  ])("%s", (_label, text) => {
    expect(extractRawToolCalls(text, TOOLS)).toBeNull();
  });

  it("converts nothing when no tools are known", () => {
    expect(extractRawToolCalls('{"name":"echo","arguments":{}}', [])).toBeNull();
  });
});
