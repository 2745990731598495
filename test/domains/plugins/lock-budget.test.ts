/**
 * Issue 25 item 7, the steps before the lock: a skill write first reads the GC epoch from the same
 * WorkspaceDO — an RPC that a long plugin sync keeps from being answered — then counts the quota and
 * stores its tree, and only then waited (a fresh `BEAVER_LOCK_WAIT_MS`) for the lock. Here the
 * epoch is held until the write has answered: the write must give up at its deadline with 409
 * `busy`, naming the step, and nothing of it may appear once the epoch comes back. On the tree
 * before lock-budget.ts the write waited for the epoch with no limit and this test timed out.
 */
import { afterEach, describe, expect, it, onTestFinished } from "vitest";
import { WorkspaceDO as WorkspaceDOClass, type WorkspaceDO } from "../../../src/domains/governance/workspace-do.ts";
import { call, json, newWorkspace } from "../../support/api.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { versionsOf } from "../../support/plugins.ts";
import { testServices } from "../../support/test-services.ts";

const BOUND_MS = 300;
/** A bound with room to spare for a free workspace even on a loaded 2-core CI machine (300 ms was not: the write took 385 ms). */
const SPARE_MS = 5_000;

afterEach(() => {
  testServices.lockWaitMs = null;
});

describe("the write's lock budget covers the steps before the lock", () => {
  it("answers busy at its deadline while the object cannot answer the epoch, and writes nothing", { timeout: 30_000 }, async () => {
    const ws = await newWorkspace();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const gcEpoch = WorkspaceDOClass.prototype.gcEpoch;
    WorkspaceDOClass.prototype.gcEpoch = async function (this: WorkspaceDO) {
      asked++;
      await held;
      return gcEpoch.call(this);
    };
    onTestFinished(() => {
      release();
      WorkspaceDOClass.prototype.gcEpoch = gcEpoch;
    });
    testServices.lockWaitMs = BOUND_MS;
    const res = await call("PUT", "/api/skills/stalled", {
      token: ws.member,
      body: { files: [{ path: "SKILL.md", content: skillMd("stalled", "Stalled.") }] },
    });
    const body = (await json(res)) as { error: { code: string; details: { waited_ms: number; elapsed_ms: number; stage: string } } };
    expect(res.status).toBe(409);
    expect(res.headers.get("Retry-After")).toBe("2");
    expect(body.error).toMatchObject({ code: "busy", details: { waited_ms: BOUND_MS, stage: "epoch" } });
    // It gave up at its deadline: not before it, and (the epoch never came) not after the stall.
    expect(asked).toBe(1);
    expect(body.error.details.elapsed_ms).toBeGreaterThanOrEqual(BOUND_MS);
    // The epoch comes back late: the write that answered busy stored and published nothing.
    release();
    await held;
    const after = await call("GET", "/api/skills/stalled", { token: ws.member });
    expect(after.status).toBe(404);
    expect(await versionsOf(ws.id, "stalled")).toBe(0);
  });

  it("a write with budget to spare still publishes (the budget changes nothing when the workspace is free)", async () => {
    const ws = await newWorkspace();
    testServices.lockWaitMs = SPARE_MS;
    const res = await call("PUT", "/api/skills/free", {
      token: ws.member,
      body: { files: [{ path: "SKILL.md", content: skillMd("free", "Free.") }] },
    });
    expect(res.status).toBe(200);
    expect(await versionsOf(ws.id, "free")).toBe(1);
  });
});
