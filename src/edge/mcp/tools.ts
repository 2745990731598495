/**
 * The tools Beaver's own MCP server offers (docs/mcp.md, "Beaver as an MCP server"). Each tool is a
 * thin call into what already serves the HTTP API: most send one request to Beaver's own routes
 * in-process as the caller (same principal), so validation, scope checks, size limits, rate limits,
 * page budgets and the 404-for-other-workspaces rule are exactly the API's; `view_skill` runs the
 * agent's own `skill_view`. A tool declares the scope it needs; a token without it is not even
 * shown the tool.
 */
import { z } from "zod";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import type { Env } from "../../storage/env.ts";
import type { Principal, Scope } from "../http/context.ts";
import { skillViewTool } from "../../domains/skills/skill-view.ts";

/** Sends a request to Beaver's own HTTP API as the MCP caller (same principal, same Worker). */
export type ApiCall = (method: "GET" | "POST", path: string, body?: unknown) => Promise<Response>;

export interface McpToolContext {
  env: Env;
  principal: Principal;
  api: ApiCall;
  signal: AbortSignal;
}

/** What a tool answers: text content, `isError` when the call failed. */
export type McpToolText = CallToolResult;

export interface BeaverMcpTool {
  name: string;
  title: string;
  description: string;
  scope: Scope;
  /** Only reads: MCP's `readOnlyHint`. */
  readOnly: boolean;
  input: z.ZodRawShape;
  run(args: Record<string, unknown>, ctx: McpToolContext): Promise<McpToolText>;
}

const SessionId = z.string().min(1).max(128).describe("A session id, as list_sessions or search_sessions return it");
const Limit = (max: number, def: number) =>
  z.number().int().min(1).max(max).optional().describe(`At most this many (default ${def}, at most ${max})`);

/** `?a=1&b=x` of the defined values. */
function query(params: Record<string, unknown>): string {
  const q = new URLSearchParams();
  for (const [k, v] of Object.entries(params)) if (v !== undefined && v !== null) q.set(k, String(v));
  const s = q.toString();
  return s ? `?${s}` : "";
}

/** A route's answer as tool content: its JSON on success, its status and error body otherwise (isError). */
export async function answerOf(res: Response): Promise<McpToolText> {
  const text = await res.text();
  if (res.ok) return { content: [{ type: "text", text }] };
  return { content: [{ type: "text", text: `HTTP ${res.status}: ${text}` }], isError: true };
}

const enc = encodeURIComponent;

export const BEAVER_MCP_TOOLS: readonly BeaverMcpTool[] = [
  {
    name: "list_sessions",
    title: "List sessions",
    description:
      "The workspace's sessions, most recently updated first, with title, status and token usage. Page with updated_before and before_id.",
    scope: "read",
    readOnly: true,
    input: {
      status: z.enum(["open", "closed"]).optional(),
      limit: Limit(200, 50),
      updated_before: z.number().int().optional().describe("next_updated_before of the previous page"),
      before_id: z.string().min(1).max(200).optional().describe("next_before_id of the previous page"),
    },
    run: async (args, { api }) => answerOf(await api("GET", `/api/sessions${query(args)}`)),
  },
  {
    name: "search_sessions",
    title: "Search sessions",
    description: "Full-text search over every session's messages; each hit names its session and shows the matched passage.",
    scope: "read",
    readOnly: true,
    input: {
      query: z.string().min(1).max(500).describe("Words to look for"),
      limit: Limit(100, 20),
      cursor: z.string().max(10).optional().describe("next_cursor of the previous page"),
    },
    run: async ({ query: q, ...rest }, { api }) => answerOf(await api("GET", `/api/sessions/search${query({ q, ...rest })}`)),
  },
  {
    name: "read_transcript",
    title: "Read a session's transcript",
    description: "A session's conversation along its active path: user and assistant messages, tool calls and their results.",
    scope: "read",
    readOnly: true,
    input: { session_id: SessionId, limit: Limit(10_000, 10_000).describe("Only the newest this many items") },
    run: async ({ session_id, limit }, { api }) =>
      answerOf(await api("GET", `/api/sessions/${enc(String(session_id))}/transcript${query({ limit })}`)),
  },
  {
    name: "send_message",
    title: "Send a message and wait for the answer",
    description:
      "Sends a message to a session (a new one when session_id is omitted) and waits up to two minutes for the agent's answer. " +
      "Returns the run's result (status, output_text, error); a run still going after the wait is returned as queued or running.",
    scope: "member",
    readOnly: false,
    input: {
      content: z.string().min(1).describe("The message"),
      session_id: SessionId.optional(),
      title: z.string().min(1).max(200).optional().describe("Title of the new session (only without session_id)"),
    },
    run: async ({ content, session_id, title }, { api }) => {
      let id = typeof session_id === "string" ? session_id : undefined;
      if (id === undefined) {
        const created = await api("POST", "/api/sessions", title === undefined ? {} : { title });
        if (!created.ok) return answerOf(created);
        id = ((await created.json()) as { id: string }).id;
      }
      const res = await api("POST", `/api/sessions/${enc(id)}/messages?wait=true`, { content, client_id: "mcp" });
      if (!res.ok) return answerOf(res);
      const result = (await res.json()) as Record<string, unknown>;
      const text = JSON.stringify({ session_id: id, ...result });
      return result.status === "failed" ? { content: [{ type: "text", text }], isError: true } : { content: [{ type: "text", text }] };
    },
  },
  {
    name: "list_tasks",
    title: "List toolchain tasks",
    description: "Toolchain tasks (work from Gitea events), newest first, filtered by status, agent, action type or repository.",
    scope: "read",
    readOnly: true,
    input: {
      status: z.string().max(32).optional().describe("pending, working, done, failed or cancelled"),
      agent_id: z.string().max(64).optional(),
      action_type: z.string().max(64).optional(),
      repo: z.string().max(200).optional().describe("owner/name"),
      limit: Limit(200, 50),
      before: z.number().int().optional().describe("next_before of the previous page"),
      before_id: z.string().max(200).optional().describe("next_before_id of the previous page"),
    },
    run: async (args, { api }) => answerOf(await api("GET", `/api/toolchain/tasks${query(args)}`)),
  },
  {
    name: "read_task",
    title: "Read a toolchain task",
    description: "One toolchain task with its comments, outputs and history.",
    scope: "read",
    readOnly: true,
    input: { task_id: z.string().min(1).max(200) },
    run: async ({ task_id }, { api }) => answerOf(await api("GET", `/api/toolchain/tasks/${enc(String(task_id))}`)),
  },
  {
    name: "list_skills",
    title: "List skills",
    description: "The workspace's skills (managed, from plugins, and builtin) with their descriptions and current versions.",
    scope: "read",
    readOnly: true,
    input: {},
    run: async (_args, { api }) => answerOf(await api("GET", "/api/skills")),
  },
  {
    name: "view_skill",
    title: "View a skill",
    description: "A skill's SKILL.md, or one of its supporting files by relative path — what an agent sees with skill_view.",
    scope: "read",
    readOnly: true,
    input: {
      name: z.string().min(1).max(64).describe("The skill's name, as list_skills shows it"),
      path: z.string().min(1).max(500).optional().describe("A file inside the skill; default SKILL.md"),
    },
    run: async (args, { env, principal, signal }) => {
      const result = await skillViewTool.execute(args, {
        env,
        workspaceId: principal.workspaceId,
        sessionId: "mcp",
        runId: "mcp",
        toolCallId: "mcp",
        signal,
        data: {},
        emitUpdate: () => undefined,
      });
      return { content: [{ type: "text", text: result.content }], ...(result.ok ? {} : { isError: true }) };
    },
  },
];
