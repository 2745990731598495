import { describe, expect, it } from "vitest";
import { z } from "zod";
import { asSchema } from "ai";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";

const a = defineTool({
  name: "alpha",
  description: "First tool",
  input: z.strictObject({ q: z.string(), n: z.number().int().optional() }),
  execute: async () => ok("a"),
});
const b = defineTool({ name: "beta", description: "Second tool", input: z.strictObject({}), always: true, execute: async () => ok("b") });

describe("ToolRegistry", () => {
  it("looks tools up by name and lists them in registration order", () => {
    const reg = new ToolRegistry([a, b]);
    expect(reg.names()).toEqual(["alpha", "beta"]);
    expect(reg.list().map((t) => t.name)).toEqual(["alpha", "beta"]);
    expect(reg.get("beta")).toBe(b);
    expect(reg.get("gamma")).toBeUndefined();
  });

  it("refuses two tools with the same name", () => {
    const dup = defineTool({ ...a, description: "imposter" } as Parameters<typeof defineTool>[0]);
    expect(() => new ToolRegistry([a, b, dup])).toThrow(/Duplicate tool name 'alpha'/);
  });

  it("exports ai SDK declarations with the zod schema as JSON Schema and no execute", async () => {
    const tools = await new ToolRegistry([a, b]).toAiTools();
    expect(Object.keys(tools)).toEqual(["alpha", "beta"]);
    const alpha = tools.alpha!;
    expect(alpha.description).toBe("First tool");
    expect("execute" in alpha).toBe(false);
    const schema = await asSchema(alpha.inputSchema).jsonSchema;
    expect(schema).toMatchObject({
      type: "object",
      properties: { q: { type: "string" }, n: { type: "integer" } },
      required: ["q"],
      additionalProperties: false,
    });
    // Declarations carry no validator: the executor validates once, with field paths.
    const validated = await asSchema(alpha.inputSchema).validate?.({ q: 1 });
    expect(validated === undefined || validated.success).toBe(true);
  });
});
