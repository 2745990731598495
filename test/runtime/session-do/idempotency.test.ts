/**
 * `Idempotency-Key` on `POST /api/sessions/:id/messages` is bound to the message it first came with
 * (docs/sessions.md, Idempotency): the same key and body return the first run, as before; the same key
 * with another body answers 422 `idempotency_key_reused` — it used to answer with the first run, so
 * the client believed a message was taken that never was. Internal callers (no fingerprint) keep
 * "same key → same run", and so does a key stored before fingerprints existed (migration 3).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json } from "../../support/api.ts";
import { SESSION_SCHEMA_VERSION, SessionStorage } from "../../../src/runtime/session/do-storage.ts";
import { schemaVersion } from "../../../src/storage/do-migrations.ts";
import { createSession, messageFingerprint, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  doEvents,
  newSession,
  readSse,
  registerToolset,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
} from "../../support/sessions.ts";

type Err = { error: { code: string; message: string; details?: { idempotency_key?: string; run_id?: string } } };

function send(token: string, sessionId: string, body: Record<string, unknown>, key: string, opts: { query?: string; sse?: boolean } = {}) {
  return call("POST", `/api/sessions/${sessionId}/messages${opts.query ?? ""}`, {
    token,
    body,
    headers: { "Idempotency-Key": key, ...(opts.sse ? { Accept: "text/event-stream" } : {}) },
  });
}

async function expectReused(res: Response, key: string, runId: string): Promise<void> {
  expect(res.status).toBe(422);
  const err = await json<Err>(res);
  expect(err.error.code).toBe("idempotency_key_reused");
  expect(err.error.message).toContain(key);
  expect(err.error.details).toEqual({ idempotency_key: key, run_id: runId });
}

const userTexts = async (sessionId: string, workspaceId: string) =>
  (await doEvents(sessionId, workspaceId)).flatMap((e) => (e.type === "message" && e.message.role === "user" ? [e.message.content] : []));

describe("Idempotency-Key reuse", () => {
  it("the same key with a different body answers 422 on every way of asking; the same body still gets the first run", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const id = await newSession(ws);
    const first = await send(ws.member, id, { content: "hi", client_id: "app" }, "k-1");
    expect(first.status).toBe(202);
    const { run_id } = await json<{ run_id: string }>(first);

    const again = await json<{ run_id: string; deduplicated: boolean }>(
      await send(ws.member, id, { content: "hi", client_id: "app" }, "k-1"),
    );
    expect(again).toMatchObject({ run_id, deduplicated: true });

    await expectReused(await send(ws.member, id, { content: "bye", client_id: "app" }, "k-1"), "k-1", run_id);
    await expectReused(await send(ws.member, id, { content: "hi", client_id: "other" }, "k-1"), "k-1", run_id);
    await expectReused(await send(ws.member, id, { content: "hi" }, "k-1"), "k-1", run_id);
    await expectReused(await send(ws.member, id, { content: "hi", client_id: "app", source: "followUp" }, "k-1"), "k-1", run_id);
    await expectReused(await send(ws.member, id, { content: "bye", client_id: "app" }, "k-1", { query: "?wait=true" }), "k-1", run_id);
    await expectReused(await send(ws.member, id, { content: "bye", client_id: "app" }, "k-1", { sse: true }), "k-1", run_id);

    // How the answer is asked for is not part of the request: ?wait and SSE repeats of the same body join the run.
    const waited = await send(ws.member, id, { content: "hi", client_id: "app" }, "k-1", { query: "?wait=true" });
    expect(await json(waited)).toMatchObject({ run_id, status: "completed", output_text: "ok" });
    const streamed = await send(ws.member, id, { content: "hi", client_id: "app" }, "k-1", { sse: true });
    expect(streamed.status).toBe(200);
    expect(streamed.headers.get("X-Run-Id")).toBe(run_id);
    await readSse(streamed);

    const runs = await json<{ runs: { id: string }[] }>(await call("GET", `/api/sessions/${id}/runs`, { token: ws.read }));
    expect(runs.runs.map((r) => r.id)).toEqual([run_id]);
    expect(await userTexts(id, ws.id)).toEqual(["hi"]);
    expect(ws.main.calls).toHaveLength(1);
  });

  it("a steer's key is bound to its message too", async () => {
    const slow = countingTool("slow_tool");
    const gate = deferred();
    slow.state.gate = gate.promise;
    const toolset = registerToolset("steer-key-reuse", [slow.spec]);
    const ws = await scriptedWorkspace(new ScriptedModel([toolCalls({ id: "s1", name: "slow_tool", args: {} }), text("adjusted")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "start", toolset });
    await until(() => slow.state.runs === 1, 5_000, "tool start");

    const steer = { content: "also mention penguins", source: "steer" };
    expect(await json(await send(ws.member, session.id, steer, "s-1"))).toMatchObject({ run_id, steered: true, deduplicated: false });
    expect(await json(await send(ws.member, session.id, steer, "s-1"))).toMatchObject({ run_id, steered: true, deduplicated: true });
    await expectReused(await send(ws.member, session.id, { ...steer, content: "mention walruses instead" }, "s-1"), "s-1", run_id);
    gate.resolve();
    expect(await waitForRun(env, session.id, run_id, 10_000)).toMatchObject({ status: "completed" });
    await expectReused(await send(ws.member, session.id, { ...steer, content: "mention walruses instead" }, "s-1"), "s-1", run_id);
    expect(await userTexts(session.id, ws.id)).toEqual(["start", "also mention penguins"]);
  });

  it("internal callers, which send no fingerprint, keep 'same key, same run'", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const session = await createSession(env, { workspaceId: ws.id });
    const a = await submitRun(env, session.id, { workspace_id: ws.id, content: "attempt 1 prompt", idempotency_key: "task:attempt:1" });
    const b = await submitRun(env, session.id, { workspace_id: ws.id, content: "rebuilt prompt", idempotency_key: "task:attempt:1" });
    expect(b).toMatchObject({ run_id: a.run_id, deduplicated: true });
  });

  it("fingerprints the message only: content, source and client id", async () => {
    const base = await messageFingerprint({ content: "hi" });
    expect(base).toMatch(/^sha256:[0-9a-f]{64}$/);
    expect(await messageFingerprint({ content: "hi" })).toBe(base);
    expect(await messageFingerprint({ content: "hi!" })).not.toBe(base);
    expect(await messageFingerprint({ content: "hi", client_id: "x" })).not.toBe(base);
    expect(await messageFingerprint({ content: "hi", source: "steer" })).not.toBe(base);
  });

  it("a steer key stored at version 2 (no fingerprint column) gains the column and still answers with its run", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const id = await newSession(ws);
    const { run_id } = await json<{ run_id: string }>(await send(ws.member, id, { content: "hi" }, "k-run"));
    await runInDurableObject(stub(id), (_i, state) => {
      const { sql } = state.storage;
      // The layout version 2 left: steer_keys without the column, and a key stored then.
      sql.exec(`DROP TABLE steer_keys`);
      sql.exec(`CREATE TABLE steer_keys (k TEXT PRIMARY KEY, run_id TEXT NOT NULL)`);
      sql.exec(`INSERT INTO steer_keys (k, run_id) VALUES ('old-steer', ?)`, run_id);
      sql.exec(`UPDATE _schema SET version = 2`);

      const store = new SessionStorage(state.storage);
      expect(schemaVersion(sql)).toBe(SESSION_SCHEMA_VERSION);
      const columns = sql.exec<{ name: string }>(`SELECT name FROM pragma_table_info('steer_keys')`).toArray();
      expect(columns.map((c) => c.name)).toEqual(["k", "run_id", "fingerprint"]);
      expect(store.runBySteerKey("old-steer")).toMatchObject({ run: { id: run_id }, fingerprint: null });
    });
    // A key stored before fingerprints is not compared: any repeat joins its run, as it did.
    expect(await json(await send(ws.member, id, { content: "whatever", source: "steer" }, "old-steer"))).toMatchObject({
      run_id,
      steered: true,
      deduplicated: true,
    });
  });
});
