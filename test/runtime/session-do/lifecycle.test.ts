// Fork, stop, close, retry and the restart budget (docs/sessions.md, "Fork", "Stop, close and retry",
// "Restart budget") against real D1 and Durable Objects through the HTTP API; the model is scripted.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { call, json, newWorkspace } from "../../support/api.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { MAX_RUN_ATTEMPTS } from "../../../src/runtime/session/run-executor.ts";
import type { PersistentEvent } from "../../../src/runtime/session/events.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  doEvents,
  newSession,
  registerToolset,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
  type ScriptedWorkspace,
} from "../../support/sessions.ts";

interface SessionBody {
  id: string;
  status: string;
  title: string;
  active_leaf: string | null;
  forked_from?: { session_id: string; event_id: string | null };
  forks?: { session_id: string; event_id: string | null }[];
}
interface RunBody {
  status: string;
  error?: { code: string; message: string };
  output_text: string;
}
interface RunRowBody {
  status: string;
  retry_of: string | null;
  result: RunBody;
}

const userTexts = (events: PersistentEvent[]) =>
  events.flatMap((e) => (e.type === "message" && e.message.role === "user" ? [e.message.content] : []));

async function say(ws: ScriptedWorkspace, id: string, content: string): Promise<RunBody> {
  const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content } });
  expect(res.status).toBe(200);
  return json<RunBody>(res);
}

describe("fork", () => {
  it("copies the branch up to an event (default the active leaf), records forked_from and the fork on the source", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel((i) => text(`answer ${i}`)));
    const id = await newSession(ws, { title: "origin" });
    await say(ws, id, "first question");
    await say(ws, id, "second question");
    const events = await doEvents(id, ws.id);
    const firstAnswer = events.find((e) => e.type === "message" && e.message.role === "assistant")!;

    const atEvent = await call("POST", `/api/sessions/${id}/fork`, { token: ws.member, body: { event_id: firstAnswer.id } });
    expect(atEvent.status).toBe(201);
    const fork = await json<SessionBody>(atEvent);
    expect(fork).toMatchObject({ title: "origin", status: "open", forked_from: { session_id: id, event_id: firstAnswer.id } });
    expect(fork.id).not.toBe(id);
    const forkEvents = await doEvents(fork.id, ws.id);
    expect(userTexts(forkEvents)).toEqual(["first question"]);
    // New ids, the same chain: each copied event's parent is the copy before it.
    expect(forkEvents.map((e) => e.id)).not.toContain(firstAnswer.id);
    const visible = forkEvents.filter((e) => e.parent_id !== null || e.type === "message");
    expect(visible.slice(1).every((e, i) => e.parent_id === visible[i]!.id)).toBe(true);
    expect(fork.active_leaf).toBe(visible.at(-1)!.id);

    // The fork goes on by itself: the model sees the copied history, the source is untouched.
    const next = await say(ws, fork.id, "third, in the fork");
    expect(next.status).toBe("completed");
    expect(userTexts(await doEvents(fork.id, ws.id))).toEqual(["first question", "third, in the fork"]);
    expect(ws.main.promptText(ws.main.calls.length - 1)).toContain("first question");
    expect(ws.main.promptText(ws.main.calls.length - 1)).not.toContain("second question");
    expect(userTexts(await doEvents(id, ws.id))).toEqual(["first question", "second question"]);

    const whole = await json<SessionBody>(await call("POST", `/api/sessions/${id}/fork`, { token: ws.member }));
    expect(userTexts(await doEvents(whole.id, ws.id))).toEqual(["first question", "second question"]);

    const source = await json<SessionBody>(await call("GET", `/api/sessions/${id}`, { token: ws.read }));
    expect(source.forks?.map((f) => f.session_id)).toEqual([fork.id, whole.id]);
    const info = (await doEvents(id, ws.id)).filter((e) => e.type === "session_info");
    expect(info.map((e) => (e.type === "session_info" ? e.changes : null))).toContainEqual({
      forked_to: { session_id: fork.id, event_id: firstAnswer.id },
    });
  });

  it("the fork's files are the workspace tree at the forked event", async () => {
    const steps = [
      toolCalls({ id: "w1", name: "write_file", args: { path: "notes.md", content: "one\n" } }),
      text("wrote one"),
      toolCalls({ id: "w2", name: "write_file", args: { path: "notes.md", content: "two\n" } }),
      text("wrote two"),
    ];
    const ws = await scriptedWorkspace(new ScriptedModel(steps));
    const { id } = await createSession(env, { workspaceId: ws.id });
    for (const content of ["write one", "write two"]) {
      const { run_id } = await submitRun(env, id, { workspace_id: ws.id, content, toolset: "code" });
      expect((await waitForRun(env, id, run_id, 10_000)).status).toBe("completed");
    }
    const firstDone = (await doEvents(id, ws.id)).find(
      (e) => e.type === "message" && e.message.role === "assistant" && e.message.text === "wrote one",
    )!;
    const fork = await json<SessionBody>(
      await call("POST", `/api/sessions/${id}/fork`, { token: ws.member, body: { event_id: firstDone.id } }),
    );
    const read = async (sessionId: string) => (await call("GET", `/api/sessions/${sessionId}/files/notes.md`, { token: ws.read })).text();
    expect(await read(fork.id)).toBe("one\n");
    expect(await read(id)).toBe("two\n");
  });

  it("an event of another session → 422; another workspace's session → 404; bad body → 400", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const a = await newSession(ws);
    const b = await newSession(ws);
    await say(ws, b, "in b");
    const bEvent = (await doEvents(b, ws.id)).find((e) => e.type === "message")!;
    const res = await call("POST", `/api/sessions/${a}/fork`, { token: ws.member, body: { event_id: bEvent.id } });
    expect(res.status).toBe(422);
    expect((await json<{ error: { code: string; message: string } }>(res)).error).toMatchObject({
      code: "unprocessable",
      message: expect.stringContaining("no event with this id in this session"),
    });
    const other = await newWorkspace();
    expect((await call("POST", `/api/sessions/${b}/fork`, { token: other.member })).status).toBe(404);
    expect((await call("POST", `/api/sessions/${b}/fork`, { token: ws.member, body: { event: "x" } })).status).toBe(400);
  });
});

describe("stop and close", () => {
  it("refuses new messages, lets the running run finish within the timeout, fails queued messages readably", async () => {
    const gate = deferred();
    const ws = await scriptedWorkspace(new ScriptedModel([{ parts: text("finished in time"), gate: gate.promise }, text("never")]));
    const id = await newSession(ws);
    const running = await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "slow" } }),
    );
    await until(() => ws.main.calls.length === 1, 5_000, "model call");
    const queued = await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "later" } }),
    );

    const stopping = call("POST", `/api/sessions/${id}/stop`, { token: ws.member, body: { timeout_ms: 10_000 } });
    await until(async () => (await json<SessionBody>(await call("GET", `/api/sessions/${id}`, { token: ws.read }))).status === "stopping");
    const refused = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "too late" } });
    expect(refused.status).toBe(409);
    expect((await json<{ error: { code: string } }>(refused)).error.code).toBe("session_stopping");
    const queuedRun = await json<RunRowBody>(await call("GET", `/api/sessions/${id}/runs/${queued.run_id}`, { token: ws.read }));
    expect(queuedRun).toMatchObject({ status: "failed", result: { status: "failed", error: { code: "session_stopping" } } });

    gate.resolve();
    const stopped = await stopping;
    expect(stopped.status).toBe(200);
    expect((await json<SessionBody>(stopped)).status).toBe("stopped");
    expect(await json<RunRowBody>(await call("GET", `/api/sessions/${id}/runs/${running.run_id}`, { token: ws.read }))).toMatchObject({
      status: "completed",
      result: { output_text: "finished in time" },
    });
    expect(ws.main.calls).toHaveLength(1);

    const closed = await call("POST", `/api/sessions/${id}/close`, { token: ws.member });
    expect((await json<SessionBody>(closed)).status).toBe("closed");
    const again = await call("POST", `/api/sessions/${id}/stop`, { token: ws.member });
    expect(again.status).toBe(409);
    expect((await json<{ error: { code: string } }>(again)).error.code).toBe("session_closed");
  });

  it("cancels the running run once the timeout passes", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ hang: true }]));
    const id = await newSession(ws);
    const running = await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "forever" } }),
    );
    await until(() => ws.main.calls.length === 1, 5_000, "model call");
    const res = await call("POST", `/api/sessions/${id}/stop`, { token: ws.member, body: { timeout_ms: 50 } });
    expect((await json<SessionBody>(res)).status).toBe("stopped");
    expect((await json<RunBody>(await call("GET", `/api/sessions/${id}/runs/${running.run_id}`, { token: ws.read }))).status).toBe(
      "cancelled",
    );
    const info = (await doEvents(id, ws.id)).flatMap((e) => (e.type === "session_info" ? [e.changes.status] : []));
    expect(info).toEqual(["stopping", "stopped"]);
  });

  it("close of an open session stops it first with no grace (what close always did to open runs)", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ hang: true }]));
    const id = await newSession(ws);
    const running = await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "x" } }),
    );
    await until(() => ws.main.calls.length === 1, 5_000, "model call");
    const queued = await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "y" } }),
    );
    expect((await json<SessionBody>(await call("POST", `/api/sessions/${id}/close`, { token: ws.member }))).status).toBe("closed");
    expect((await json<RunBody>(await call("GET", `/api/sessions/${id}/runs/${running.run_id}`, { token: ws.read }))).status).toBe(
      "cancelled",
    );
    expect(await json<RunRowBody>(await call("GET", `/api/sessions/${id}/runs/${queued.run_id}`, { token: ws.read }))).toMatchObject({
      status: "failed",
      result: { error: { code: "session_stopping" } },
    });
    const refused = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "z" } });
    expect((await json<{ error: { code: string } }>(refused)).error.code).toBe("session_closed");
  });

  it("bad stop input → 400", async () => {
    const ws = await newWorkspace();
    const id = await newSession(ws);
    expect((await call("POST", `/api/sessions/${id}/stop`, { token: ws.member, body: { timeout_ms: -1 } })).status).toBe(400);
    expect((await call("POST", `/api/sessions/${id}/stop`, { token: ws.member, body: { timeout_ms: 3_600_000 } })).status).toBe(400);
  });
});

describe("retry", () => {
  it("re-runs a failed run's input as a new run; a run that did not fail → 409; unknown run → 404", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([{ fail: 400 }, text("second time lucky")]));
    const id = await newSession(ws);
    const failed = await say(ws, id, "please work");
    expect(failed.status).toBe("failed");
    const failedId = (
      await json<{ runs: { id: string; status: string }[] }>(await call("GET", `/api/sessions/${id}/runs`, { token: ws.read }))
    ).runs[0]!.id;

    const res = await call("POST", `/api/sessions/${id}/runs/${failedId}/retry`, { token: ws.member });
    expect(res.status).toBe(202);
    const retried = await json<{ run_id: string }>(res);
    expect(retried.run_id).not.toBe(failedId);
    expect(await waitForRun(env, id, retried.run_id, 10_000)).toMatchObject({ status: "completed", output_text: "second time lucky" });
    expect(userTexts(await doEvents(id, ws.id))).toEqual(["please work", "please work"]);
    const started = (await doEvents(id, ws.id)).filter((e) => e.type === "run_started" && e.run_id === retried.run_id);
    expect(started[0]).toMatchObject({ input: { retry_of: failedId } });
    const view = await json<RunRowBody>(await call("GET", `/api/sessions/${id}/runs/${retried.run_id}`, { token: ws.read }));
    expect(view.retry_of).toBe(failedId);

    const notFailed = await call("POST", `/api/sessions/${id}/runs/${retried.run_id}/retry`, { token: ws.member });
    expect(notFailed.status).toBe(409);
    expect((await json<{ error: { code: string } }>(notFailed)).error.code).toBe("conflict");
    expect((await call("POST", `/api/sessions/${id}/runs/run_nope/retry`, { token: ws.member })).status).toBe(404);
  });
});

describe("restart budget", () => {
  /** The alarm resumes the run; it is not awaited: the resumed run hangs again until the next "crash" aborts it. */
  const resume = (sessionId: string) => void runDurableObjectAlarm(stub(sessionId)).catch(() => undefined);
  const attemptsOf = (sessionId: string, runId: string) =>
    runInDurableObject(stub(sessionId), (_i, state) => {
      const row = state.storage.sql.exec<{ state: string }>("SELECT state FROM runs WHERE id = ?", runId).one();
      return (JSON.parse(row.state) as { attempts?: number }).attempts;
    });

  it("a restart after a persisted step starts the count again: the run finishes after more restarts than the budget", async () => {
    const tool = countingTool("step_tool");
    const toolset = registerToolset("budget-progress", [tool.spec]);
    // Every other call hangs and is interrupted by a restart; in between, a tool call is persisted.
    const restarts = MAX_RUN_ATTEMPTS + 1;
    const main = new ScriptedModel([
      ...Array.from({ length: restarts }, (_, k) => [toolCalls({ id: `s${k}`, name: "step_tool", args: { n: k } }), { hang: true }]).flat(),
      text("made it"),
    ]);
    const ws = await scriptedWorkspace(main);
    const { id } = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, id, { workspace_id: ws.id, content: "long job", toolset });
    for (let k = 1; k <= restarts; k++) {
      await until(() => main.calls.length === 2 * k, 5_000, `model call ${2 * k}`);
      await abortAllDurableObjects();
      resume(id);
    }
    expect(await waitForRun(env, id, run_id, 10_000)).toMatchObject({ status: "completed", output_text: "made it" });
    expect(tool.state.runs).toBe(restarts);
  });

  it("restarts with no step persisted in between use the budget up: the run fails", async () => {
    const main = new ScriptedModel([toolCalls({ id: "p1", name: "noop_step", args: {} }), { hang: true }]);
    const tool = countingTool("noop_step");
    const toolset = registerToolset("budget-none", [tool.spec]);
    const ws = await scriptedWorkspace(main);
    const { id } = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, id, { workspace_id: ws.id, content: "stuck job", toolset });
    await until(() => main.calls.length === 2, 5_000, "second model call");
    // The tool result was persisted in this execution: the count is back at 1.
    expect(await attemptsOf(id, run_id)).toBe(1);
    for (let restart = 1; restart <= MAX_RUN_ATTEMPTS; restart++) {
      await abortAllDurableObjects();
      resume(id);
      if (restart < MAX_RUN_ATTEMPTS) await until(() => main.calls.length === 2 + restart, 5_000, `resumed call ${restart}`);
    }
    expect(await waitForRun(env, id, run_id, 10_000)).toMatchObject({
      status: "failed",
      error: { code: "internal", message: expect.stringContaining(`restarted ${MAX_RUN_ATTEMPTS} times in a row without progress`) },
    });
  });
});
