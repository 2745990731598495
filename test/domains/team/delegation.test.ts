/**
 * The `delegate` tool in the Worker (docs/delegation.md): children in their own SessionDOs, in
 * parallel, linked both ways, with at most the parent's tools, bounded depth and parallelism, usage
 * counted toward the parent's run, cancel passed down (also to the children of a parent cancelled
 * after an eviction), and a parent evicted mid-delegation that collects its children without starting
 * any of them twice.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { call, json } from "../../support/api.ts";
import {
  ScriptedModel,
  deferred,
  doEvents,
  registerModel,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  toolResults,
  until,
} from "../../support/sessions.ts";
import { childSessionId } from "../../../src/domains/team/delegation.ts";
import { delegateCall, delegateResults, delegationToolset, hasDelegateResult, isChild, promptOf } from "../../support/delegation.ts";

describe("delegate", () => {
  it("runs two tasks as child sessions in parallel and gives the parent both answers, linked both ways", async () => {
    const bothStarted = deferred();
    let started = 0;
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) {
        started++;
        if (started === 2) bothStarted.resolve();
        const which = promptOf(options).includes("TASK-A") ? "A" : "B";
        // Each child waits until both have called the model: only parallel children get past this.
        return { parts: text(`answer ${which}`), gate: bothStarted.promise };
      }
      if (hasDelegateResult(options)) return text("both done");
      return delegateCall("d1", [{ task: "TASK-A summarise" }, { task: "TASK-B translate", context: "the text is short" }]);
    });
    const ws = await scriptedWorkspace(main);
    const toolset = delegationToolset();
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "PARENT plan", toolset });
    const result = await waitForRun(env, parent.id, run_id, 15_000);
    expect(result).toMatchObject({ status: "completed", output_text: "both done" });

    const [delegated] = toolResults(await doEvents(parent.id, ws.id));
    expect(delegated).toMatchObject({ tool_name: "delegate", is_error: false });
    const children = delegateResults(delegated!.content);
    expect(children.map((c) => [c.status, c.answer])).toEqual([
      ["completed", "answer A"],
      ["completed", "answer B"],
    ]);
    expect(new Set(children.map((c) => c.session_id)).size).toBe(2);

    // Children's usage counts toward the parent's run (USAGE: 10 in, 4 out per step).
    expect(result.delegated_usage).toEqual({ input_tokens: 20, output_tokens: 8, total_tokens: 28 });
    expect(result.usage.total_tokens).toBe(28); // its own two steps only

    for (const child of children) {
      const view = await SessionClient.of(env, child.session_id).view(ws.id);
      expect(view.metadata).toMatchObject({ parent_session_id: parent.id, parent_run_id: run_id, delegation_depth: 1 });
      const events = await doEvents(child.session_id, ws.id);
      // Only what the parent passed: the task (and context), no parent history; a channel fact before it.
      const users = events.filter((e) => e.type === "message" && e.message.role === "user");
      expect(users).toHaveLength(1);
      expect(JSON.stringify(users[0])).not.toContain("PARENT plan");
      expect(events.find((e) => e.type === "channel_inject")).toMatchObject({ channel: "delegation", device_id: parent.id });
    }
    expect(JSON.stringify(await doEvents(children[1]!.session_id, ws.id))).toContain("the text is short");

    // The API lists the parent's children.
    await Promise.all(children.map((c) => SessionClient.of(env, c.session_id).flushReplication()));
    const listed = await json<{ sessions: { id: string }[] }>(
      await call("GET", `/api/sessions?parent_session_id=${encodeURIComponent(parent.id)}`, { token: ws.read }),
    );
    expect(listed.sessions.map((s) => s.id).sort()).toEqual(children.map((c) => c.session_id).sort());
  });

  it("answers a tool error the model can read for an unknown agent, too many tasks, tools the parent lacks, or past the depth limit", async () => {
    const main = new ScriptedModel(
      (i) =>
        [
          {
            parts: [
              ...delegateCall("u1", [{ agent: "nobody", task: "x" }]).slice(0, -1),
              ...delegateCall("u2", [{ task: "a" }, { task: "b" }]).slice(0, -1),
              ...delegateCall("u3", [{ task: "x", tools: ["echo", "rm_rf"] }]),
            ],
          },
          text("understood"),
        ][Math.min(i, 1)]!,
    );
    const ws = await scriptedWorkspace(main, { runtime: { max_parallel_delegates: 1 } });
    const toolset = delegationToolset("delegating-bad");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    expect(await waitForRun(env, parent.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    const results = toolResults(await doEvents(parent.id, ws.id));
    expect(results.map((r) => [r.is_error, r.content.match(/^Error \((\w+)\)/)?.[1]])).toEqual([
      [true, "unknown_agent"],
      [true, "too_many_tasks"],
      [true, "tools_not_allowed"],
    ]);
    expect(results[1]!.content).toContain("runtime.max_parallel_delegates");
    expect(results[2]!.content).toContain("'rm_rf'");

    // Depth: a workspace that allows no delegation at all.
    const flat = new ScriptedModel([delegateCall("z1", [{ task: "x" }]), text("ok")]);
    const ws2 = await scriptedWorkspace(flat, { runtime: { max_delegation_depth: 0 } });
    const s2 = await createSession(env, { workspaceId: ws2.id });
    const r2 = await submitRun(env, s2.id, { workspace_id: ws2.id, content: "go", toolset });
    await waitForRun(env, s2.id, r2.run_id, 10_000);
    const [depth] = toolResults(await doEvents(s2.id, ws2.id));
    expect(depth).toMatchObject({ is_error: true, content: expect.stringContaining("runtime.max_delegation_depth") });
  });

  it("gives a child at most the parent's tools, no `delegate` at the depth limit, and a registered agent's own model", async () => {
    const agentModel = new ScriptedModel([text("agent's answer")]);
    const agentModelId = registerModel(agentModel);
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) return text("child answer");
      if (hasDelegateResult(options)) return text("done");
      return delegateCall("t1", [
        { task: "only echo", tools: ["echo"] },
        { task: "as reviewer", agent: "rev" },
      ]);
    });
    const ws = await scriptedWorkspace(main, { runtime: { max_delegation_depth: 1 } });
    const created = await call("POST", "/api/agents", {
      token: ws.admin,
      body: {
        id: "rev",
        gitea_username: "rev",
        roles: ["reviewer"],
        model: { provider: "openai-compatible", id: agentModelId, base_url: "http://scripted.test/v1" },
      },
    });
    expect(created.status).toBe(201);
    const toolset = delegationToolset("delegating-tools");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    expect(await waitForRun(env, parent.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    const [res] = toolResults(await doEvents(parent.id, ws.id));
    const [onlyEcho, reviewer] = delegateResults(res!.content);
    expect(onlyEcho).toMatchObject({ status: "completed", answer: "child answer" });
    expect(reviewer).toMatchObject({ status: "completed", answer: "agent's answer", agent: "rev" });
    expect(agentModel.calls).toHaveLength(1);

    const toolsOf = async (sessionId: string) => {
      const started = (await doEvents(sessionId, ws.id)).find((e) => e.type === "run_started");
      return (started as unknown as { input: { allowed_tools: string[] } }).input.allowed_tools;
    };
    expect(await toolsOf(onlyEcho!.session_id)).toEqual(["echo"]);
    const inherited = await toolsOf(reviewer!.session_id);
    expect(inherited).toContain("echo");
    expect(inherited).not.toContain("delegate"); // depth 1 = the limit
    const offered = promptOf(agentModel.calls[0]!) + JSON.stringify(agentModel.calls[0]!.tools ?? []);
    expect(offered).not.toContain('"name":"delegate"');
  });

  it("counts the children's tokens toward the parent run's budget (runtime.max_run_tokens), each child capped at its share", async () => {
    // 14 tokens a step (test/support/sessions.ts USAGE); budget 40: the parent's first step leaves 26.
    let echoes = 0;
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) return toolCalls({ id: `x${++echoes}`, name: "echo", args: { text: "again" } });
      if (hasDelegateResult(options)) return text("never reached");
      return delegateCall("b1", [{ task: "keep echoing" }]);
    });
    const ws = await scriptedWorkspace(main, { runtime: { max_run_tokens: 40 } });
    const toolset = delegationToolset("delegating-budget");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    const result = await waitForRun(env, parent.id, run_id, 10_000);
    // The child spent 28 (two steps, then its share of 26 was used up); 14 + 28 ≥ 40 stops the parent.
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "run_token_budget", message: expect.stringContaining("delegated children's") },
      usage: { total_tokens: 14 },
      delegated_usage: { total_tokens: 28 },
    });
    const [res] = toolResults(await doEvents(parent.id, ws.id));
    const [child] = delegateResults(res!.content);
    expect(child).toMatchObject({ status: "failed", error: { code: "run_token_budget" } });
    expect(child!.error!.message).toContain("share of its parent's max_run_tokens");
    const started = (await doEvents(child!.session_id, ws.id)).find((e) => e.type === "run_started");
    expect((started as unknown as { input: { max_run_tokens: number } }).input.max_run_tokens).toBe(26);
    expect(echoes).toBe(2);
  });

  it("cancelling the parent cancels its children", async () => {
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) return { hang: true };
      return delegateCall("c1", [{ task: "slow one" }]);
    });
    const ws = await scriptedWorkspace(main);
    const toolset = delegationToolset("delegating-cancel");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    await until(() => main.calls.some(isChild), 5_000, "the child's model call");
    await SessionClient.of(env, parent.id).cancel(ws.id, run_id);
    expect(await waitForRun(env, parent.id, run_id, 10_000)).toMatchObject({ status: "cancelled" });
    const childListed = await json<{ sessions: { id: string }[] }>(
      await call("GET", `/api/sessions?parent_session_id=${encodeURIComponent(parent.id)}`, { token: ws.read }),
    );
    const childId = childListed.sessions[0]?.id;
    expect(childId).toBeDefined();
    const child = SessionClient.of(env, childId!);
    await until(async () => (await child.listRuns(ws.id, 5))[0]?.status === "cancelled", 5_000, "the child's cancel");
  });

  it("cancelling a parent evicted mid-delegation cancels its children, each of which ran once", async () => {
    const childCalls = { A: 0, B: 0 };
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) {
        childCalls[promptOf(options).includes("TASK-A") ? "A" : "B"]++;
        return { hang: true };
      }
      return delegateCall("k1", [{ task: "TASK-A" }, { task: "TASK-B" }]);
    });
    const ws = await scriptedWorkspace(main);
    const toolset = delegationToolset("delegating-evict-cancel");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    await until(() => childCalls.A === 1 && childCalls.B === 1, 5_000, "both children's model calls");

    // Nothing in memory knows of the children any more: the cancel finds a new parent instance.
    await abortAllDurableObjects();
    await SessionClient.of(env, parent.id).cancel(ws.id, run_id);
    expect(await waitForRun(env, parent.id, run_id, 10_000)).toMatchObject({ status: "cancelled" });
    for (const index of [0, 1]) {
      const child = SessionClient.of(env, await childSessionId(run_id, "k1", index));
      await until(async () => (await child.listRuns(ws.id, 5))[0]?.status === "cancelled", 5_000, `child ${index}'s cancel`);
      expect(await child.listRuns(ws.id, 5)).toHaveLength(1);
    }
    expect(childCalls).toEqual({ A: 1, B: 1 }); // cancelled, not resumed
  });

  it("a parent evicted mid-delegation resumes and collects its children, each of which ran once", async () => {
    const releaseB = deferred();
    const childCalls = { A: 0, B: 0, C: 0 };
    const main = new ScriptedModel((_i, options) => {
      if (isChild(options)) {
        const prompt = promptOf(options);
        const which = prompt.includes("TASK-A") ? "A" : prompt.includes("TASK-B") ? "B" : "C";
        childCalls[which]++;
        // C never answers (someone cancels it meanwhile); B's first call never answers (its instance is
        // evicted), its resumed run answers.
        if (which === "C" || (which === "B" && childCalls.B === 1)) return { hang: true };
        return which === "B" ? { parts: text("answer B"), gate: releaseB.promise } : text("answer A");
      }
      if (hasDelegateResult(options)) return text("collected");
      return delegateCall("e1", [{ task: "TASK-A" }, { task: "TASK-B" }, { task: "TASK-C" }]);
    });
    const ws = await scriptedWorkspace(main);
    const toolset = delegationToolset("delegating-evict");
    const parent = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, parent.id, { workspace_id: ws.id, content: "go", toolset });
    await until(() => childCalls.A === 1 && childCalls.B === 1 && childCalls.C === 1, 5_000, "the children's model calls");
    const listed = async () =>
      (
        await json<{ sessions: { id: string }[] }>(
          await call("GET", `/api/sessions?parent_session_id=${encodeURIComponent(parent.id)}`, { token: ws.read }),
        )
      ).sessions.map((s) => s.id);
    let childIds: string[] = [];
    await until(async () => (childIds = await listed()).length === 3, 5_000, "the children listed");
    // A finishes before the eviction.
    await until(
      async () => {
        const runs = await Promise.all(childIds.map((id) => SessionClient.of(env, id).listRuns(ws.id, 5)));
        return runs.some((r) => r[0]?.status === "completed");
      },
      5_000,
      "child A's end",
    );

    await abortAllDurableObjects();
    // While the parent is away, someone cancels child C in its own session.
    await SessionClient.of(env, await childSessionId(run_id, "e1", 2)).cancel(ws.id);
    releaseB.resolve();
    expect(await runDurableObjectAlarm(stub(parent.id))).toBe(true);

    const result = await waitForRun(env, parent.id, run_id, 15_000);
    expect(result).toMatchObject({ status: "completed", output_text: "collected" });
    const [res] = toolResults(await doEvents(parent.id, ws.id));
    expect(delegateResults(res!.content).map((c) => [c.status, c.answer])).toEqual([
      ["completed", "answer A"],
      ["completed", "answer B"],
      ["cancelled", ""], // the parent reads C's cancel; C is not started again
    ]);
    expect(childCalls.A).toBe(1); // A finished meanwhile: collected, not run again
    expect(childCalls.C).toBe(1);
    for (const id of childIds) {
      const runs = await SessionClient.of(env, id).listRuns(ws.id, 10);
      expect(runs).toHaveLength(1);
      expect((await doEvents(id, ws.id)).filter((e) => e.type === "run_started")).toHaveLength(1);
    }
  });
});
