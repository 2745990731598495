// Tool policy, tool approval and extensions in real runs inside the SessionDO (docs/approvals.md, docs/extensions.md).
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { StreamFrame, ToolApprovalRequestedEvent } from "../../../src/runtime/session/events.ts";
import type { Extension } from "../../../src/runtime/extensions.ts";
import { MAX_RUN_ATTEMPTS } from "../../../src/runtime/session/run-executor.ts";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { testServices } from "../../support/test-services.ts";
import {
  ScriptedModel,
  countingTool,
  doEvents,
  registerToolset,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
  toolResults,
} from "../../support/sessions.ts";

afterEach(() => {
  testServices.extensions = [];
});

const toolNames = (options: LanguageModelV4CallOptions | undefined) => (options?.tools ?? []).map((t) => t.name);

/** Adds `extra` (tool_policy, runtime settings) to the workspace's configuration. */
async function configure(ws: TestWorkspace, extra: { tool_policy?: unknown; runtime?: Record<string, unknown> }): Promise<void> {
  const current = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
  const runtime = { ...(current.runtime as Record<string, unknown>), ...extra.runtime };
  const res = await call("PUT", "/api/config", { token: ws.admin, body: { ...current, ...extra, runtime } });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
}

async function requested(sessionId: string, workspaceId: string, count = 1): Promise<ToolApprovalRequestedEvent[]> {
  let found: ToolApprovalRequestedEvent[] = [];
  await until(
    async () => {
      found = (await doEvents(sessionId, workspaceId)).filter((e): e is ToolApprovalRequestedEvent => e.type === "tool_approval_requested");
      return found.length >= count;
    },
    10_000,
    "tool_approval_requested",
  );
  return found;
}

const decide = (ws: TestWorkspace, token: string, sessionId: string, approvalId: string, decision: string) =>
  call("POST", `/api/sessions/${sessionId}/approvals/${approvalId}`, { token, body: { decision } });

/** A workspace whose `deploy` tool needs approval, a session, and a run that calls it once. */
async function pausedRun(opts: { runtime?: Record<string, unknown>; answer?: string } = {}) {
  const deploy = countingTool("deploy");
  const toolset = registerToolset(`approvals-${crypto.randomUUID()}`, [deploy.spec]);
  const main = new ScriptedModel([toolCalls({ id: "d1", name: "deploy", args: { n: 7 } }), text(opts.answer ?? "all done")]);
  const ws = await scriptedWorkspace(main);
  await configure(ws, {
    tool_policy: [{ match: "deploy", action: "require_approval" }],
    ...(opts.runtime ? { runtime: opts.runtime } : {}),
  });
  const session = await createSession(env, { workspaceId: ws.id });
  const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "ship it", toolset });
  const [request] = await requested(session.id, ws.id);
  return { deploy, main, ws, sessionId: session.id, runId: run_id, request: request! };
}

describe("tool policy in a run", () => {
  it("a denied tool is not offered, and a call to it anyway is refused with a tool error the run survives", async () => {
    const danger = countingTool("danger_zone");
    const fine = countingTool("fine_tool");
    const toolset = registerToolset("policy-deny", [danger.spec, fine.spec]);
    const main = new ScriptedModel([
      toolCalls({ id: "x1", name: "danger_zone", args: {} }, { id: "x2", name: "fine_tool", args: { n: 1 } }),
      text("recovered"),
    ]);
    const ws = await scriptedWorkspace(main);
    await configure(ws, { tool_policy: [{ match: "danger_*", action: "deny" }] });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "try both", toolset });
    const result = await waitForRun(env, session.id, run_id, 10_000);

    expect(result).toMatchObject({ status: "completed", output_text: "recovered" });
    expect(toolNames(main.calls[0])).not.toContain("danger_zone");
    expect(toolNames(main.calls[0])).toContain("fine_tool");
    expect(danger.state.runs).toBe(0);
    expect(fine.state.runs).toBe(1);
    const [refused, ran] = toolResults(await doEvents(session.id, ws.id));
    expect(refused).toMatchObject({ tool_call_id: "x1", is_error: true, content: expect.stringContaining("denied_by_policy") });
    expect(refused!.content).toContain('"danger_*": deny');
    expect(ran).toMatchObject({ tool_call_id: "x2", is_error: false });
    expect(main.promptText(1)).toContain("denied_by_policy");
  });
});

describe("tool approval", () => {
  it("pauses the run with an approval request; an approval runs the tool with the recorded arguments and the run answers", async () => {
    const { deploy, ws, sessionId, runId, request } = await pausedRun();
    expect(request).toMatchObject({ tool_call_id: "d1", tool_name: "deploy", args: { n: 7 }, run_id: runId });
    expect(request.approval_id).toMatch(/^apr_/);
    expect(request.expires_at).toBeGreaterThan(request.ts);
    expect(deploy.state.runs).toBe(0);
    const run = await json<{ status: string }>(await call("GET", `/api/sessions/${sessionId}/runs/${runId}`, { token: ws.read }));
    expect(run.status).toBe("running");

    expect((await decide(ws, ws.read, sessionId, request.approval_id, "approve")).status).toBe(403);
    expect((await decide(ws, ws.member, sessionId, "apr_unknown", "approve")).status).toBe(404);
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "maybe")).status).toBe(400);
    const ok = await decide(ws, ws.member, sessionId, request.approval_id, "approve");
    expect(ok.status).toBe(200);
    expect(await json(ok)).toMatchObject({ approval_id: request.approval_id, decision: "approve", run_id: runId, tool_name: "deploy" });
    expect((await decide(ws, ws.admin, sessionId, request.approval_id, "deny")).status).toBe(409);

    const result = await waitForRun(env, sessionId, runId, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "all done" });
    expect(deploy.state.runs).toBe(1);
    const events = await doEvents(sessionId, ws.id);
    const path = events.filter((e) => e.type === "message" || e.type.startsWith("tool_approval")).map((e) => e.type);
    expect(path).toEqual(["message", "message", "tool_approval_requested", "tool_approval_decided", "message", "message"]);
    expect(events.find((e) => e.type === "tool_approval_decided")).toMatchObject({ decision: "approve", decided_by: "person" });
    expect(toolResults(events)).toEqual([expect.objectContaining({ tool_call_id: "d1", is_error: false, content: "deploy ran (7)" })]);
  });

  it("a denial tells the model and the tool never runs", async () => {
    const { deploy, main, ws, sessionId, runId, request } = await pausedRun({ answer: "understood, not deploying" });
    expect((await decide(ws, ws.admin, sessionId, request.approval_id, "deny")).status).toBe(200);
    const result = await waitForRun(env, sessionId, runId, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "understood, not deploying" });
    expect(deploy.state.runs).toBe(0);
    const [denied] = toolResults(await doEvents(sessionId, ws.id));
    expect(denied).toMatchObject({ tool_call_id: "d1", is_error: true, content: expect.stringContaining("A person denied") });
    expect(main.promptText(1)).toContain("approval_denied");
  });

  it("an unanswered approval is denied by the alarm once its time is up", async () => {
    const { deploy, ws, sessionId, runId, request } = await pausedRun({ runtime: { approval_timeout_ms: 1_000 } });
    // Before its time the alarm leaves it alone (and returns although the run still waits).
    expect(await runDurableObjectAlarm(stub(sessionId))).toBe(true);
    expect((await doEvents(sessionId, ws.id)).some((e) => e.type === "tool_approval_decided")).toBe(false);
    await until(() => Date.now() > request.expires_at + 10, 5_000, "the approval's expiry");
    expect(await runDurableObjectAlarm(stub(sessionId))).toBe(true);

    const result = await waitForRun(env, sessionId, runId, 10_000);
    expect(result).toMatchObject({ status: "completed" });
    expect(deploy.state.runs).toBe(0);
    const events = await doEvents(sessionId, ws.id);
    expect(events.find((e) => e.type === "tool_approval_decided")).toMatchObject({ decision: "deny", decided_by: "timeout" });
    expect(toolResults(events)[0]).toMatchObject({ is_error: true, content: expect.stringContaining("nobody answered in time") });
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "approve")).status).toBe(409);
  });

  it("survives an eviction while waiting: the resumed run waits again and an approval continues it", async () => {
    const { deploy, ws, sessionId, runId, request } = await pausedRun();
    // More restarts than MAX_RUN_ATTEMPTS: waiting for a person is not the run failing to finish.
    for (let i = 0; i < MAX_RUN_ATTEMPTS + 1; i++) {
      await abortAllDurableObjects();
      // The alarm resumes the run, which finds its request undecided and waits again (the alarm returns).
      expect(await runDurableObjectAlarm(stub(sessionId))).toBe(true);
    }
    expect(deploy.state.runs).toBe(0);
    await abortAllDurableObjects();
    // A decision reaching an object with no run in memory wakes the run itself.
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "approve")).status).toBe(200);

    const result = await waitForRun(env, sessionId, runId, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "all done" });
    expect(deploy.state.runs).toBe(1);
    const events = await doEvents(sessionId, ws.id);
    expect(events.filter((e) => e.type === "tool_approval_requested")).toHaveLength(1);
    expect(events.filter((e) => e.type === "run_started")).toHaveLength(1);
    expect(toolResults(events)).toEqual([expect.objectContaining({ tool_call_id: "d1", is_error: false })]);
  });

  it("cancelling a waiting run closes its approval", async () => {
    const { deploy, ws, sessionId, runId, request } = await pausedRun();
    expect((await call("POST", `/api/sessions/${sessionId}/cancel`, { token: ws.member })).status).toBe(200);
    expect(await waitForRun(env, sessionId, runId, 10_000)).toMatchObject({ status: "cancelled" });
    expect(deploy.state.runs).toBe(0);
    const decided = (await doEvents(sessionId, ws.id)).find((e) => e.type === "tool_approval_decided");
    expect(decided).toMatchObject({ approval_id: request.approval_id, decision: "deny", decided_by: "cancelled" });
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "approve")).status).toBe(409);
  });

  it("nobody is asked to approve a call to a tool the run does not have", async () => {
    const main = new ScriptedModel([toolCalls({ id: "u1", name: "no_such_tool", args: {} }), text("ok then")]);
    const ws = await scriptedWorkspace(main);
    await configure(ws, { tool_policy: [{ match: "*", action: "require_approval" }] });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "go" });
    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed", output_text: "ok then" });
    const events = await doEvents(session.id, ws.id);
    expect(events.some((e) => e.type === "tool_approval_requested")).toBe(false);
    expect(toolResults(events)[0]).toMatchObject({ is_error: true, content: expect.stringContaining("unknown_tool") });
  });

  it("GET /context of a running run shows why each tool was chosen (tool_choices, issue 20 item 5)", async () => {
    const { ws, sessionId, request } = await pausedRun({ runtime: { always_tools: ["deploy"] } });
    const res = await call("GET", `/api/sessions/${sessionId}/context`, { token: ws.read });
    expect(res.status).toBe(200);
    const context = await json<{ tools: { name: string }[]; tool_choices: { name: string; reason: string; score?: number }[] | null }>(res);
    expect(context.tool_choices).not.toBeNull();
    const choices = new Map(context.tool_choices!.map((c) => [c.name, c]));
    // One reason per offered tool, and only for offered tools.
    expect([...choices.keys()].sort()).toEqual(context.tools.map((t) => t.name).sort());
    expect(choices.get("deploy")).toMatchObject({ reason: "configured" });
    for (const c of choices.values()) expect(["always", "configured", "hinted", "relevant"]).toContain(c.reason);
    const relevant = [...choices.values()].filter((c) => c.reason === "relevant");
    expect(relevant.length).toBeGreaterThan(0);
    for (const c of relevant) expect(c).toMatchObject({ ranked_by: "keywords", score: expect.any(Number) });
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "deny")).status).toBe(200);
    // Idle again: no run, no choices.
    await until(
      async () =>
        (await json<{ tool_choices: unknown }>(await call("GET", `/api/sessions/${sessionId}/context`, { token: ws.read })))
          .tool_choices === null,
      10_000,
      "the run to end",
    );
  });

  it("another workspace's token cannot decide (404)", async () => {
    const { ws, sessionId, request } = await pausedRun();
    const other = await scriptedWorkspace(new ScriptedModel([text("x")]));
    expect((await decide(other, other.admin, sessionId, request.approval_id, "approve")).status).toBe(404);
    expect((await decide(ws, ws.member, sessionId, request.approval_id, "deny")).status).toBe(200);
  });
});

describe("extensions in a run", () => {
  it("hooks rewrite arguments, results and context in order; an extension may ask for approval; a throwing subscriber fails nothing", async () => {
    const tool = countingTool("adder");
    const toolset = registerToolset("extensions-run", [tool.spec]);
    const main = new ScriptedModel([toolCalls({ id: "a1", name: "adder", args: { n: 1 } }), text("final")]);
    const ws = await scriptedWorkspace(main);
    const frames: StreamFrame[] = [];
    const mine = (id: string) => id === ws.id;
    const exts: Extension[] = [
      {
        name: "double",
        beforeToolCall: (c, ctx) =>
          mine(ctx.workspaceId) ? { action: "continue", args: { n: (c.args as { n: number }).n * 2 } } : undefined,
        afterToolCall: (_c, r, ctx) => (mine(ctx.workspaceId) ? { ...r, content: `${r.content} [audited]` } : undefined),
        transformContext: (messages, ctx) =>
          mine(ctx.workspaceId) ? messages.map((m) => (m.role === "user" ? { ...m, content: `${m.content} (transformed)` } : m)) : messages,
      },
      {
        name: "plus_ten_then_ask",
        beforeToolCall: (c, ctx) =>
          mine(ctx.workspaceId) ? { action: "require_approval", reason: `adder with ${(c.args as { n: number }).n + 10}` } : undefined,
        convertToLlm: (messages, ctx) =>
          mine(ctx.workspaceId)
            ? messages.map((m) => (m.role === "tool_result" ? { ...m, content: `${m.content} (for the model)` } : m))
            : messages,
        onEvent: (frame, where) => {
          if (where.workspaceId === ws.id) frames.push(frame);
        },
      },
      {
        name: "broken_subscriber",
        onEvent: () => {
          throw new Error("subscriber boom");
        },
      },
    ];
    testServices.extensions = exts;
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "add", toolset });
    const [request] = await requested(session.id, ws.id);
    // The approval carries the arguments as rewritten by the layers before the one that asked.
    expect(request).toMatchObject({ tool_name: "adder", args: { n: 2 }, reason: "adder with 12" });
    expect((await decide(ws, ws.member, session.id, request!.approval_id, "approve")).status).toBe(200);

    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed", output_text: "final" });
    expect(tool.state.runs).toBe(1);
    const [result] = toolResults(await doEvents(session.id, ws.id));
    expect(result!.content).toBe("adder ran (2) [audited]");
    expect(main.promptText(0)).toContain("add (transformed)");
    expect(main.promptText(1)).toContain("adder ran (2) [audited] (for the model)");
    await until(() => frames.some((f) => f.type === "runtime_end"), 5_000, "subscriber frames");
    expect(frames.map((f) => f.type)).toEqual(
      expect.arrayContaining(["runtime_start", "tool_approval_requested", "tool_approval_decided", "turn_end"]),
    );
  });

  it("GET /context shows what the model would get: the policy's offered tools and the hooked messages", async () => {
    const main = new ScriptedModel([text("noted")]);
    const ws = await scriptedWorkspace(main);
    await configure(ws, { tool_policy: [{ match: "echo", action: "deny" }] });
    testServices.extensions = [
      {
        name: "tag",
        transformContext: (messages, ctx) =>
          ctx.workspaceId === ws.id ? messages.map((m) => (m.role === "user" ? { ...m, content: `${m.content} #tagged` } : m)) : messages,
      },
    ];
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "remember this" });
    await waitForRun(env, session.id, run_id, 10_000);
    const res = await call("GET", `/api/sessions/${session.id}/context`, { token: ws.read });
    expect(res.status).toBe(200);
    const context = await json<{ tools: { name: string }[]; messages: { role: string; content?: string }[] }>(res);
    expect(context.tools.map((t) => t.name)).not.toContain("echo");
    expect(context.tools.map((t) => t.name)).toContain("current_time");
    expect(context.messages[0]).toMatchObject({ role: "user", content: "remember this #tagged" });
    expect(main.promptText(0)).toContain("remember this #tagged");
    expect(toolNames(main.calls[0])).not.toContain("echo");
  });
});
