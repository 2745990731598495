import { describe, expect, it } from "vitest";
import { RawCallDeltaGate } from "../../../src/runtime/agent/raw-call-gate.ts";

function feed(deltas: string[]): { shown: string[]; rest: string } {
  const gate = new RawCallDeltaGate();
  const shown = deltas.map((d) => gate.push(d));
  return { shown, rest: gate.flush() };
}

describe("RawCallDeltaGate", () => {
  it("passes prose straight through", () => {
    expect(feed(["Hello", " world"])).toEqual({ shown: ["Hello", " world"], rest: "" });
  });

  it("holds everything that opens like a call: JSON, arrays, fences, tags", () => {
    for (const opening of ["{", "[", "```json\n", "<tool_call>", "<|python_tag|>"]) {
      const { shown, rest } = feed(["  ", opening, "more"]);
      expect(shown.join("")).toBe("");
      expect(rest).toBe(`  ${opening}more`);
    }
  });

  it("waits on a partial opening, then releases it when it turns into prose", () => {
    expect(feed(["`", "x is a variable"])).toEqual({ shown: ["", "`x is a variable"], rest: "" });
    expect(feed(["<", "b>bold"])).toEqual({ shown: ["", "<b>bold"], rest: "" });
  });

  it("holds a <tool_call> tag that starts after prose, including a tag split across deltas", () => {
    const { shown, rest } = feed(["Sure. <to", "ol_call>{}", "</tool_call>"]);
    expect(shown).toEqual(["Sure. ", "", ""]);
    expect(rest).toBe("<tool_call>{}</tool_call>");
  });
});
