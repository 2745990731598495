/**
 * An MCP tool's `inputSchema` (JSON Schema) as the zod schema the tool executor validates arguments
 * with (docs/mcp.md, "Arguments"). zod 4's `z.fromJSONSchema` covers what MCP servers declare in
 * practice; for what it cannot express (`if`/`then`, `not`, `dependentSchemas`, ...) the SDK's
 * @cfworker/json-schema validator checks the arguments instead. Both run in workerd, which forbids
 * code generation (so ajv, the SDK's default, cannot). The model is shown the server's own schema.
 */
import { z, type ZodType } from "zod";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";

export type JsonSchemaObject = Record<string, unknown>;

const cfworker = new CfWorkerJsonSchemaValidator({ shortcircuit: false });

/** MCP input schemas are objects; anything else is treated as "an object with any properties". */
export function normaliseInputSchema(schema: unknown): JsonSchemaObject {
  if (schema === null || typeof schema !== "object" || Array.isArray(schema)) return { type: "object" };
  return schema as JsonSchemaObject;
}

/** The zod schema for an MCP tool's arguments, and which validator backs it. */
export function inputSchemaOf(schema: unknown): { input: ZodType<unknown>; via: "zod" | "cfworker" } {
  const json = normaliseInputSchema(schema);
  try {
    return { input: z.fromJSONSchema(json as Parameters<typeof z.fromJSONSchema>[0]), via: "zod" };
  } catch {
    return { input: cfworkerSchema(json), via: "cfworker" };
  }
}

/** A zod schema that accepts any object and reports @cfworker/json-schema's verdict as one issue. */
function cfworkerSchema(json: JsonSchemaObject): ZodType<unknown> {
  const validate = cfworker.getValidator<unknown>(json as Parameters<typeof cfworker.getValidator>[0]);
  return z.record(z.string(), z.unknown()).superRefine((value, ctx) => {
    const verdict = validate(value);
    if (!verdict.valid) ctx.addIssue({ code: "custom", message: verdict.errorMessage ?? "does not match the tool's input schema" });
  });
}
