/**
 * Versioned Durable Object storage, against real DO SQLite (no mocks of our storage): the migration
 * runner applies only pending migrations, in order, once, and a failing one changes nothing; and an
 * object written before versioning (today's tables and rows, no version recorded) is recognised on
 * wake and keeps everything it had.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects } from "cloudflare:test";
import { migrate, schemaVersion, type Migration } from "../../../src/storage/do-migrations.ts";
import { SESSION_SCHEMA_VERSION, SessionStorage } from "../../../src/runtime/session/do-storage.ts";
import { WORKSPACE_SCHEMA_VERSION } from "../../../src/domains/governance/workspace-do.ts";
import { createSession, getRun, getSession, sessionNamespace, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { workspaceStub } from "../../../src/domains/governance/client.ts";
import { randomToken } from "../../../src/kernel/ids.ts";
import { ScriptedModel, doEvents, runInDurableObject, scriptedWorkspace, stub, text } from "../../support/sessions.ts";

/** A scratch object: any class with SQLite storage will do; the runner only touches the tables it is given. */
const scratch = () => sessionNamespace(env).get(sessionNamespace(env).newUniqueId());

const tableExists = (sql: SqlStorage, name: string) =>
  sql.exec(`SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?`, name).toArray().length > 0;

/** Every table and index an object's own code created, with its DDL (the platform's `_cf_` tables and our version table left out). */
const layout = (sql: SqlStorage) =>
  sql
    .exec<{ type: string; name: string; sql: string | null }>(
      `SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE '\\_cf\\_%' ESCAPE '\\' AND name != '_schema' ORDER BY name`,
    )
    .toArray();

/** Test migrations that log when they run and each create a table, so both effects can be checked. */
function recording(log: number[], count: number): Migration[] {
  return Array.from({ length: count }, (_, i) => ({
    version: i + 1,
    name: `t${i + 1}`,
    up: (sql: SqlStorage) => {
      log.push(i + 1);
      sql.exec(`CREATE TABLE t${i + 1} (x INTEGER)`);
    },
  }));
}

describe("DO migration runner", () => {
  it("runs only the pending migrations, in order, once", async () => {
    await runInDurableObject(scratch(), (_i, state) => {
      const { sql } = state.storage;
      // The scratch object's own class versioned it on wake; start from an unversioned object.
      sql.exec(`DROP TABLE _schema`);
      expect(schemaVersion(sql)).toBe(0);

      const log: number[] = [];
      expect(migrate(state.storage, recording(log, 2))).toBe(2);
      expect(log).toEqual([1, 2]);
      expect(migrate(state.storage, recording(log, 2))).toBe(2);
      expect(log).toEqual([1, 2]);
      expect(migrate(state.storage, recording(log, 3))).toBe(3);
      expect(log).toEqual([1, 2, 3]);
      expect(["t1", "t2", "t3"].every((t) => tableExists(sql, t))).toBe(true);
      expect(schemaVersion(sql)).toBe(3);

      // Code older than the object (a rollback) runs nothing and does not lower the version.
      expect(migrate(state.storage, recording(log, 1))).toBe(3);
      expect(log).toEqual([1, 2, 3]);
      expect(schemaVersion(sql)).toBe(3);
    });
  });

  it("a failing migration leaves neither its changes nor a new version; the next wake retries it", async () => {
    await runInDurableObject(scratch(), (_i, state) => {
      const { sql } = state.storage;
      sql.exec(`DROP TABLE _schema`);
      const log: number[] = [];
      const [first] = recording(log, 1);
      const broken: Migration = {
        version: 2,
        name: "half done",
        up: (s) => {
          s.exec(`CREATE TABLE half (x INTEGER)`);
          s.exec(`INSERT INTO half (x) VALUES (1)`);
          throw new Error("migration 2 failed");
        },
      };
      expect(() => migrate(state.storage, [first!, broken])).toThrow("migration 2 failed");
      expect(schemaVersion(sql)).toBe(1);
      expect(tableExists(sql, "t1")).toBe(true);
      expect(tableExists(sql, "half")).toBe(false);

      const fixed: Migration = { version: 2, name: "fixed", up: (s) => void s.exec(`CREATE TABLE half (x INTEGER)`) };
      expect(migrate(state.storage, [first!, fixed])).toBe(2);
      expect(log).toEqual([1]);
      expect(tableExists(sql, "half")).toBe(true);
    });
  });

  it("refuses a misnumbered list before running anything", async () => {
    await runInDurableObject(scratch(), (_i, state) => {
      state.storage.sql.exec(`DROP TABLE _schema`);
      const log: number[] = [];
      const [m1, m2] = recording(log, 2);
      expect(() => migrate(state.storage, [m2!, m1!])).toThrow(/numbered 1, 2, 3/);
      expect(() => migrate(state.storage, [m1!, m1!])).toThrow(/numbered 1, 2, 3/);
      expect(log).toEqual([]);
      expect(schemaVersion(state.storage.sql)).toBe(0);
    });
  });
});

/** A session with a completed run: the tables hold a session, events, a run and meta keys. */
async function sessionWithHistory() {
  const ws = await scriptedWorkspace(new ScriptedModel([text("kept answer")]));
  const session = await createSession(env, { workspaceId: ws.id, title: "before versioning" });
  const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "remember me" });
  await waitForRun(env, session.id, run_id, 10_000);
  const events = await doEvents(session.id, ws.id);
  expect(events.length).toBeGreaterThan(2);
  return { ws, session, run_id, events };
}

/**
 * Puts the object back into the state unversioned code left it in. Migration 1 is today's DDL
 * verbatim, so the object already has exactly today's tables and rows; all that code never wrote is
 * the version table.
 */
function toUnversioned(sql: SqlStorage): void {
  sql.exec(`DROP TABLE _schema`);
  expect(schemaVersion(sql)).toBe(0);
}

describe("SessionDO storage written before versioning", () => {
  it("reopening the storage on the same object records the version and changes no table or row", async () => {
    const { session, run_id, events } = await sessionWithHistory();
    await runInDurableObject(stub(session.id), (_i, state) => {
      const { sql } = state.storage;
      toUnversioned(sql);
      const before = layout(sql);
      const rowsBefore = sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM events`).one().n;

      const store = new SessionStorage(state.storage);
      expect(schemaVersion(sql)).toBe(SESSION_SCHEMA_VERSION);
      expect(layout(sql)).toEqual(before);
      expect(sql.exec<{ n: number }>(`SELECT COUNT(*) AS n FROM events`).one().n).toBe(rowsBefore);
      expect(store.session()).toMatchObject({ id: session.id, title: "before versioning" });
      expect([...store.allEvents()]).toEqual(events);
      expect(store.run(run_id)).toMatchObject({ status: "completed", input: { content: "remember me" } });
      expect(store.usageTotals().total_tokens).toBeGreaterThan(0);
    });
  });

  it("an object woken under the new code finds everything through the normal API", async () => {
    const { ws, session, run_id, events } = await sessionWithHistory();
    await runInDurableObject(stub(session.id), (_i, state) => toUnversioned(state.storage.sql));
    // Drop the instance so the next call constructs the object again, as after a deploy.
    await abortAllDurableObjects();

    expect(await getSession(env, ws.id, session.id)).toMatchObject({ id: session.id, title: "before versioning" });
    expect(await doEvents(session.id, ws.id)).toEqual(events);
    expect(await getRun(env, session.id, run_id, ws.id)).toMatchObject({ status: "completed", result: { output_text: "kept answer" } });
    expect(await runInDurableObject(stub(session.id), (_i, state) => schemaVersion(state.storage.sql))).toBe(SESSION_SCHEMA_VERSION);

    // And the object keeps working: a new run lands after the old history.
    const { run_id: next } = await submitRun(env, session.id, { workspace_id: ws.id, content: "and after" });
    expect(await waitForRun(env, session.id, next, 10_000)).toMatchObject({ status: "completed" });
    const after = await doEvents(session.id, ws.id);
    expect(after.slice(0, events.length)).toEqual(events);
    expect(after.length).toBeGreaterThan(events.length);
  });

  it("an object at version 1 loses the benchmark's old `bench` table and keeps the rest", async () => {
    const { session, events } = await sessionWithHistory();
    await runInDurableObject(stub(session.id), (_i, state) => {
      const { sql } = state.storage;
      // What version 1 left behind: the table and the baseline's counter in it.
      sql.exec(`CREATE TABLE bench (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`);
      sql.exec(`INSERT INTO bench (k, v) VALUES ('touch', 3)`);
      sql.exec(`UPDATE _schema SET version = 1`);

      const store = new SessionStorage(state.storage);
      expect(schemaVersion(sql)).toBe(SESSION_SCHEMA_VERSION);
      expect(tableExists(sql, "bench")).toBe(false);
      expect([...store.allEvents()]).toEqual(events);
    });
  });
});

describe("WorkspaceDO storage written before versioning", () => {
  it("keeps its gc_epoch and is marked with the current version on wake", async () => {
    const name = `ws-migr-${randomToken(8)}`;
    // A fresh stub per call: one that reached an aborted instance stays broken.
    const ws = () => workspaceStub(env, name);
    await runInDurableObject(ws(), async (_i, state) => {
      expect(schemaVersion(state.storage.sql)).toBe(WORKSPACE_SCHEMA_VERSION);
      // Today's layout: the epoch key and no version.
      await state.storage.put("gc_epoch", 4);
      state.storage.sql.exec(`DROP TABLE _schema`);
    });
    await abortAllDurableObjects();

    const woken = await runInDurableObject(ws(), async (i, state) => ({
      version: schemaVersion(state.storage.sql),
      epoch: await i.gcEpoch(),
    }));
    expect(woken).toEqual({ version: WORKSPACE_SCHEMA_VERSION, epoch: 4 });
  });
});

describe("SessionDO storage at version 3 (before tool approvals)", () => {
  it("migration 4 adds the approvals table and pending_steer.channel, keeping queued steers", async () => {
    const { session, run_id } = await sessionWithHistory();
    await runInDurableObject(stub(session.id), (_i, state) => {
      const { sql } = state.storage;
      // Back to the version 3 layout, with a steer queued then.
      sql.exec(`DROP TABLE approvals`);
      sql.exec(`ALTER TABLE pending_steer DROP COLUMN channel`);
      sql.exec(`INSERT INTO pending_steer (run_id, client_id, content, source) VALUES (?, 'old', 'queued before', 'steer')`, run_id);
      sql.exec(`UPDATE _schema SET version = 3 WHERE id = 1`);
      expect(tableExists(sql, "approvals")).toBe(false);

      const store = new SessionStorage(state.storage);
      expect(schemaVersion(sql)).toBe(SESSION_SCHEMA_VERSION);
      expect(tableExists(sql, "approvals")).toBe(true);
      expect(store.pendingSteers(run_id)).toEqual([
        expect.objectContaining({ client_id: "old", content: "queued before", source: "steer" }),
      ]);
      expect(store.pendingSteers(run_id)[0]!.channel).toBeUndefined();
      store.insertApproval({ approval_id: "apr_x", run_id, tool_call_id: "c1", tool_name: "echo", args: { text: "t" }, expires_at: 1 });
      expect(store.openApprovals()).toEqual([expect.objectContaining({ approval_id: "apr_x", decision: null, args: { text: "t" } })]);
      store.decideApproval("apr_x", "deny", "timeout", 2);
      expect(store.approval("apr_x")).toMatchObject({ decision: "deny", decided_by: "timeout", decided_at: 2 });
      expect(store.openApprovals()).toEqual([]);
    });
  });
});
