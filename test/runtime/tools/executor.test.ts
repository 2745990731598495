import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { z } from "zod";
import { cutResult, executeToolCall, resultLimit } from "../../../src/runtime/tools/executor.ts";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import { defineTool, fail, ok, type ToolContext } from "../../../src/runtime/tools/spec.ts";

function ctx(signal: AbortSignal = new AbortController().signal): ToolContext {
  return { env, workspaceId: "ws-exec", sessionId: "ses_x", runId: "run_x", toolCallId: "call_x", signal, data: {}, emitUpdate: () => {} };
}

let executed = 0;
const order = defineTool({
  name: "place_order",
  description: "Place an order",
  input: z.strictObject({
    customer: z.string().min(1),
    items: z.array(z.strictObject({ sku: z.string(), qty: z.number().int().positive() })).min(1),
  }),
  async execute(args) {
    executed++;
    return ok(`ordered ${args.items.length} items for ${args.customer}`);
  },
});
const boom = defineTool({
  name: "boom",
  description: "Always throws",
  input: z.strictObject({}),
  execute: async () => {
    throw new Error("disk on fire");
  },
});
const throwsString = defineTool({
  name: "throws_string",
  description: "Throws a non-Error",
  input: z.strictObject({}),
  execute: async () => {
    throw "plain string";
  },
});
const optional = defineTool({
  name: "optional_only",
  description: "All optional",
  input: z.strictObject({ x: z.string().optional() }),
  execute: async (a) => ok(`x=${a.x ?? "-"}`),
});
const slow = defineTool({
  name: "slow",
  description: "Never finishes on its own",
  input: z.strictObject({}),
  execute: () => new Promise(() => {}),
});
/** A tool that echoes a file holding a key, or fails naming one (issue 25: secrets are redacted from every result). */
const leaky = defineTool({
  name: "leaky",
  description: "Returns text with a secret",
  input: z.strictObject({ fail: z.boolean() }),
  execute: async (a) => {
    const key = `sk-proj-${"Zx9".repeat(20)}`;
    return a.fail ? fail("upstream", `rejected key ${key}`) : ok(`OPENAI_API_KEY=${key}\nother line`);
  },
});
const registry = new ToolRegistry([order, boom, throwsString, optional, slow, leaky]);

describe("executeToolCall", () => {
  it("redacts secret-shaped values from every result, errors included", async () => {
    const good = await executeToolCall(registry, { id: "c1", name: "leaky", args: { fail: false } }, ctx());
    expect(good.content).toBe("OPENAI_API_KEY=[redacted]\nother line");
    const bad = await executeToolCall(registry, { id: "c2", name: "leaky", args: { fail: true } }, ctx());
    expect(bad.ok).toBe(false);
    expect(bad.content).not.toContain("Zx9Zx9");
    expect(bad.error?.message).toBe("rejected key [redacted]");
  });

  it("runs a valid call and reports its duration", async () => {
    const res = await executeToolCall(
      registry,
      { id: "c1", name: "place_order", args: { customer: "ann", items: [{ sku: "a", qty: 2 }] } },
      ctx(),
    );
    expect(res).toEqual({ ok: true, content: "ordered 1 items for ann", duration_ms: expect.any(Number) });
    expect(res.duration_ms).toBeGreaterThanOrEqual(0);
  });

  it("answers an unknown tool with unknown_tool listing the available names", async () => {
    const res = await executeToolCall(registry, { id: "c2", name: "teleport", args: {} }, ctx());
    expect(res.ok).toBe(false);
    expect(res.error?.code).toBe("unknown_tool");
    expect(res.content).toContain("teleport");
    expect(res.content).toContain("Available tools: place_order, boom, throws_string, optional_only, slow");
  });

  it("answers bad arguments with invalid_arguments naming every bad field path, without running the tool", async () => {
    const before = executed;
    const res = await executeToolCall(
      registry,
      {
        id: "c3",
        name: "place_order",
        args: {
          customer: "",
          items: [
            { sku: "a", qty: 1 },
            { sku: 7, qty: 0 },
          ],
          rush: true,
        },
      },
      ctx(),
    );
    expect(executed).toBe(before);
    expect(res.error?.code).toBe("invalid_arguments");
    for (const path of ["customer", "items.1.sku", "items.1.qty", "rush"]) expect(res.content).toContain(`- ${path}:`);
    expect(res.content).toContain("place_order");
  });

  it("treats arguments that are not an object (unparsable JSON from the model) as invalid", async () => {
    const res = await executeToolCall(registry, { id: "c4", name: "place_order", args: "{not json" }, ctx());
    expect(res.error?.code).toBe("invalid_arguments");
    expect(res.content).toContain("(root)");
  });

  it("accepts missing arguments for a tool whose fields are all optional", async () => {
    expect((await executeToolCall(registry, { id: "c5", name: "optional_only", args: null }, ctx())).content).toBe("x=-");
    expect((await executeToolCall(registry, { id: "c6", name: "optional_only", args: undefined }, ctx())).content).toBe("x=-");
  });

  it("turns a thrown exception into tool_error instead of rethrowing", async () => {
    const res = await executeToolCall(registry, { id: "c7", name: "boom", args: {} }, ctx());
    expect(res).toMatchObject({ ok: false, error: { code: "tool_error" } });
    expect(res.content).toContain("disk on fire");
    const res2 = await executeToolCall(registry, { id: "c8", name: "throws_string", args: {} }, ctx());
    expect(res2.error?.code).toBe("tool_error");
    expect(res2.content).toContain("plain string");
  });

  it("does not start a call when the run is already cancelled", async () => {
    const controller = new AbortController();
    controller.abort();
    const before = executed;
    const res = await executeToolCall(
      registry,
      { id: "c9", name: "place_order", args: { customer: "a", items: [{ sku: "a", qty: 1 }] } },
      ctx(controller.signal),
    );
    expect(res.error?.code).toBe("cancelled");
    expect(executed).toBe(before);
  });

  it("answers cancelled promptly when the run is cancelled while a tool runs", async () => {
    const controller = new AbortController();
    setTimeout(() => controller.abort(), 50);
    const res = await executeToolCall(registry, { id: "c10", name: "slow", args: {} }, ctx(controller.signal));
    // The tool never finishes on its own: an answer at all means the cancel did not wait for it.
    expect(res.error?.code).toBe("cancelled");
  });
});

describe("result size (issue 20 item 6: a per-tool max_result_chars under a central cap, hermes style)", () => {
  const big = (name: string, chars: number, maxResultChars?: number) =>
    defineTool({
      name,
      description: "Answers with a long text",
      input: z.strictObject({}),
      ...(maxResultChars !== undefined ? { maxResultChars } : {}),
      execute: async () => ok(`${"a".repeat(chars - 1)}Z`),
    });

  it("cuts a result over the tool's own limit and tells the model it was cut", async () => {
    const registry = new ToolRegistry([big("small_limit", 5_000, 1_200)]);
    const result = await executeToolCall(registry, { id: "c1", name: "small_limit", args: {} }, ctx());
    expect(result.ok).toBe(true);
    expect(result.content.startsWith("a".repeat(1_200))).toBe(true);
    expect(result.content).not.toContain("Z");
    expect(result.content).toContain("[The result was cut: 3800 of 5000 characters omitted (this tool's limit is 1200).");
  });

  it("applies the central cap to a tool without a limit and over a tool's larger one; a short result is untouched", async () => {
    const registry = new ToolRegistry([big("no_limit", 100_050), big("huge_limit", 100_050, 5_000_000), big("fits", 10)]);
    for (const name of ["no_limit", "huge_limit"]) {
      const result = await executeToolCall(registry, { id: "c", name, args: {} }, ctx());
      expect(result.content).toContain("(this tool's limit is 100000)");
      expect(result.content.length).toBeLessThan(100_300);
    }
    expect((await executeToolCall(registry, { id: "c", name: "fits", args: {} }, ctx())).content).toBe(`${"a".repeat(9)}Z`);
  });

  it("never splits a surrogate pair at the cut", () => {
    const cut = cutResult(`${"a".repeat(9)}😀tail`, 10);
    expect(cut.startsWith(`${"a".repeat(9)}\n`)).toBe(true);
    expect(resultLimit(undefined, 50)).toBe(50);
    expect(resultLimit(20, 50)).toBe(20);
    expect(resultLimit(80, 50)).toBe(50);
  });
});
