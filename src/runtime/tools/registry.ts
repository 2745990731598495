/**
 * The tool catalogue of one run: looks tools up by name and exports them to the `ai` SDK as
 * declarations only (description + JSON schema, no `execute`), because the agent loop runs tools
 * itself through `executeToolCall` so that every call becomes a session event.
 */
import type { JSONSchema7, Tool } from "ai";
import type { ToolSpec } from "./spec.ts";
import { aiSdk } from "../agent/ai-sdk-loader.ts";

export class ToolRegistry {
  readonly #byName = new Map<string, ToolSpec<unknown>>();
  #aiTools: Record<string, Tool> | undefined;

  /** Throws when two specs share a name: a silent override would hide a tool from the model. */
  constructor(specs: ToolSpec<unknown>[]) {
    for (const spec of specs) {
      if (this.#byName.has(spec.name)) throw new Error(`Duplicate tool name '${spec.name}'`);
      this.#byName.set(spec.name, spec);
    }
  }

  get(name: string): ToolSpec<unknown> | undefined {
    return this.#byName.get(name);
  }

  list(): ToolSpec<unknown>[] {
    return [...this.#byName.values()];
  }

  names(): string[] {
    return [...this.#byName.keys()];
  }

  /**
   * Tool declarations for `streamText`. The schema is the zod schema's JSON Schema but carries no
   * validator: arguments are validated once, by the executor, whose error names each bad field so
   * the model can correct its call (the SDK would instead mark the call invalid with its own text).
   */
  async toAiTools(): Promise<Record<string, Tool>> {
    if (this.#aiTools) return this.#aiTools;
    // Imported on first use: the `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
    const { jsonSchema } = await aiSdk();
    const out: Record<string, Tool> = {};
    for (const spec of this.#byName.values()) {
      out[spec.name] = {
        description: spec.description,
        inputSchema: jsonSchema<unknown>(() => inputJsonSchema(spec)),
      };
    }
    this.#aiTools = out;
    return out;
  }

  /** The declarations the model is given, as API data (`GET /context`). */
  async declarations(): Promise<ToolDeclaration[]> {
    return Promise.all(
      this.list().map(async (spec) => ({ name: spec.name, description: spec.description, input_schema: await inputJsonSchema(spec) })),
    );
  }
}

export interface ToolDeclaration {
  name: string;
  description: string;
  input_schema: JSONSchema7;
}

/**
 * JSON Schemas by zod schema, per isolate (docs/performance.md, "Tool schemas"): converting every
 * offered tool's zod schema once per run cost a conversion per tool per run; a tool's input schema
 * is a constant of its spec, so one conversion serves every run. Weakly held: a spec built for one
 * run (and its schema) is collected with it.
 */
const converted = new WeakMap<object, JSONSchema7 | PromiseLike<JSONSchema7>>();

async function inputJsonSchema(spec: ToolSpec<unknown>): Promise<JSONSchema7> {
  if (spec.inputJsonSchema) return spec.inputJsonSchema as JSONSchema7;
  let schema = converted.get(spec.input);
  if (schema === undefined) {
    const { zodSchema } = await aiSdk();
    schema = zodSchema(spec.input).jsonSchema;
    converted.set(spec.input, schema);
  }
  return schema;
}
