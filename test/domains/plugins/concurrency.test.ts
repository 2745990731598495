/**
 * The workspace write lock under concurrency: 20 simultaneous enable/sync/update requests give no
 * duplicate versions and no duplicate candidates; a held lock answers 409 busy with Retry-After
 * after a bounded wait — also when it is held by real long work that keeps the object busy — and an
 * op refused as busy never runs later; automatic (try) callers are deferred at once
 * (docs/skills-and-plugins.md, "The workspace write lock").
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { LOCK_CALL_GRACE_MS, runLocked, workspaceStub } from "../../../src/domains/governance/client.ts";
import { WorkspaceDO as WorkspaceDOClass, type WorkspaceDO } from "../../../src/domains/governance/workspace-do.ts";
import { AppError } from "../../../src/kernel/errors.ts";
import { skillMd, toolkitSkill } from "../../fixtures/skills/bundles.ts";
import { candidates, pluginPackage, post, uploadPackage, versionsOf } from "../../support/plugins.ts";
import { testServices, workspaceLock } from "../../support/test-services.ts";

const count = async (sql: string, ...binds: unknown[]) =>
  (await env.DB.prepare(sql)
    .bind(...binds)
    .first<{ n: number }>())!.n;

describe("workspace write lock", () => {
  it("20 concurrent enables mirror each skill exactly once", async () => {
    const ws = await newWorkspace();
    await uploadPackage(
      ws.admin,
      await pluginPackage("duo", "1", { "duo-a": toolkitSkill("duo-a"), "duo-b": { "SKILL.md": skillMd("duo-b", "B.") } }),
    );
    const results = await Promise.all(Array.from({ length: 20 }, () => post(ws.admin, "/api/plugins/duo/enable")));
    expect(results.every((r) => r.status === 200)).toBe(true);
    expect(results.filter((r) => r.body.changed === true)).toHaveLength(1);
    expect(await versionsOf(ws.id, "duo-a")).toBe(1);
    expect(await versionsOf(ws.id, "duo-b")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM plugin_skills WHERE workspace_id = ?", ws.id)).toBe(2);
  });

  it("20 concurrent enable/sync/update requests for one plugin: no duplicate versions, no duplicate candidates", async () => {
    const ws = await newWorkspace();
    const v1 = { "SKILL.md": skillMd("racer", "Races.") };
    const v2 = { "SKILL.md": skillMd("racer", "Races faster.") };
    await uploadPackage(ws.admin, await pluginPackage("race", "1", { racer: v1 }));
    await post(ws.admin, "/api/plugins/race/enable");
    const pkg2 = await pluginPackage("race", "2", { racer: v2 });
    const requests = Array.from({ length: 20 }, (_, i) => {
      if (i % 3 === 0) return uploadPackage(ws.admin, pkg2).then((r) => r.status);
      if (i % 3 === 1) return post(ws.admin, "/api/plugins/sync").then((r) => r.status);
      return post(ws.admin, "/api/plugins/race/enable").then((r) => r.status);
    });
    const statuses = await Promise.all(requests);
    expect(statuses.every((s) => s === 200)).toBe(true);
    await post(ws.admin, "/api/plugins/sync"); // whatever order they ran in, one more sync sees the new upstream
    const { candidates: cs, drafts } = await candidates(ws.read, "racer");
    expect(cs).toHaveLength(1);
    expect(drafts).toHaveLength(1);
    expect(cs[0]!.status).toBe("drafted");
    expect(await versionsOf(ws.id, "racer")).toBe(1);
    expect(await count("SELECT count(*) AS n FROM upstream_snapshots WHERE workspace_id = ?", ws.id)).toBe(2);
  });

  it("20 concurrent updates of a skill allocate distinct version numbers; identical ones publish once", async () => {
    const ws = await newWorkspace();
    const body = (d: string) => ({ files: [{ path: "SKILL.md", content: skillMd("busy", d) }] });
    const distinct = await Promise.all(
      Array.from({ length: 20 }, (_, i) =>
        call("PUT", "/api/skills/busy", { token: ws.member, body: body(`Variant ${i}.`) }).then((r) => json<{ version: string }>(r)),
      ),
    );
    expect(new Set(distinct.map((r) => r.version)).size).toBe(20);
    expect(distinct.map((r) => r.version).sort()).toEqual(Array.from({ length: 20 }, (_, i) => `v${String(i + 1).padStart(4, "0")}`));
    const same = await Promise.all(
      Array.from({ length: 20 }, () =>
        call("PUT", "/api/skills/busy", { token: ws.member, body: body("Settled.") }).then((r) => json<{ created: boolean }>(r)),
      ),
    );
    expect(same.filter((r) => r.created)).toHaveLength(1);
    expect(await versionsOf(ws.id, "busy")).toBe(21);
  });

  it("the lock is handed hashes and references, never file bytes: parsing, hashing and R2 writes happen before it", async () => {
    const ws = await newWorkspace();
    const ops: { kind: string; size: number }[] = [];
    // RPC dispatches through the prototype, so that is where the op can be seen arriving.
    const run = WorkspaceDOClass.prototype.run;
    WorkspaceDOClass.prototype.run = function (this: WorkspaceDO, workspaceId, op, call) {
      if (workspaceId === ws.id) ops.push({ kind: op.kind, size: JSON.stringify(op).length });
      return run.call(this, workspaceId, op, call);
    } as typeof run;
    try {
      // ~1.4 MB of distinct text in 60 files.
      const files: Record<string, string> = { "SKILL.md": skillMd("bulky", "Bulky.") };
      for (let i = 0; i < 60; i++) files[`ref/part-${i}.md`] = `${i} `.repeat(8_000);
      const pkg = await pluginPackage("bulk", "1", { bulky: files });
      expect((await uploadPackage(ws.admin, pkg)).status).toBe(200);
      const enabled = await post(ws.admin, "/api/plugins/bulk/enable");
      expect(enabled.body).toMatchObject({ mirrored: [{ skill: "bulky", version: "v0001" }], r2_writes: 0 });
      expect((await uploadPackage(ws.admin, pkg)).body).toMatchObject({ r2_writes: 0 });
      expect((await post(ws.admin, "/api/plugins/sync")).body).toMatchObject({ r2_writes: 0 });
    } finally {
      WorkspaceDOClass.prototype.run = run;
    }
    expect(ops.map((o) => o.kind)).toEqual(["record_package", "enable_plugin", "record_package", "sync_plugins"]);
    for (const o of ops) expect(o.size, o.kind).toBeLessThan(8 * 1024);
  });

  it("answers 409 busy with Retry-After after a bounded wait, and defers try-only callers at once", async () => {
    const ws = await newWorkspace();
    await uploadPackage(ws.admin, await pluginPackage("held", "1", { holder: { "SKILL.md": skillMd("holder", "Holds.") } }));
    const stub = workspaceStub(env, ws.id);
    const lock = workspaceLock(stub.id);
    testServices.lockWaitMs = 150;
    expect(await lock.acquire(0)).toBe(true);
    try {
      const started = Date.now();
      const res = await call("POST", "/api/plugins/held/enable", { token: ws.admin });
      expect(res.status).toBe(409);
      expect(res.headers.get("Retry-After")).toBe("2");
      expect(await json(res)).toMatchObject({ error: { code: "busy", details: { waited_ms: 150 } } });
      expect(Date.now() - started).toBeGreaterThanOrEqual(140);
      const tried = await runLocked(env, ws.id, { kind: "sync_plugins" }, "try").catch((e: unknown) => e);
      expect(tried).toBeInstanceOf(AppError);
      expect((tried as AppError).code).toBe("busy");
      expect(await versionsOf(ws.id, "holder")).toBe(0);
    } finally {
      lock.release();
      testServices.lockWaitMs = null;
    }
    expect((await post(ws.admin, "/api/plugins/held/enable")).status).toBe(200);
  });

  it(
    "bounds the wait behind real long work: 409 busy near the bound, and the refused write never happens",
    { timeout: 90_000 },
    async () => {
      const ws = await newWorkspace();
      // A plugin of 200 skills: enabling it mirrors each one under the lock (measured: 0.5–2.5 s in
      // workerd on a shared machine), a chain of D1 calls that keeps the object's timers from firing.
      const skills: Record<string, Record<string, string>> = {};
      for (let i = 0; i < 200; i++) skills[`bulk-${i}`] = { "SKILL.md": skillMd(`bulk-${i}`, `Bulk skill ${i}.`) };
      expect((await uploadPackage(ws.admin, await pluginPackage("bulk", "1", skills))).status).toBe(200);

      let arrived!: () => void;
      const enableHoldsLock = new Promise<void>((resolve) => (arrived = resolve));
      const run = WorkspaceDOClass.prototype.run;
      // The enable meets a free lock and takes it before its run() returns a promise.
      WorkspaceDOClass.prototype.run = function (this: WorkspaceDO, workspaceId, op, call) {
        const result = run.call(this, workspaceId, op, call);
        if (workspaceId === ws.id && op.kind === "enable_plugin") arrived();
        return result;
      } as typeof run;
      testServices.lockWaitMs = 300;
      try {
        const t0 = Date.now();
        const enable = post(ws.admin, "/api/plugins/bulk/enable").then((r) => ({ status: r.status, at: Date.now() - t0 }));
        await enableHoldsLock;
        // Other explicit work queued first, as in the field: two syncs.
        const syncs = [1, 2].map(() => post(ws.admin, "/api/plugins/sync").then((r) => r.status));
        const sent = Date.now() - t0;
        const write = call("PUT", "/api/skills/late", {
          token: ws.member,
          body: { files: [{ path: "SKILL.md", content: skillMd("late", "Late.") }] },
        }).then(async (r) => ({ status: r.status, retryAfter: r.headers.get("Retry-After"), body: await json(r), at: Date.now() - t0 }));
        const [e, w, ...s] = await Promise.all([enable, write, ...syncs]);
        const timing = `long enable ${e.at} ms; write sent at ${sent} ms, answered ${w.status} at ${w.at} ms`;
        expect(e.status).toBe(200);
        expect(w.status, timing).toBe(409);
        expect(w.retryAfter).toBe("2");
        expect(w.body).toMatchObject({ error: { code: "busy", details: { waited_ms: 300 } } });
        expect(s).toEqual([409, 409]);
        // Answered on its own deadline, while the long op still held the lock.
        expect(w.at, timing).toBeLessThanOrEqual(e.at);
      } finally {
        WorkspaceDOClass.prototype.run = run;
        testServices.lockWaitMs = null;
      }
      // The long op finished; the refused write never ran, now or later.
      expect(await versionsOf(ws.id, "bulk-199")).toBe(1);
      expect(await versionsOf(ws.id, "late")).toBe(0);
      const retried = await call("PUT", "/api/skills/late", {
        token: ws.member,
        body: { files: [{ path: "SKILL.md", content: skillMd("late", "Late.") }] },
      });
      expect(retried.status).toBe(200);
      expect(await versionsOf(ws.id, "late")).toBe(1);
    },
  );

  it("the caller answers busy on its own when the object does not answer in time, and the op never runs", async () => {
    const ws = await newWorkspace();
    const run = WorkspaceDOClass.prototype.run;
    // The object cannot take the call until the test lets it go, which is after the caller's answer:
    // so the answer cannot have come from the object.
    let release!: () => void;
    const held = new Promise<void>((r) => (release = r));
    let reached!: () => void;
    const arrived = new Promise<void>((r) => (reached = r));
    let objectDone = false;
    WorkspaceDOClass.prototype.run = async function (this: WorkspaceDO, workspaceId, op, call) {
      if (workspaceId !== ws.id) return run.call(this, workspaceId, op, call);
      reached();
      await held;
      try {
        return await run.call(this, workspaceId, op, call);
      } finally {
        objectDone = true;
      }
    } as typeof run;
    testServices.lockWaitMs = 200;
    try {
      const started = Date.now();
      const res = await call("PUT", "/api/skills/slow", {
        token: ws.member,
        body: { files: [{ path: "SKILL.md", content: skillMd("slow", "Slow.") }] },
      });
      const took = Date.now() - started;
      expect(res.status).toBe(409);
      expect(res.headers.get("Retry-After")).toBe("2");
      expect(await json(res)).toMatchObject({ error: { code: "busy", details: { waited_ms: 200 } } });
      expect(took).toBeGreaterThanOrEqual(200 + LOCK_CALL_GRACE_MS - 20);
      expect(objectDone).toBe(false);
      // The call arrives late; the object refuses it by its deadline.
      await arrived;
      release();
      for (let i = 0; i < 200 && !objectDone; i++) await new Promise((r) => setTimeout(r, 20));
      expect(objectDone).toBe(true);
    } finally {
      release();
      WorkspaceDOClass.prototype.run = run;
      testServices.lockWaitMs = null;
    }
    expect(await versionsOf(ws.id, "slow")).toBe(0);
  });

  it("an op that gets the lock in time runs only if its caller still waits", async () => {
    const ws = await newWorkspace();
    await uploadPackage(ws.admin, await pluginPackage("asked", "1", { askme: { "SKILL.md": skillMd("askme", "Asks.") } }));
    const stub = workspaceStub(env, ws.id);
    const op = { kind: "enable_plugin", pluginId: "asked", actor: "test" } as const;
    const deadline = Date.now() + 5_000;
    const refused = await stub.run(ws.id, op, { mode: "wait", deadline, waitMs: 5_000, start: () => false });
    expect(refused).toMatchObject({ ok: false, error: { code: "busy" } });
    expect(await versionsOf(ws.id, "askme")).toBe(0);
    const late = await stub.run(ws.id, op, { mode: "wait", deadline: Date.now() - 1, waitMs: 5_000, start: () => true });
    expect(late).toMatchObject({ ok: false, error: { code: "busy" } });
    expect(await versionsOf(ws.id, "askme")).toBe(0);
    const ran = await stub.run(ws.id, op, { mode: "wait", deadline, waitMs: 5_000, start: () => true });
    expect(ran).toMatchObject({ ok: true });
    expect(await versionsOf(ws.id, "askme")).toBe(1);
  });
});
