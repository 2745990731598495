/**
 * Issue 25, item 7: a small skill write queued behind a 1,500-skill plugin sync (other syncs queued
 * behind it) answered 409 `busy` only after 26 s where the bound was 10 s. Replayed here with the
 * same shape — a sync that classifies every skill of a big plugin under the lock, two more syncs
 * and then the write — with 120 skills (1,500 took 8 minutes of test time; the sync alone 86 s, during
 * which no timer of the isolate fired) and a 300 ms bound: on a machine where the 120-skill sync took
 * 969 ms (28 November 2026), a 1 s bound let the sync end first and the test fail. The write must be answered `busy` before the
 * sync it queued behind, having given up at its own deadline (the wait the code measures from the
 * request's start — lock-budget.ts: epoch, quota, storing and the lock share one budget — reaches the
 * bound), and never run. Before the fix
 * (kernel/yield-timers.ts) the sync starved the isolate's timers and this test did not finish in 10 min.
 * The issue's own size: `npm run probe:lock` (VITE_LOCK_PROBE_SKILLS=1500, a 10 s bound).
 */
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { WorkspaceDO as WorkspaceDOClass, type WorkspaceDO } from "../../../src/domains/governance/workspace-do.ts";
import { call, json, newWorkspace } from "../../support/api.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { pluginPackage, post, uploadPackage, versionsOf } from "../../support/plugins.ts";
import { setTestLimits, testServices } from "../../support/test-services.ts";

// The probe (1,500 skills, 10 s) runs as `npm run probe:lock`; the suite keeps a size whose sync still
// holds the lock several times the 300 ms bound (the write must answer 409, so a sync too short to matter fails the test).
const SKILLS = Number(import.meta.env.VITE_LOCK_PROBE_SKILLS ?? 120);
const BOUND_MS = SKILLS > 120 ? 10_000 : 300;

afterEach(() => {
  testServices.lockWaitMs = null;
  setTestLimits(null);
});

function bulk(version: string): Record<string, Record<string, string>> {
  const skills: Record<string, Record<string, string>> = {};
  for (let i = 0; i < SKILLS; i++) skills[`bulk-${i}`] = { "SKILL.md": skillMd(`bulk-${i}`, `Bulk skill ${i}, release ${version}.`) };
  return skills;
}

describe("the workspace lock's bound under a big plugin sync", () => {
  it("answers a small write queued behind the sync and other syncs with busy within the bound", { timeout: 1_200_000 }, async () => {
    setTestLimits({ skills: 5_000 });
    const ws = await newWorkspace();
    expect((await uploadPackage(ws.admin, await pluginPackage("bulk", "1", bulk("1")))).status).toBe(200);
    const enabled = await post(ws.admin, "/api/plugins/bulk/enable");
    expect(enabled.status).toBe(200);
    // Upstream moves every skill: the next sync classifies one update per skill under the lock.
    expect((await uploadPackage(ws.admin, await pluginPackage("bulk", "2", bulk("2")))).status).toBe(200);

    let arrived!: () => void;
    const syncHoldsLock = new Promise<void>((resolve) => (arrived = resolve));
    const run = WorkspaceDOClass.prototype.run;
    // The sync meets a free lock and takes it before its run() returns a promise.
    WorkspaceDOClass.prototype.run = function (this: WorkspaceDO, workspaceId, op, lockCall) {
      const result = run.call(this, workspaceId, op, lockCall);
      if (workspaceId === ws.id && op.kind === "sync_plugins") arrived();
      return result;
    } as typeof run;
    onTestFinished(() => {
      WorkspaceDOClass.prototype.run = run;
    });
    testServices.lockWaitMs = BOUND_MS;
    const t0 = Date.now();
    const longSync = post(ws.admin, "/api/plugins/sync").then((r) => ({ status: r.status, at: Date.now() - t0 }));
    await syncHoldsLock;
    const syncs = [1, 2].map(() => post(ws.admin, "/api/plugins/sync").then((r) => r.status));
    const sent = Date.now() - t0;
    const write = call("PUT", "/api/skills/late", {
      token: ws.member,
      body: { files: [{ path: "SKILL.md", content: skillMd("late", "Late.") }] },
    }).then(async (r) => ({ status: r.status, body: await json(r), at: Date.now() - t0 }));
    const [s, w, ...others] = await Promise.all([longSync, write, ...syncs]);
    const details = (w.body as { error?: { details?: { elapsed_ms?: number; stage?: string } } }).error?.details;
    const timing = `${SKILLS} skills: long sync answered ${s.status} at ${s.at} ms; write sent at ${sent} ms, answered ${w.status} at ${w.at} ms (${JSON.stringify(details)}); others ${others}`;
    console.log(timing);
    expect(w.status, timing).toBe(409);
    expect(w.body).toMatchObject({ error: { code: "busy", details: { waited_ms: BOUND_MS } } });
    // It gave up at its own deadline, not when the sync let go: answered first, its measured wait within the bound.
    expect(w.at, timing).toBeLessThan(s.at);
    // How long within the bound is a measurement, printed above and by `npm run probe:lock`, not asserted.
    expect(details?.elapsed_ms, timing).toBeGreaterThanOrEqual(BOUND_MS);
    expect(await versionsOf(ws.id, "late")).toBe(0);
  });
});
