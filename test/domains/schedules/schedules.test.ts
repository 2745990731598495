/**
 * Schedules (docs/schedules.md): `/api/schedules` validation, CRUD and workspace isolation, the
 * quota, cron slots in a time zone, and firing by the ScheduleDO's alarm — once per slot, the
 * message in the session under `schedule:<id>` with who scheduled it.
 */
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { call, json, newWorkspace } from "../../support/api.ts";
import { setTestLimits } from "../../support/test-services.ts";
import { ScriptedModel, doEvents, newSession, scriptedWorkspace, text, until } from "../../support/sessions.ts";
import { nextCronSlot, type ScheduleView } from "../../../src/domains/schedules/spec.ts";
import { scheduleStub } from "../../../src/domains/schedules/client.ts";
import { fireSlot, slotSessionId } from "../../../src/domains/schedules/fire.ts";
import type { ScheduleObject } from "../../../src/domains/schedules/schedule-do.ts";
import type { PersistentEvent, RunStartedEvent } from "../../../src/runtime/session/events.ts";

afterEach(() => setTestLimits(null));

const stubOf = (workspaceId: string): DurableObjectStub<ScheduleObject> => scheduleStub(env, workspaceId);
const started = (events: PersistentEvent[], scheduleId: string) =>
  events.filter((e): e is RunStartedEvent => e.type === "run_started" && e.client_id === `schedule:${scheduleId}`);

async function create(token: string, body: unknown): Promise<Response> {
  return call("POST", "/api/schedules", { token, body });
}

describe("schedule validation", () => {
  it.each([
    ["neither at nor cron", { message: "hi" }, "at"],
    ["both at and cron", { message: "hi", at: "2030-01-01T00:00:00Z", cron: "0 9 * * *" }, "at"],
    ["a bad cron field", { message: "hi", cron: "61 * * * *" }, "cron"],
    ["a sub-minute (seconds) cron", { message: "hi", cron: "*/5 * * * * *" }, "cron"],
    ["an unknown nickname", { message: "hi", cron: "@fortnightly" }, "cron"],
    ["an unknown time zone", { message: "hi", cron: "0 9 * * *", timezone: "Mars/Olympus" }, "timezone"],
    ["an at without offset", { message: "hi", at: "2030-01-01T00:00:00" }, "at"],
    ["an at in the past", { message: "hi", at: "2001-01-01T00:00:00Z" }, null],
    ["an empty message", { message: "", at: "2030-01-01T00:00:00Z" }, "message"],
  ])("refuses %s with 400", async (_what, body, field) => {
    const ws = await newWorkspace();
    const res = await create(ws.member, body);
    expect(res.status).toBe(400);
    const err = (await json<{ error: { code: string; message: string; details?: { path: string }[] } }>(res)).error;
    expect(err.code).toBe("validation_failed");
    if (field) expect(JSON.stringify(err)).toContain(field);
  });

  it("a read token cannot create; a session of another workspace is not found", async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    expect((await create(ws.read, { message: "hi", cron: "0 9 * * *" })).status).toBe(403);
    const foreign = await newSession(other);
    expect((await create(ws.member, { message: "hi", cron: "0 9 * * *", session_id: foreign })).status).toBe(404);
  });
});

describe("schedule CRUD", () => {
  it("creates, lists, gets and deletes; another workspace's schedule is 404", async () => {
    const ws = await newWorkspace();
    const other = await newWorkspace();
    const session = await newSession(ws);
    const res = await create(ws.member, { session_id: session, message: "standup", cron: "30 9 * * 1-5", timezone: "Europe/Berlin" });
    expect(res.status).toBe(201);
    const s = await json<ScheduleView>(res);
    expect(s).toMatchObject({ session_id: session, message: "standup", cron: "30 9 * * 1-5", timezone: "Europe/Berlin", at: null });
    expect(s.id).toMatch(/^sch_/);
    expect(s.created_by).toMatch(/^token:/);
    expect(Date.parse(s.next_run_at!)).toBe(nextCronSlot("30 9 * * 1-5", "Europe/Berlin", Date.parse(s.created_at) - 1000));

    const list = await json<{ schedules: ScheduleView[] }>(await call("GET", "/api/schedules", { token: ws.read }));
    expect(list.schedules.map((x) => x.id)).toEqual([s.id]);
    expect((await json<{ schedules: ScheduleView[] }>(await call("GET", "/api/schedules", { token: other.read }))).schedules).toEqual([]);

    expect((await call("GET", `/api/schedules/${s.id}`, { token: ws.read })).status).toBe(200);
    expect((await call("GET", `/api/schedules/${s.id}`, { token: other.read })).status).toBe(404);
    expect((await call("DELETE", `/api/schedules/${s.id}`, { token: other.member })).status).toBe(404);
    expect((await call("DELETE", `/api/schedules/${s.id}`, { token: ws.read })).status).toBe(403);
    expect((await call("DELETE", `/api/schedules/${s.id}`, { token: ws.member })).status).toBe(200);
    expect((await call("GET", `/api/schedules/${s.id}`, { token: ws.read })).status).toBe(404);
    expect((await call("DELETE", `/api/schedules/${s.id}`, { token: ws.member })).status).toBe(404);
    expect((await call("GET", `/api/schedules/not-an-id`, { token: ws.read })).status).toBe(404);
  });

  it("enforces the per-workspace quota", async () => {
    const ws = await newWorkspace();
    setTestLimits({ schedules: 1 });
    expect((await create(ws.member, { message: "a", cron: "0 9 * * *" })).status).toBe(201);
    const res = await create(ws.member, { message: "b", cron: "0 9 * * *" });
    expect(res.status).toBe(429);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("quota_exceeded");
  });
});

describe("cron slots", () => {
  it("computes the next slot in the schedule's time zone (daylight saving included)", () => {
    const winter = Date.parse("2030-01-15T12:00:00Z");
    const summer = Date.parse("2030-07-15T12:00:00Z");
    expect(new Date(nextCronSlot("0 9 * * *", "Europe/Berlin", winter)!).toISOString()).toBe("2030-01-16T08:00:00.000Z");
    expect(new Date(nextCronSlot("0 9 * * *", "Europe/Berlin", summer)!).toISOString()).toBe("2030-07-16T07:00:00.000Z");
    expect(new Date(nextCronSlot("0 9 * * *", "America/New_York", winter)!).toISOString()).toBe("2030-01-15T14:00:00.000Z");
    expect(new Date(nextCronSlot("0 9 * * *", "UTC", winter)!).toISOString()).toBe("2030-01-16T09:00:00.000Z");
  });
});

describe("firing", () => {
  it("an `at` schedule fires once when its alarm runs; running the alarm again sends nothing more", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("noted")]));
    const session = await newSession(ws);
    const s = await json<ScheduleView>(
      await create(ws.member, { session_id: session, message: "time to check the build", at: new Date(Date.now() - 1000).toISOString() }),
    );
    // The platform may run the (already due) alarm itself; either way the slot is sent exactly once.
    await runDurableObjectAlarm(stubOf(ws.id));
    await until(async () => started(await doEvents(session, ws.id), s.id).length > 0, 5_000, "the scheduled run");
    expect(await runDurableObjectAlarm(stubOf(ws.id))).toBe(false);
    await runInDurableObject(stubOf(ws.id), (obj: ScheduleObject) => obj.fireDue());

    const events = await doEvents(session, ws.id);
    const runs = started(events, s.id);
    expect(runs).toHaveLength(1);
    expect(runs[0]!.input).toMatchObject({ tool_data: { schedule: { id: s.id, scheduled_by: s.created_by, slot: s.at } } });
    const message = events.find((e) => e.type === "message" && e.client_id === `schedule:${s.id}`);
    expect(JSON.stringify(message)).toContain("time to check the build");
    // An `at` schedule is done once sent.
    expect((await call("GET", `/api/schedules/${s.id}`, { token: ws.read })).status).toBe(404);
  });

  it("sending the same slot twice starts one run (idempotency key = schedule id + slot)", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const session = await newSession(ws);
    const due = {
      workspaceId: ws.id,
      scheduleId: "sch_00000000000000000001",
      sessionId: session,
      message: "m",
      createdBy: "token:t",
      slot: 1_900_000_000_000,
    };
    const first = await fireSlot(env, due);
    const second = await fireSlot(env, due);
    expect(second.run_id).toBe(first.run_id);
    expect(second.deduplicated).toBe(true);
    const third = await fireSlot(env, { ...due, slot: due.slot + 60_000 });
    expect(third.run_id).not.toBe(first.run_id);
  });

  it("a cron schedule without a session starts a new session per slot and moves to its next slot", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("done")]));
    const s = await json<ScheduleView>(await create(ws.member, { message: "daily digest", cron: "0 7 * * *", timezone: "Asia/Tokyo" }));
    expect(s.session_id).toBeNull();
    // Make the pending slot due now, as if the clock had reached it.
    const slot = Date.parse(s.next_run_at!) - 86_400_000 * 2;
    await runInDurableObject(stubOf(ws.id), (_obj: ScheduleObject, state) => {
      state.storage.sql.exec(`UPDATE schedules SET slot = ?, due_at = ? WHERE id = ?`, slot, slot, s.id);
    });
    const report = await runInDurableObject(stubOf(ws.id), (obj: ScheduleObject) => obj.fireDue());
    expect(report.failed).toEqual([]);
    expect(report.fired).toHaveLength(1);
    const sessionId = slotSessionId(s.id, slot);
    expect(report.fired[0]!.session_id).toBe(sessionId);

    const session = await json<{ metadata: Record<string, unknown> }>(await call("GET", `/api/sessions/${sessionId}`, { token: ws.read }));
    expect(session.metadata).toMatchObject({ schedule_id: s.id, scheduled_by: s.created_by });
    expect(started(await doEvents(sessionId, ws.id), s.id)).toHaveLength(1);

    const after = await json<ScheduleView>(await call("GET", `/api/schedules/${s.id}`, { token: ws.read }));
    expect(after.last_fired_at).toBe(new Date(slot).toISOString());
    expect(Date.parse(after.next_run_at!)).toBeGreaterThan(Date.now());
    expect(new Date(after.next_run_at!).getUTCHours()).toBe(22); // 07:00 in Tokyo (UTC+9)
    // The alarm is armed for the next slot.
    const alarm = await runInDurableObject(stubOf(ws.id), (_obj: ScheduleObject, state) => state.storage.getAlarm());
    expect(alarm).toBe(Date.parse(after.next_run_at!));
  });

  it("a slot whose session was closed is skipped and kept as last_error", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await newSession(ws);
    const s = await json<ScheduleView>(await create(ws.member, { session_id: session, message: "m", cron: "*/5 * * * *" }));
    expect((await call("POST", `/api/sessions/${session}/close`, { token: ws.member })).status).toBe(200);
    const slot = Date.now() - 1000;
    await runInDurableObject(stubOf(ws.id), (_obj: ScheduleObject, state) => {
      state.storage.sql.exec(`UPDATE schedules SET slot = ?, due_at = ? WHERE id = ?`, slot, slot, s.id);
    });
    const report = await runInDurableObject(stubOf(ws.id), (obj: ScheduleObject) => obj.fireDue());
    expect(report.failed).toEqual([{ schedule_id: s.id, slot: new Date(slot).toISOString(), code: "session_closed", permanent: true }]);
    const after = await json<ScheduleView>(await call("GET", `/api/schedules/${s.id}`, { token: ws.read }));
    expect(after.last_error).toContain("session_closed");
    expect(Date.parse(after.next_run_at!)).toBeGreaterThan(Date.now());
  });
});
