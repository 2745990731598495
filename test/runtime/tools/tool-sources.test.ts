/**
 * `runToolset` (src/runtime/services.ts): a run's tool set is the named set plus what the registered
 * asynchronous tool sources offer when it opens; a failing source contributes nothing and a sourced
 * tool whose name is taken is left out, so neither can take a run down.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { z } from "zod";
import { DEFAULT_TOOLSET, runToolset, type RuntimeServices, type ToolSourceRequest } from "../../../src/runtime/services.ts";
import { defineTool, ok, type ToolSpec } from "../../../src/runtime/tools/spec.ts";
import { DEFAULT_CONFIG } from "../../../src/storage/config/schema.ts";
import type { Env } from "../../../src/storage/env.ts";

const tool = (name: string): ToolSpec<unknown> =>
  defineTool({ name, description: `tool ${name}`, input: z.object({}), execute: async () => ok(name) });

const base = (toolSources?: RuntimeServices["toolSources"]): RuntimeServices => ({
  toolsets: new Map([
    [DEFAULT_TOOLSET, () => [tool("a"), tool("b")]],
    ["other", () => [tool("c")]],
  ]),
  modelFactory: () => {
    throw new Error("no models here");
  },
  ...(toolSources ? { toolSources } : {}),
});

const request = { env: env as Env, workspaceId: "ws-sources", config: DEFAULT_CONFIG, data: { k: 1 } };

describe("runToolset", () => {
  it("is the named set alone without sources", async () => {
    expect((await runToolset(base(), request)).map((t) => t.name)).toEqual(["a", "b"]);
    expect((await runToolset(base(), { ...request, toolset: "other" })).map((t) => t.name)).toEqual(["c"]);
  });

  it("appends every source's tools, tells each source the run's set, and skips failures and taken names", async () => {
    const seen: ToolSourceRequest[] = [];
    const names = await runToolset(
      base([
        async (r) => {
          seen.push(r);
          return [tool("mcp__x__one"), tool("a")];
        },
        async () => {
          throw new Error("server exploded");
        },
        async () => [tool("mcp__x__one"), tool("mcp__y__two")],
      ]),
      { ...request, toolset: "other" },
    );
    expect(names.map((t) => t.name)).toEqual(["c", "mcp__x__one", "a", "mcp__y__two"]);
    expect(seen).toEqual([expect.objectContaining({ workspaceId: "ws-sources", toolset: "other", data: { k: 1 } })]);
    const defaulted = await runToolset(base([async (r) => (r.toolset === DEFAULT_TOOLSET ? [tool("z")] : [])]), request);
    expect(defaulted.map((t) => t.name)).toEqual(["a", "b", "z"]);
  });
});
