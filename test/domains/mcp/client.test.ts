/**
 * The MCP client inside workerd (src/domains/mcp/): discovery and its cache, `tools/call` results,
 * headers from workspace secrets, the egress policy, timeouts and unreachable servers as tool errors,
 * `tools/list_changed` dropping the cache, and a whole run whose model calls an MCP tool. The server
 * is the official SDK's, in this isolate (test/support/fake-mcp.ts), reached through the outbound
 * fetch every tenant-chosen URL goes through.
 */
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { MessageEvent, PersistentEvent, SystemPromptSnapshottedEvent } from "../../../src/runtime/session/events.ts";
import { McpConfigSchema, type McpServerConfig } from "../../../src/domains/mcp/config.ts";
import { clearDiscoveryCache, discoverTools } from "../../../src/domains/mcp/discovery.ts";
import { callMcpTool } from "../../../src/domains/mcp/tools.ts";
import { setOutboundFetch, testEnv, testServices } from "../../support/test-services.ts";
import { fakeMcp, routeHosts, type FakeMcp, type FakeTool } from "../../support/fake-mcp.ts";
import { ScriptedModel, doEvents, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";
import { call, json, newWorkspace } from "../../support/api.ts";

const sumTool: FakeTool = {
  tool: {
    name: "get-sum",
    description: "Returns the sum of two numbers",
    inputSchema: { type: "object", properties: { a: { type: "number" }, b: { type: "number" } }, required: ["a", "b"] },
    annotations: { readOnlyHint: true },
  },
  call: (args) => ({
    content: [{ type: "text", text: `The sum of ${String(args.a)} and ${String(args.b)} is ${Number(args.a) + Number(args.b)}.` }],
  }),
};
const echoTool: FakeTool = {
  tool: {
    name: "echo",
    description: "Echoes back the input",
    inputSchema: { type: "object", properties: { message: { type: "string" } } },
  },
  call: (args) => ({ content: [{ type: "text", text: `Echo: ${String(args.message)}` }] }),
};
const slowTool: FakeTool = {
  tool: { name: "slow", description: "Never answers", inputSchema: { type: "object" } },
  call: () => new Promise(() => undefined),
};
const failingTool: FakeTool = {
  tool: { name: "divide", description: "Fails", inputSchema: { type: "object" } },
  call: () => ({ content: [{ type: "text", text: "division by zero" }], isError: true }),
};

let fake: FakeMcp;
beforeEach(() => {
  clearDiscoveryCache();
  fake = fakeMcp([sumTool, echoTool, slowTool, failingTool]);
  setOutboundFetch(routeHosts({ "mcp.fake.test": fake.fetch }));
});
afterEach(() => {
  setOutboundFetch(null);
  testServices.allowPrivateEgress = null;
});

const serverOf = (extra: Record<string, unknown> = {}): McpServerConfig =>
  McpConfigSchema.parse({ servers: [{ name: "fake", url: "https://mcp.fake.test/mcp", ...extra }] }).servers[0]!;

const signal = () => new AbortController().signal;

describe("discovery", () => {
  it("lists the tools once and serves the next runs from the cache until refreshed", async () => {
    const e = testEnv(env);
    const first = await discoverTools({ env: e, workspaceId: "ws-mcp-a", server: serverOf() });
    expect(first).toMatchObject({ ok: true, cached: false });
    expect(first.ok && first.tools.map((t) => t.name)).toEqual(["get-sum", "echo", "slow", "divide"]);
    const listsAfterFirst = fake.methods.filter((m) => m === "tools/list").length;
    expect(listsAfterFirst).toBe(1);
    expect(fake.methods[0]).toBe("initialize");

    expect(await discoverTools({ env: e, workspaceId: "ws-mcp-a", server: serverOf() })).toMatchObject({ ok: true, cached: true });
    expect(fake.methods.filter((m) => m === "tools/list")).toHaveLength(1);
    // Another workspace (or another configuration) has its own entry.
    await discoverTools({ env: e, workspaceId: "ws-mcp-b", server: serverOf() });
    expect(fake.methods.filter((m) => m === "tools/list")).toHaveLength(2);
    await discoverTools({ env: e, workspaceId: "ws-mcp-a", server: serverOf(), refresh: true });
    expect(fake.methods.filter((m) => m === "tools/list")).toHaveLength(3);
  });

  it("reports a server that is down as an error, not a throw", async () => {
    const down = await discoverTools({
      env: testEnv(env),
      workspaceId: "ws-mcp-a",
      server: serverOf({ url: "https://down.fake.test/mcp" }),
    });
    expect(down).toMatchObject({ ok: false, error: { code: "mcp_unavailable", message: expect.stringContaining("unreachable") } });
  });

  it("drops the cached list when the server says its tools changed", async () => {
    const e = testEnv(env);
    fake.tools.push({
      tool: { name: "grow", description: "Adds a tool", inputSchema: { type: "object" } },
      call: async (_args, notify) => {
        fake.tools.push({ ...echoTool, tool: { ...echoTool.tool, name: "late" } });
        await notify.toolsChanged();
        return { content: [{ type: "text", text: "grown" }] };
      },
    });
    await discoverTools({ env: e, workspaceId: "ws-mcp-a", server: serverOf() });
    const grown = await callMcpTool({ env: e, workspaceId: "ws-mcp-a", server: serverOf(), tool: "grow", arguments: {}, signal: signal() });
    expect(grown).toEqual({ ok: true, content: "grown" });
    const after = await discoverTools({ env: e, workspaceId: "ws-mcp-a", server: serverOf() });
    expect(after.cached).toBe(false);
    expect(after.ok && after.tools.map((t) => t.name)).toContain("late");
  });
});

describe("tools/call", () => {
  const callTool = (tool: string, args: unknown, server = serverOf()) =>
    callMcpTool({ env: testEnv(env), workspaceId: "ws-mcp-a", server, tool, arguments: args, signal: signal() });

  it("returns the server's text", async () => {
    expect(await callTool("echo", { message: "hi" })).toEqual({ ok: true, content: "Echo: hi" });
    expect(fake.methods).toContain("tools/call");
  });

  it("turns isError, a timeout and an unreachable server into tool errors", async () => {
    expect(await callTool("divide", {})).toMatchObject({ ok: false, error: { code: "mcp_tool_error", message: "division by zero" } });
    const slow = await callTool("slow", {}, serverOf({ timeout_ms: 300 }));
    expect(slow).toMatchObject({ ok: false, error: { code: "mcp_timeout", message: expect.stringContaining("300 ms") } });
    const down = await callTool("echo", {}, serverOf({ url: "https://down.fake.test/mcp" }));
    expect(down).toMatchObject({ ok: false, error: { code: "mcp_unavailable" } });
  });

  it("is cancelled with the run", async () => {
    const abort = new AbortController();
    const pending = callMcpTool({
      env: testEnv(env),
      workspaceId: "ws-mcp-a",
      server: serverOf(),
      tool: "slow",
      arguments: {},
      signal: abort.signal,
    });
    setTimeout(() => abort.abort(), 50);
    expect(await pending).toMatchObject({ ok: false, error: { code: "cancelled" } });
  });

  it("sends the configured headers with values from workspace secrets, and fails when a secret is missing", async () => {
    const ws = await newWorkspace();
    expect((await call("PUT", "/api/secrets/MCP_TOKEN", { token: ws.admin, body: { value: "Bearer s3cret" } })).status).toBeLessThan(300);
    const server = serverOf({ headers: { Authorization: "MCP_TOKEN" } });
    const r = await callMcpTool({
      env: testEnv(env),
      workspaceId: ws.id,
      server,
      tool: "echo",
      arguments: { message: "x" },
      signal: signal(),
    });
    expect(r.ok).toBe(true);
    expect(fake.headers.length).toBeGreaterThan(0);
    expect(fake.headers.every((h) => h.get("authorization") === "Bearer s3cret")).toBe(true);
    const missing = await callMcpTool({
      env: testEnv(env),
      workspaceId: ws.id,
      server: serverOf({ headers: { Authorization: "NOT_STORED" } }),
      tool: "echo",
      arguments: {},
      signal: signal(),
    });
    expect(missing).toMatchObject({ ok: false, error: { code: "mcp_config", message: expect.stringContaining("NOT_STORED") } });
  });

  it("goes through the egress policy: a loopback server is refused unless private egress is allowed", async () => {
    setOutboundFetch(routeHosts({ "127.0.0.1:9": fake.fetch }));
    testServices.allowPrivateEgress = false;
    const refused = await callTool("echo", { message: "x" }, serverOf({ url: "http://127.0.0.1:9/mcp" }));
    expect(refused).toMatchObject({ ok: false, error: { code: "egress_refused" } });
    expect(fake.methods).toEqual([]);
    testServices.allowPrivateEgress = true;
    expect(await callTool("echo", { message: "x" }, serverOf({ url: "http://127.0.0.1:9/mcp" }))).toEqual({ ok: true, content: "Echo: x" });
  });
});

describe("MCP tools in a run", () => {
  const messages = (events: PersistentEvent[]) => events.filter((e): e is MessageEvent => e.type === "message").map((e) => e.message);

  it("offers the allowed tools, validates arguments, feeds results back and keeps failures as tool errors", async () => {
    const main = new ScriptedModel([
      toolCalls(
        { id: "c1", name: "mcp__fake__get-sum", args: { a: 2, b: 3 } },
        { id: "c2", name: "mcp__fake__get-sum", args: { a: "two" } },
        { id: "c3", name: "mcp__fake__slow", args: {} },
        { id: "c4", name: "mcp__down__echo", args: {} },
      ),
      text("done"),
    ]);
    const ws = await scriptedWorkspace(main);
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const put = await call("PUT", "/api/config", {
      token: ws.admin,
      body: {
        ...config,
        mcp: {
          servers: [
            { name: "fake", url: "https://mcp.fake.test/mcp", deny_tools: ["divide"], timeout_ms: 300 },
            { name: "down", url: "https://down.fake.test/mcp" },
          ],
        },
      },
    });
    expect(put.status).toBe(200);

    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "add two and three" });
    const result = await waitForRun(env, session.id, run_id, 20_000);
    expect(result).toMatchObject({ status: "completed", output_text: "done" });

    const events = await doEvents(session.id, ws.id);
    const snapshot = events.find((e): e is SystemPromptSnapshottedEvent => e.type === "system_prompt_snapshotted")!;
    const offered = [...snapshot.tools!.chosen.map((c) => c.name), ...snapshot.tools!.left_out];
    expect(offered).toEqual(expect.arrayContaining(["mcp__fake__get-sum", "mcp__fake__echo", "mcp__fake__slow"]));
    expect(offered).not.toContain("mcp__fake__divide");
    expect(offered.some((n) => n.startsWith("mcp__down__"))).toBe(false);

    const results = messages(events).filter((m) => m.role === "tool_result");
    expect(results[0]).toMatchObject({ tool_call_id: "c1", is_error: false, content: "The sum of 2 and 3 is 5." });
    expect(results[1]).toMatchObject({ tool_call_id: "c2", is_error: true, content: expect.stringContaining("invalid_arguments") });
    expect(results[2]).toMatchObject({ tool_call_id: "c3", is_error: true, content: expect.stringContaining("mcp_timeout") });
    expect(results[3]).toMatchObject({ tool_call_id: "c4", is_error: true, content: expect.stringContaining("unknown_tool") });
    expect(main.promptText(1)).toContain("The sum of 2 and 3 is 5.");
  });
});

describe("GET /api/mcp/servers", () => {
  it("shows each server's status and the tools runs get, from the cache unless refreshed", async () => {
    const ws = await newWorkspace();
    const put = await call("PUT", "/api/config", {
      token: ws.admin,
      body: {
        mcp: {
          servers: [
            { name: "fake", url: "https://mcp.fake.test/mcp", allow_tools: ["get-*", "echo"] },
            { name: "down", url: "https://down.fake.test/mcp", transport: "sse" },
          ],
        },
      },
    });
    expect(put.status).toBe(200);
    const res = await call("GET", "/api/mcp/servers", { token: ws.read });
    expect(res.status).toBe(200);
    const body = await json<{ servers: Record<string, unknown>[] }>(res);
    expect(body.servers).toEqual([
      {
        name: "fake",
        url: "https://mcp.fake.test/mcp",
        transport: "streamable-http",
        auth: null,
        personal: false,
        status: "connected",
        error: null,
        discovered_at: expect.any(Number),
        cached: false,
        tools: [
          { name: "mcp__fake__get-sum", mcp_name: "get-sum", description: expect.stringContaining("sum"), idempotent: true },
          { name: "mcp__fake__echo", mcp_name: "echo", description: expect.stringContaining("Echoes"), idempotent: false },
        ],
      },
      {
        name: "down",
        url: "https://down.fake.test/mcp",
        transport: "sse",
        auth: null,
        personal: false,
        status: "error",
        error: { code: "mcp_unavailable", message: expect.stringContaining("unreachable") },
        discovered_at: expect.any(Number),
        cached: false,
        tools: [],
      },
    ]);
    const again = await json<{ servers: { cached: boolean }[] }>(await call("GET", "/api/mcp/servers", { token: ws.read }));
    expect(again.servers.map((s) => s.cached)).toEqual([true, true]);
    const refreshed = await json<{ servers: { cached: boolean }[] }>(
      await call("GET", "/api/mcp/servers?refresh=true", { token: ws.read }),
    );
    expect(refreshed.servers.map((s) => s.cached)).toEqual([false, false]);
    expect((await call("GET", "/api/mcp/servers", { token: null })).status).toBe(401);
  });

  it("refuses a server URL the egress policy refuses when the config is saved", async () => {
    const ws = await newWorkspace();
    testServices.allowPrivateEgress = false;
    const res = await call("PUT", "/api/config", {
      token: ws.admin,
      body: { mcp: { servers: [{ name: "local", url: "http://127.0.0.1:3001/mcp" }] } },
    });
    expect(res.status).toBe(422);
    expect(await json(res)).toMatchObject({ error: { code: "egress_refused", message: expect.stringContaining("mcp.servers.0.url") } });
  });
});
