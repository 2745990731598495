/**
 * Teams in the Worker (docs/delegation.md, "Teams"): the `teams` config section's checks, and team runs
 * in each mode — a pipeline of three, a discussion the coordinator ends, a coordinator that delegates —
 * with every turn a child session and in the team session's log, a pipeline that survives an eviction,
 * and a pipeline cancelled after an eviction that cancels its running member turn.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, deferred, doEvents, registerModel, scriptedWorkspace, stub, text, until } from "../../support/sessions.ts";
import { delegateCall, hasDelegateResult, promptOf } from "../../support/delegation.ts";

async function agent(ws: TestWorkspace, id: string, model?: ScriptedModel): Promise<void> {
  const body: Record<string, unknown> = { id, gitea_username: id, roles: ["developer"] };
  if (model) body.model = { provider: "openai-compatible", id: registerModel(model), base_url: "http://scripted.test/v1" };
  const res = await call("POST", "/api/agents", { token: ws.admin, body });
  if (res.status !== 201) throw new Error(`agent: ${res.status} ${await res.text()}`);
}

async function setTeams(ws: TestWorkspace, teams: unknown[]): Promise<Response> {
  const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
  return call("PUT", "/api/config", { token: ws.admin, body: { model: config.model, teams } });
}

interface TeamRun {
  session_id: string;
  run_id: string;
  status: string;
  output_text: string;
  finish_reason: string;
  turns: { member: string; session_id?: string; answer: string; round?: number }[];
}

async function runTeam(ws: TestWorkspace, name: string, message: string): Promise<TeamRun> {
  const res = await call("POST", `/api/teams/${name}/runs`, { token: ws.member, body: { message } });
  expect(res.status).toBe(202);
  return json<TeamRun>(res);
}

async function finished(ws: TestWorkspace, name: string, started: TeamRun): Promise<TeamRun> {
  await SessionClient.of(env, started.session_id).waitForRun(started.run_id, 15_000, ws.id);
  return json<TeamRun>(await call("GET", `/api/teams/${name}/runs/${started.session_id}`, { token: ws.read }));
}

describe("teams", () => {
  it("refuses a team with an unknown member, an unknown coordinator or a cycle with a 400 naming it", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    await agent(ws, "alice");
    await agent(ws, "bob");
    const unknown = await setTeams(ws, [{ name: "t1", coordinator: "alice", members: ["bob", "carol"], mode: "pipeline" }]);
    expect(unknown.status).toBe(400);
    expect((await json<{ error: { message: string } }>(unknown)).error.message).toContain("unknown member 'carol'");
    const badCoordinator = await setTeams(ws, [{ name: "t1", coordinator: "zed", members: ["bob"], mode: "pipeline" }]);
    expect((await json<{ error: { message: string } }>(badCoordinator)).error.message).toContain("unknown coordinator 'zed'");
    const cycle = await setTeams(ws, [
      { name: "outer", coordinator: "alice", members: ["bob", "inner"], mode: "pipeline" },
      { name: "inner", coordinator: "alice", members: ["outer"], mode: "pipeline" },
    ]);
    expect(cycle.status).toBe(400);
    expect((await json<{ error: { message: string } }>(cycle)).error.message).toContain("outer → inner → outer");
    const good = await setTeams(ws, [{ name: "t1", coordinator: "alice", members: ["bob", "alice"], mode: "discussion", max_rounds: 2 }]);
    expect(good.status).toBe(200);
    expect((await call("POST", "/api/teams/nope/runs", { token: ws.member, body: { message: "hi" } })).status).toBe(404);
  });

  it("a pipeline of three passes the message through its members in order", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    const models = {
      a: new ScriptedModel([text("A: outline")]),
      b: new ScriptedModel([text("B: draft")]),
      c: new ScriptedModel([text("C: final text")]),
    };
    for (const [id, model] of Object.entries(models)) await agent(ws, id, model);
    expect((await setTeams(ws, [{ name: "writers", coordinator: "a", members: ["a", "b", "c"], mode: "pipeline" }])).status).toBe(200);

    const run = await finished(ws, "writers", await runTeam(ws, "writers", "write about beavers"));
    expect(run).toMatchObject({ status: "completed", output_text: "C: final text" });
    expect(run.turns.map((t) => [t.member, t.answer])).toEqual([
      ["a", "A: outline"],
      ["b", "B: draft"],
      ["c", "C: final text"],
    ]);
    expect(promptOf(models.a.calls[0]!)).toContain("write about beavers");
    expect(promptOf(models.b.calls[0]!)).toContain("A: outline");
    expect(promptOf(models.c.calls[0]!)).toContain("B: draft");
    // Each turn is a child session of the team run's session.
    for (const turn of run.turns) {
      const view = await SessionClient.of(env, turn.session_id!).view(ws.id);
      expect(view.metadata).toMatchObject({ parent_session_id: run.session_id, agent: turn.member });
    }
    const events = await doEvents(run.session_id, ws.id);
    expect(events.filter((e) => e.type === "custom" && e.kind === "team:turn")).toHaveLength(3);
    expect(events.find((e) => e.type === "custom_message")).toMatchObject({ kind: "team:result", message: { text: "C: final text" } });
  });

  it("a discussion lets members answer in turn until the coordinator calls it done", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    await agent(ws, "x", new ScriptedModel((i) => text(`x says ${i + 1}`)));
    await agent(ws, "y", new ScriptedModel((i) => text(`y says ${i + 1}`)));
    const chair = new ScriptedModel([text("CONTINUE: dig deeper"), text("DONE\nWe agree: dams.")]);
    await agent(ws, "chair", chair);
    await setTeams(ws, [{ name: "panel", coordinator: "chair", members: ["x", "y"], mode: "discussion", max_rounds: 5 }]);

    const run = await finished(ws, "panel", await runTeam(ws, "panel", "what do beavers build?"));
    expect(run).toMatchObject({ status: "completed", output_text: "We agree: dams.", finish_reason: "done" });
    expect(run.turns.map((t) => `${t.member}@${t.round}`)).toEqual(["x@1", "y@1", "chair@1", "x@2", "y@2", "chair@2"]);
    expect(promptOf(chair.calls[1]!)).toContain("y says 2");
  });

  it("a discussion ends after max_rounds when the coordinator never calls it done", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    await agent(ws, "x", new ScriptedModel([text("x talks")]));
    await agent(ws, "chair", new ScriptedModel([text("CONTINUE")]));
    await setTeams(ws, [{ name: "loop", coordinator: "chair", members: ["x"], mode: "discussion", max_rounds: 2 }]);
    const run = await finished(ws, "loop", await runTeam(ws, "loop", "topic"));
    expect(run).toMatchObject({ status: "completed", finish_reason: "max_rounds" });
    expect(run.turns).toHaveLength(4);
  });

  it("in delegate mode the coordinator assigns work to members with `delegate`", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    const member = new ScriptedModel([text("member did it")]);
    await agent(ws, "worker", member);
    const boss = new ScriptedModel((_i, options) =>
      hasDelegateResult(options) ? text("boss: all done") : delegateCall("b1", [{ agent: "worker", task: "dig" }]),
    );
    await agent(ws, "boss", boss);
    await setTeams(ws, [{ name: "crew", coordinator: "boss", members: ["worker"], mode: "delegate" }]);
    const run = await finished(ws, "crew", await runTeam(ws, "crew", "build a dam"));
    expect(run).toMatchObject({ status: "completed", output_text: "boss: all done" });
    expect(promptOf(boss.calls[0]!)).toContain("worker");
    expect(member.calls).toHaveLength(1);
  });

  it("a pipeline evicted mid-run resumes without running a finished turn again", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    const first = new ScriptedModel([text("one")]);
    const release = deferred();
    let secondCalls = 0;
    const second = new ScriptedModel(() => (++secondCalls === 1 ? { hang: true } : { parts: text("two"), gate: release.promise }));
    await agent(ws, "p1", first);
    await agent(ws, "p2", second);
    await setTeams(ws, [{ name: "relay", coordinator: "p1", members: ["p1", "p2"], mode: "pipeline" }]);
    const started = await runTeam(ws, "relay", "go");
    await until(() => secondCalls === 1, 5_000, "the second turn's model call");

    await abortAllDurableObjects();
    release.resolve();
    expect(await runDurableObjectAlarm(stub(started.session_id))).toBe(true);
    const run = await finished(ws, "relay", started);
    expect(run).toMatchObject({ status: "completed", output_text: "two" });
    expect(first.calls).toHaveLength(1);
    expect(run.turns.map((t) => t.member)).toEqual(["p1", "p2"]);
    for (const turn of run.turns) expect(await SessionClient.of(env, turn.session_id!).listRuns(ws.id, 10)).toHaveLength(1);
  });

  it("cancelling a pipeline evicted mid-turn cancels the member's running turn, which ran once", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("unused")]));
    let calls = 0;
    const slow = new ScriptedModel(() => (++calls, { hang: true }));
    await agent(ws, "slow", slow);
    await agent(ws, "after", new ScriptedModel([text("never")]));
    await setTeams(ws, [{ name: "stuck", coordinator: "slow", members: ["slow", "after"], mode: "pipeline" }]);
    const started = await runTeam(ws, "stuck", "go");
    await until(() => calls === 1, 5_000, "the first turn's model call");
    const startedTurn = (await doEvents(started.session_id, ws.id)).find((e) => e.type === "custom" && e.kind === "team:turn_started");
    const turnSession = (startedTurn as unknown as { data: { session_id: string } }).data.session_id;

    // Nothing in memory knows of the running turn any more: the cancel finds a new team-session instance.
    await abortAllDurableObjects();
    await SessionClient.of(env, started.session_id).cancel(ws.id, started.run_id);
    expect(await SessionClient.of(env, started.session_id).waitForRun(started.run_id, 10_000, ws.id)).toMatchObject({
      status: "cancelled",
    });
    const member = SessionClient.of(env, turnSession);
    await until(async () => (await member.listRuns(ws.id, 5))[0]?.status === "cancelled", 5_000, "the member turn's cancel");
    expect(await member.listRuns(ws.id, 5)).toHaveLength(1);
    expect(calls).toBe(1); // cancelled, not resumed
  });
});
