/**
 * Beaver's MCP server at /mcp (src/edge/mcp/), driven by the official SDK `Client` over Streamable
 * HTTP through the Worker's own fetch: bearer tokens as under /api, scopes deciding which tools are
 * even listed, each tool answering what its HTTP route answers (another workspace's session is a 404
 * error result), and send_message running a real (scripted) turn and returning its answer.
 */
import { afterEach, describe, expect, it } from "vitest";
import { exports } from "cloudflare:workers";
import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import { CfWorkerJsonSchemaValidator } from "@modelcontextprotocol/sdk/validation/cfworker";
import { call, json, newWorkspace } from "../../support/api.ts";
import { ScriptedModel, scriptedWorkspace, text } from "../../support/sessions.ts";

const open: Client[] = [];
afterEach(async () => {
  await Promise.all(open.splice(0).map((c) => c.close()));
});

async function connect(token: string): Promise<Client> {
  const client = new Client({ name: "test", version: "1.0.0" }, { jsonSchemaValidator: new CfWorkerJsonSchemaValidator() });
  const transport = new StreamableHTTPClientTransport(new URL("https://beaver.test/mcp"), {
    fetch: (input, init) => exports.default.fetch(new Request(input, init)),
    requestInit: { headers: { Authorization: `Bearer ${token}` } },
  });
  await client.connect(transport);
  open.push(client);
  return client;
}

const textOf = (result: Awaited<ReturnType<Client["callTool"]>>) =>
  (result.content as { type: string; text: string }[]).map((c) => c.text).join("");

const READ_TOOLS = ["list_sessions", "search_sessions", "read_transcript", "list_tasks", "read_task", "list_skills", "view_skill"];

describe("/mcp", () => {
  it("needs a bearer token and accepts only POST", async () => {
    const res = await call("POST", "/mcp", { token: null, body: { jsonrpc: "2.0", id: 1, method: "ping" } });
    expect(res.status).toBe(401);
    // The OAuth provider's challenge (RFC 6750 §3, RFC 9728 §5.1): test/edge/oauth/oauth-server.test.ts.
    expect(res.headers.get("WWW-Authenticate")).toContain("resource_metadata=");
    const ws = await newWorkspace();
    const get = await call("GET", "/mcp", { token: ws.read, headers: { Accept: "text/event-stream" } });
    expect(get.status).toBe(405);
    expect(get.headers.get("Allow")).toBe("POST");
  });

  it("lists read tools only to a read token, and write tools too to a member", async () => {
    const ws = await newWorkspace();
    const reader = await connect(ws.read);
    expect(reader.getServerVersion()).toMatchObject({ name: "beaver" });
    const readTools = (await reader.listTools()).tools;
    expect(readTools.map((t) => t.name).sort()).toEqual([...READ_TOOLS].sort());
    expect(readTools.every((t) => t.annotations?.readOnlyHint === true && typeof t.description === "string")).toBe(true);
    const refused = await reader.callTool({ name: "send_message", arguments: { content: "hi" } });
    expect(refused.isError).toBe(true);
    expect(textOf(refused)).toContain("send_message");

    const member = await connect(ws.member);
    const memberTools = (await member.listTools()).tools.map((t) => t.name);
    expect(memberTools.sort()).toEqual([...READ_TOOLS, "send_message"].sort());
    expect(await member.ping()).toEqual({});
  });

  it("sends a message, waits for the answer, and finds it again through the read tools", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("The answer is 42.")]));
    const member = await connect(ws.member);
    const sent = await member.callTool({ name: "send_message", arguments: { content: "What is six times seven?", title: "Arithmetic" } });
    expect(sent.isError).toBeFalsy();
    const result = JSON.parse(textOf(sent)) as { session_id: string; status: string; output_text: string };
    expect(result).toMatchObject({ status: "completed", output_text: "The answer is 42." });

    const reader = await connect(ws.read);
    const transcript = JSON.parse(
      textOf(await reader.callTool({ name: "read_transcript", arguments: { session_id: result.session_id } })),
    ) as {
      items: { role?: string; text?: string }[];
    };
    expect(JSON.stringify(transcript.items)).toContain("What is six times seven?");
    expect(JSON.stringify(transcript.items)).toContain("The answer is 42.");

    const listed = JSON.parse(textOf(await reader.callTool({ name: "list_sessions", arguments: {} }))) as {
      sessions: { id: string; title: string }[];
    };
    expect(listed.sessions).toEqual([expect.objectContaining({ id: result.session_id, title: "Arithmetic" })]);

    // A follow-up in the same session.
    const again = JSON.parse(
      textOf(await member.callTool({ name: "send_message", arguments: { content: "Thanks", session_id: result.session_id } })),
    );
    expect(again).toMatchObject({ session_id: result.session_id, status: "completed" });
  });

  it("answers each tool as its route does: search, tasks, skills, and 404 for another workspace's session", async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const created = await json<{ id: string }>(await call("POST", "/api/sessions", { token: other.member, body: {} }));
    const reader = await connect(ws.read);

    const foreign = await reader.callTool({ name: "read_transcript", arguments: { session_id: created.id } });
    expect(foreign.isError).toBe(true);
    expect(textOf(foreign)).toContain("HTTP 404");

    expect(JSON.parse(textOf(await reader.callTool({ name: "search_sessions", arguments: { query: "anything" } })))).toEqual({
      results: [],
      next_cursor: null,
    });
    expect(JSON.parse(textOf(await reader.callTool({ name: "list_tasks", arguments: {} })))).toMatchObject({ tasks: [] });
    const task = await reader.callTool({ name: "read_task", arguments: { task_id: "task_missing" } });
    expect(task.isError).toBe(true);

    const skills = JSON.parse(textOf(await reader.callTool({ name: "list_skills", arguments: {} }))) as { skills: { name: string }[] };
    expect(skills.skills.map((s) => s.name)).toContain("beaver-skill-authoring");
    const viewed = await reader.callTool({ name: "view_skill", arguments: { name: "beaver-skill-authoring" } });
    expect(viewed.isError).toBeFalsy();
    expect(textOf(viewed)).toContain("# Writing Beaver skills");
    const missing = await reader.callTool({ name: "view_skill", arguments: { name: "no-such-skill" } });
    expect(missing.isError).toBe(true);

    const bad = await reader.callTool({ name: "list_sessions", arguments: { limit: 0 } });
    expect(bad.isError).toBe(true);
  });
});
