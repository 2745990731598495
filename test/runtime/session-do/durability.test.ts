import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { setReplicationFault } from "../../support/test-services.ts";
import { MAX_RUN_ATTEMPTS } from "../../../src/runtime/session/run-executor.ts";
import type { MessageEvent } from "../../../src/runtime/session/events.ts";
import { call } from "../../support/api.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  doEvents,
  readSse,
  registerToolset,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
  toolResults,
  replicated,
} from "../../support/sessions.ts";

async function d1Events(sessionId: string): Promise<{ id: string; seq: number }[]> {
  const rows = await env.DB.prepare("SELECT id, seq FROM session_events WHERE session_id = ? ORDER BY seq")
    .bind(sessionId)
    .all<{ id: string; seq: number }>();
  return rows.results;
}

afterEach(() => setReplicationFault(null));

describe("durable runs", () => {
  it("resumes after an eviction mid-run: a tool whose result is in the log is not run again", async () => {
    const once = countingTool("once_tool");
    const toolset = registerToolset("durable-once", [once.spec]);
    const main = new ScriptedModel([toolCalls({ id: "o1", name: "once_tool", args: { n: 1 } }), { hang: true }, text("resumed answer")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "work", toolset });
    await until(() => main.calls.length === 2, 5_000, "second model call");

    // The run's work lives in the request that started it, so a graceful eviction would wait for it:
    // abort the object as a crash or a platform restart would.
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);

    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "resumed answer", tool_iterations: 1 });
    expect(once.state.runs).toBe(1);
    const events = await doEvents(session.id, ws.id);
    expect(toolResults(events)).toEqual([expect.objectContaining({ tool_call_id: "o1", is_error: false })]);
    expect(events.filter((e) => e.type === "run_started")).toHaveLength(1);
    expect(events.filter((e) => e.type === "message" && e.message.role === "assistant")).toHaveLength(2);
  });

  it("a non-idempotent tool interrupted mid-execution gets an `interrupted` result and is not run again", async () => {
    const effect = countingTool("side_effect");
    effect.state.gate = new Promise(() => undefined); // never finishes in the first instance
    const toolset = registerToolset("durable-effect", [effect.spec]);
    const main = new ScriptedModel([toolCalls({ id: "x1", name: "side_effect", args: {} }), text("I will check the effect")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "do it", toolset });
    await until(() => effect.state.runs === 1, 5_000, "tool start");

    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);

    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result).toMatchObject({ status: "completed", output_text: "I will check the effect" });
    expect(effect.state.runs).toBe(1);
    const [only] = toolResults(await doEvents(session.id, ws.id));
    expect(only).toMatchObject({ tool_call_id: "x1", is_error: true, content: expect.stringContaining("interrupted") });
    expect(main.promptText(1)).toContain("interrupted");
  });

  it("an idempotent tool interrupted mid-execution is run again", async () => {
    const idem = countingTool("idem_tool", { idempotent: true });
    idem.state.gate = new Promise(() => undefined);
    const toolset = registerToolset("durable-idem", [idem.spec]);
    const main = new ScriptedModel([toolCalls({ id: "i1", name: "idem_tool", args: { n: 7 } }), text("fine")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "do it", toolset });
    await until(() => idem.state.runs === 1, 5_000, "tool start");

    await abortAllDurableObjects();
    idem.state.gate = null;
    await runDurableObjectAlarm(stub(session.id));

    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    expect(idem.state.runs).toBe(2);
    expect(toolResults(await doEvents(session.id, ws.id))).toEqual([
      expect.objectContaining({ tool_call_id: "i1", is_error: false, content: "idem_tool ran (7)" }),
    ]);
  });

  it("a run queued behind an interrupted one survives the restart and runs after it", async () => {
    const main = new ScriptedModel([{ hang: true }, text("first, resumed"), text("second")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const first = await submitRun(env, session.id, { workspace_id: ws.id, content: "one" });
    await until(() => main.calls.length === 1, 5_000, "first model call");
    const second = await submitRun(env, session.id, { workspace_id: ws.id, content: "two" });
    expect(second.status).toBe("queued");

    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);

    expect(await waitForRun(env, session.id, first.run_id, 10_000)).toMatchObject({ status: "completed", output_text: "first, resumed" });
    expect(await waitForRun(env, session.id, second.run_id, 10_000)).toMatchObject({ status: "completed", output_text: "second" });
    const order = (await doEvents(session.id, ws.id)).map((e) => e.run_id);
    expect(order.filter((id, i) => i === 0 || order[i - 1] !== id)).toEqual([first.run_id, second.run_id]);
  });

  it("a run that keeps dying is failed after MAX_RUN_ATTEMPTS instead of resumed forever", async () => {
    const main = new ScriptedModel([{ hang: true }]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "crashy" });
    await until(() => main.calls.length === 1, 5_000, "model call");
    await abortAllDurableObjects();
    // As if it had already been resumed and died every time.
    await runInDurableObject(stub(session.id), (_i, state) => {
      const row = state.storage.sql.exec<{ state: string }>("SELECT state FROM runs WHERE id = ?", run_id).one();
      const runState = { ...(JSON.parse(row.state) as Record<string, unknown>), attempts: MAX_RUN_ATTEMPTS };
      state.storage.sql.exec("UPDATE runs SET state = ? WHERE id = ?", JSON.stringify(runState), run_id);
    });
    await runDurableObjectAlarm(stub(session.id));

    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result).toMatchObject({
      status: "failed",
      error: { code: "internal", message: expect.stringContaining(`restarted ${MAX_RUN_ATTEMPTS} times`) },
    });
    expect(main.calls).toHaveLength(1);
    const events = await doEvents(session.id, ws.id);
    expect(events.at(-1)).toMatchObject({ type: "run_failed", run_id });
    expect(events.filter((e): e is MessageEvent => e.type === "message").at(-1)?.message).toMatchObject({
      role: "assistant",
      error: { code: "internal" },
    });
  });

  it("the alarm stays armed while a run is open (so a dead instance is resumed) and is cleared once all is done", async () => {
    const gate = deferred();
    const ws = await scriptedWorkspace(new ScriptedModel([{ parts: text("late"), gate: gate.promise }]));
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "wait for it" });
    const alarmAt = () => runInDurableObject(stub(session.id), (_i, state) => state.storage.getAlarm());
    await until(async () => (await alarmAt()) !== null, 5_000, "alarm armed on submit");
    const armedOnSubmit = (await alarmAt())!;
    await new Promise((r) => setTimeout(r, 20));
    // The alarm handler joins the running pump and re-arms itself first (a later time than before).
    const alarmRun = runDurableObjectAlarm(stub(session.id));
    await until(async () => ((await alarmAt()) ?? 0) > armedOnSubmit, 5_000, "alarm re-armed while the run is open");
    gate.resolve();
    expect(await alarmRun).toBe(true);
    expect((await waitForRun(env, session.id, run_id, 5_000)).status).toBe("completed");
    expect(await alarmAt()).toBeNull();
  });

  it("seq keeps rising across a restart, past transient seqs that were never stored", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`a${i}`, "b", "c")));
    const session = await createSession(env, { workspaceId: ws.id });
    const stream = async (content: string) => {
      const res = await call("POST", `/api/sessions/${session.id}/messages`, {
        token: ws.member,
        body: { content },
        headers: { Accept: "text/event-stream" },
      });
      return (await readSse(res)).map((f) => ({ seq: f.seq, persistent: f.persistent }));
    };
    const first = await stream("one");
    const lastFirst = first.at(-1)!;
    expect(lastFirst.persistent).toBe(false); // runtime_end: a transient seq above every stored one
    await abortAllDurableObjects();
    const second = await stream("two");
    expect(second[0]!.seq).toBeGreaterThan(lastFirst.seq);
    const all = [...first, ...second].map((f) => f.seq);
    for (let i = 1; i < all.length; i++) expect(all[i]!).toBeGreaterThan(all[i - 1]!);
  });
});

describe("replication to D1", () => {
  it("a D1 outage delays replication but never blocks the run; the alarm catches up with no duplicates", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([toolCalls({ id: "r1", name: "echo", args: { text: "x" } }), text("done")]));
    let failing = true;
    let attempts = 0;
    setReplicationFault(() => {
      attempts++;
      return failing;
    });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "go" });
    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    expect(attempts).toBeGreaterThan(0);
    expect(await d1Events(session.id)).toEqual([]);
    const stats = await stub(session.id).stats();
    expect(stats).toMatchObject({ pending_replication: true });
    expect(stats.replication_failures).toBeGreaterThan(0);
    const alarm = await runInDurableObject(stub(session.id), (_i, state) => state.storage.getAlarm());
    expect(alarm).not.toBeNull();

    failing = false;
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);
    const local = await doEvents(session.id, ws.id);
    const replicated = await d1Events(session.id);
    expect(replicated.map((e) => e.id)).toEqual(local.map((e) => e.id));
    const projection = await env.DB.prepare("SELECT last_seq, total_tokens, workspace_id FROM sessions WHERE id = ?")
      .bind(session.id)
      .first();
    expect(projection).toEqual({ last_seq: local.at(-1)!.seq, total_tokens: 28, workspace_id: ws.id });
    const runRow = await env.DB.prepare("SELECT status FROM session_runs WHERE id = ?").bind(run_id).first();
    expect(runRow).toEqual({ status: "completed" });

    // A retried batch (D1 wrote it, the DO never learned) inserts nothing twice.
    await runInDurableObject(stub(session.id), (_i, state) => {
      state.storage.sql.exec("UPDATE events SET replicated = 0");
    });
    expect(await SessionClient.of(env, session.id).flushReplication()).toBe(true);
    expect((await d1Events(session.id)).map((e) => e.id)).toEqual(local.map((e) => e.id));
  });

  it("a backlog longer than one insert statement carries is copied whole and in order, in one batch", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("one"), text("two"), text("three")]));
    let failing = true;
    setReplicationFault(() => failing);
    const session = await createSession(env, { workspaceId: ws.id });
    for (const content of ["a", "b", "c"]) {
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content });
      expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    }
    const local = await doEvents(session.id, ws.id);
    // More events than one statement binds (replicator.ts, EVENTS_PER_STATEMENT: 9 of 11 parameters each).
    expect(local.length).toBeGreaterThan(9);
    failing = false;
    const before = (await stub(session.id).stats()).replication_batches;
    expect(await SessionClient.of(env, session.id).flushReplication()).toBe(true);
    expect((await stub(session.id).stats()).replication_batches).toBe(before + 1);
    expect((await d1Events(session.id)).map((e) => [e.id, e.seq])).toEqual(local.map((e) => [e.id, e.seq]));
  });

  it("a run's events reach D1 in one batch right after its result, without the result waiting for it", async () => {
    const counted = countingTool("counted_tool");
    const toolset = registerToolset("replication-batches", [counted.spec]);
    const calls = (n: number) => toolCalls({ id: `c${n}`, name: "counted_tool", args: { n } });
    const ws = await scriptedWorkspace(new ScriptedModel([text("the answer"), calls(1), calls(2), calls(3), text("after three tools")]));
    const session = await createSession(env, { workspaceId: ws.id });
    for (const [content, answer] of [
      ["question", "the answer"],
      ["three tools", "after three tools"],
    ] as const) {
      const before = (await stub(session.id).stats()).replication_batches;
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content, toolset });
      expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed", output_text: answer });
      // The copy starts once the result is handed back (docs/sessions.md, "Storage first, D1 second"):
      // within a second, without anyone asking, and in one batch for the whole run.
      const local = await doEvents(session.id, ws.id);
      await until(async () => !(await stub(session.id).stats()).pending_replication, 1_000, "the run's log in D1");
      expect((await d1Events(session.id)).map((e) => e.id)).toEqual(local.map((e) => e.id));
      expect((await stub(session.id).stats()).replication_batches - before).toBe(1);
    }
    expect(counted.state.runs).toBe(3);
  });

  it("a run still in progress reaches D1 within the replication delay", async () => {
    const gate = deferred();
    const ws = await scriptedWorkspace(new ScriptedModel([{ parts: text("the answer"), gate: gate.promise }]));
    const session = await createSession(env, { workspaceId: ws.id });
    const before = (await stub(session.id).stats()).replication_batches;
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "question" });
    // The model holds its answer; the run's opening goes to D1 once RUN_REPLICATION_DELAY_MS has passed.
    await until(
      async () => (await d1Events(session.id)).length > 0 && !(await stub(session.id).stats()).pending_replication,
      5_000,
      "run open replicated",
    );
    gate.resolve();
    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed", output_text: "the answer" });
    await replicated(session.id);
    const local = await doEvents(session.id, ws.id);
    expect((await d1Events(session.id)).map((e) => e.id)).toEqual(local.map((e) => e.id));
    // One batch for the opening (after the delay), one for the answer with the run's end.
    expect((await stub(session.id).stats()).replication_batches - before).toBe(2);
  });

  it("flaky D1: replication retries with backoff and ends complete", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`t${i}`)));
    const session = await createSession(env, { workspaceId: ws.id });
    let failuresLeft = 3;
    setReplicationFault((id) => id === session.id && failuresLeft-- > 0);
    for (const content of ["a", "b"]) {
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content });
      await waitForRun(env, session.id, run_id, 10_000);
    }
    for (let i = 0; i < 5 && (await stub(session.id).stats()).pending_replication; i++) await runDurableObjectAlarm(stub(session.id));
    const local = await doEvents(session.id, ws.id);
    expect((await d1Events(session.id)).map((e) => e.id)).toEqual(local.map((e) => e.id));
    expect(failuresLeft).toBeLessThan(0);
  });
});
