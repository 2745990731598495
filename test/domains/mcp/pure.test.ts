/**
 * The pure parts of the MCP client (src/domains/mcp/): the `mcp` config section as `PUT /api/config`
 * checks it, tool naming with allow/deny globs, JSON Schema → zod argument validation (both the zod
 * and the @cfworker/json-schema path), annotations → idempotent, and CallToolResult → ToolResult.
 */
import { describe, expect, it } from "vitest";
import { WorkspaceConfigSchema } from "../../../src/app/config.ts";
import { McpConfigSchema, mcpConfigOf } from "../../../src/domains/mcp/config.ts";
import { isToolAllowed, mcpToolName, selectTools } from "../../../src/domains/mcp/names.ts";
import { matchesToolName } from "../../../src/runtime/index.ts";
import { inputSchemaOf } from "../../../src/domains/mcp/input-schema.ts";
import { mcpResultToToolResult } from "../../../src/domains/mcp/results.ts";
import { describeTool, isIdempotent, mcpToolSpecs } from "../../../src/domains/mcp/tools.ts";
import { DEFAULT_CONFIG } from "../../../src/storage/config/schema.ts";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import { ok } from "../../../src/runtime/tools/spec.ts";
import { zodIssues } from "../../../src/kernel/errors.ts";

const server = (extra: Record<string, unknown> = {}) =>
  McpConfigSchema.parse({ servers: [{ name: "ev", url: "https://mcp.example.com/mcp", ...extra }] }).servers[0]!;

describe("mcp config section", () => {
  it("applies defaults and is read back by mcpConfigOf", () => {
    const parsed = WorkspaceConfigSchema.parse({ mcp: { servers: [{ name: "ev", url: "https://mcp.example.com/mcp" }] } });
    const mcp = mcpConfigOf({ ...DEFAULT_CONFIG, ...parsed });
    expect(mcp.servers).toEqual([
      { name: "ev", url: "https://mcp.example.com/mcp", transport: "streamable-http", headers: {}, deny_tools: [], timeout_ms: 30_000 },
    ]);
    expect(mcpConfigOf(DEFAULT_CONFIG)).toEqual({ servers: [] });
  });

  it("refuses unknown keys, bad names, duplicate names, reserved headers and bad secret names with their paths", () => {
    const issues = (value: unknown) => {
      const r = WorkspaceConfigSchema.safeParse({ mcp: value });
      return r.success ? [] : zodIssues(r.error).map((i) => i.path);
    };
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", extra: 1 }] })).toEqual(["mcp.servers.0.extra"]);
    expect(issues({ servers: [{ name: "a__b", url: "https://x.example/mcp" }] })).toEqual(["mcp.servers.0.name"]);
    expect(issues({ servers: [{ name: "ev", url: "ftp://x.example/mcp" }] })).toEqual(["mcp.servers.0.url"]);
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", transport: "stdio" }] })).toEqual(["mcp.servers.0.transport"]);
    expect(
      issues({
        servers: [
          { name: "ev", url: "https://x.example/mcp" },
          { name: "EV", url: "https://y.example/mcp" },
        ],
      }),
    ).toEqual(["mcp.servers.1.name"]);
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", headers: { "Mcp-Session-Id": "S" } }] })).toEqual([
      "mcp.servers.0.headers.Mcp-Session-Id",
    ]);
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", headers: { Authorization: "not a name" } }] })).toEqual([
      "mcp.servers.0.headers.Authorization",
    ]);
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", timeout_ms: 50 }] })).toEqual(["mcp.servers.0.timeout_ms"]);
    expect(issues({ servers: [{ name: "ev", url: "https://x.example/mcp", headers: { Authorization: "MCP_TOKEN" } }] })).toEqual([]);
  });
});

describe("tool names and allow/deny", () => {
  it("names tools mcp__<server>__<tool>, spelt for every provider and at most 64 characters", () => {
    expect(mcpToolName("ev", "get-sum")).toBe("mcp__ev__get-sum");
    expect(mcpToolName("ev", "files.read/v2")).toBe("mcp__ev__files_read_v2");
    const long = mcpToolName("server", "x".repeat(100));
    expect(long).toHaveLength(64);
    expect(long.startsWith("mcp__server__xxx")).toBe(true);
  });

  it("matches in the tool policy's glob dialect (picomatch: exact names, *, ?, {a,b}); deny wins over allow", () => {
    expect(matchesToolName("get-sum", "get-*")).toBe(true);
    expect(matchesToolName("get-sum", "get")).toBe(false);
    expect(matchesToolName("a.b", "a.*")).toBe(true);
    expect(matchesToolName("axb", "a.b")).toBe(false);
    // The syntax the policy documents now holds for allow_tools/deny_tools too (the old dialect knew only `*`).
    expect(isToolAllowed("get-env", { allow_tools: ["get-{env,sum}"], deny_tools: [] })).toBe(true);
    expect(isToolAllowed("get-tiny", { allow_tools: ["get-{env,sum}"], deny_tools: [] })).toBe(false);
    expect(isToolAllowed("get-a", { allow_tools: ["get-?"], deny_tools: [] })).toBe(true);
    expect(isToolAllowed("mcp__gh__issue_read", { deny_tools: ["mcp__gh__*"] })).toBe(false);
    expect(isToolAllowed("echo", { deny_tools: [] })).toBe(true);
    expect(isToolAllowed("echo", { allow_tools: ["get-*"], deny_tools: [] })).toBe(false);
    expect(isToolAllowed("get-sum", { allow_tools: ["get-*"], deny_tools: ["get-sum"] })).toBe(false);
    expect(isToolAllowed("get-env", { allow_tools: ["get-*"], deny_tools: ["get-sum"] })).toBe(true);
  });

  it("selects allowed tools in server order and drops a second tool that spells the same name", () => {
    const tools = [{ name: "a.b" }, { name: "a_b" }, { name: "secret" }, { name: "c" }];
    const chosen = selectTools("s", tools, { deny_tools: ["secret"] });
    expect(chosen.map((c) => [c.registryName, c.tool.name])).toEqual([
      ["mcp__s__a_b", "a.b"],
      ["mcp__s__c", "c"],
    ]);
  });
});

describe("input schema → zod", () => {
  const sumSchema = {
    type: "object",
    properties: { a: { type: "number", description: "First" }, b: { type: "number" } },
    required: ["a", "b"],
    $schema: "http://json-schema.org/draft-07/schema#",
  };

  it("validates arguments with z.fromJSONSchema", () => {
    const { input, via } = inputSchemaOf(sumSchema);
    expect(via).toBe("zod");
    expect(input.safeParse({ a: 1, b: 2 }).success).toBe(true);
    const bad = input.safeParse({ a: "1" });
    expect(bad.success).toBe(false);
    expect(zodIssues(bad.error!).map((i) => i.path)).toEqual(["a", "b"]);
  });

  it("falls back to @cfworker/json-schema for what zod cannot express (if/then)", () => {
    const schema = {
      type: "object",
      properties: { kind: { type: "string" }, size: { type: "number" } },
      if: { properties: { kind: { const: "box" } } },
      then: { required: ["size"] },
    };
    const { input, via } = inputSchemaOf(schema);
    expect(via).toBe("cfworker");
    expect(input.safeParse({ kind: "box", size: 3 }).success).toBe(true);
    expect(input.safeParse({ kind: "ball" }).success).toBe(true);
    expect(input.safeParse({ kind: "box" }).success).toBe(false);
    expect(input.safeParse("not an object").success).toBe(false);
  });

  it("treats a missing or non-object schema as an object with any properties", () => {
    const { input } = inputSchemaOf(undefined);
    expect(input.safeParse({ anything: 1 }).success).toBe(true);
    expect(input.safeParse(3).success).toBe(false);
  });

  it("shows the model the server's own schema", async () => {
    const specs = mcpToolSpecs(server(), [{ name: "get-sum", description: "Adds", inputSchema: sumSchema }], async () => ok("x"));
    const [decl] = await new ToolRegistry(specs).declarations();
    expect(decl).toEqual({ name: "mcp__ev__get-sum", description: "Adds (MCP server ev, tool get-sum)", input_schema: sumSchema });
  });
});

describe("annotations and specs", () => {
  it("marks read-only or idempotent tools idempotent, others not", () => {
    const base = { name: "t", inputSchema: {} };
    expect(isIdempotent({ ...base, annotations: { readOnlyHint: true } })).toBe(true);
    expect(isIdempotent({ ...base, annotations: { idempotentHint: true } })).toBe(true);
    expect(isIdempotent({ ...base, annotations: { readOnlyHint: false, destructiveHint: true } })).toBe(false);
    expect(isIdempotent(base)).toBe(false);
    const specs = mcpToolSpecs(server({ deny_tools: ["hidden"] }), [
      { ...base, name: "reader", annotations: { readOnlyHint: true } },
      { ...base, name: "writer" },
      { ...base, name: "hidden" },
    ]);
    expect(specs.map((s) => [s.name, s.idempotent === true])).toEqual([
      ["mcp__ev__reader", true],
      ["mcp__ev__writer", false],
    ]);
  });

  it("describes a tool by its description, else its title, and names its server", () => {
    expect(describeTool("ev", { name: "t", title: "Title", inputSchema: {} })).toBe("Title (MCP server ev, tool t)");
    expect(describeTool("ev", { name: "t", description: "x".repeat(2000), inputSchema: {} }).length).toBeLessThan(1100);
  });
});

describe("CallToolResult → ToolResult", () => {
  it("joins text, describes images, audio and binary resources, includes text resources and links", () => {
    const r = mcpResultToToolResult({
      content: [
        { type: "text", text: "Echo: hi" },
        { type: "image", data: "aGVsbG8=", mimeType: "image/png" },
        { type: "audio", data: "AAAA", mimeType: "audio/wav" },
        { type: "resource", resource: { uri: "test://doc/1", mimeType: "text/plain", text: "resource body" } },
        { type: "resource", resource: { uri: "test://bin/1", mimeType: "application/octet-stream", blob: "AAECAw==" } },
        { type: "resource_link", uri: "test://doc/2", name: "Doc 2", mimeType: "text/markdown" },
      ],
    });
    expect(r.ok).toBe(true);
    expect(r.content).toBe(
      [
        "Echo: hi",
        "[image: image/png, 5 bytes]",
        "[audio: audio/wav, 3 bytes]",
        "[resource test://doc/1 (text/plain)]\nresource body",
        "[resource test://bin/1: application/octet-stream, 4 bytes]",
        "[resource link: test://doc/2 (Doc 2) — text/markdown]",
      ].join("\n\n"),
    );
  });

  it("uses structuredContent when no block carries text, and says when there is nothing", () => {
    expect(mcpResultToToolResult({ content: [], structuredContent: { sum: 3 } }).content).toBe('{"sum":3}');
    expect(mcpResultToToolResult({ content: [] })).toEqual({ ok: true, content: "(the tool returned no content)" });
  });

  it("turns isError into an error result with the server's text", () => {
    const r = mcpResultToToolResult({ content: [{ type: "text", text: "division by zero" }], isError: true });
    expect(r).toEqual({
      ok: false,
      content: "Error (mcp_tool_error): division by zero",
      error: { code: "mcp_tool_error", message: "division by zero" },
    });
  });
});
