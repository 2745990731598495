// Channels (docs/channels.md): messages from outside the API (schedules, toolchain tasks, mail) are
// preceded by `channel_inject`, never sent to the model and shown in the transcript; a session bound to
// an outbound webhook channel posts each run's result, signed, retried with backoff, from a durable outbox.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { call, json } from "../../support/api.ts";
import { setOutboundFetch } from "../../support/test-services.ts";
import { fireSlot } from "../../../src/domains/schedules/fire.ts";
import { startAgentRun } from "../../../src/domains/tasks/agent-run.ts";
import { waitForRun } from "../../../src/runtime/session/service.ts";
import { hmacSha256Hex } from "../../../src/kernel/hash.ts";
import { deliveryBackoffMs } from "../../../src/runtime/channels/outbox.ts";
import {
  ScriptedModel,
  doEvents,
  newSession,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  until,
  type ScriptedWorkspace,
} from "../../support/sessions.ts";

afterEach(() => setOutboundFetch(null));

interface Post {
  url: string;
  headers: Headers;
  body: string;
}

/** Captures posts; answers `statuses` in turn (the last repeats). */
function receiver(statuses: number[] = [200]): Post[] {
  const posts: Post[] = [];
  setOutboundFetch(async (input, init) => {
    const req = new Request(input, init);
    posts.push({ url: req.url, headers: req.headers, body: await req.text() });
    return new Response("ok", { status: statuses[Math.min(posts.length - 1, statuses.length - 1)] });
  });
  return posts;
}

async function withChannel(ws: ScriptedWorkspace): Promise<void> {
  expect((await call("PUT", "/api/secrets/HOOK_SECRET", { token: ws.admin, body: { value: "s3cret" } })).status).toBeLessThan(300);
  const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
  const res = await call("PUT", "/api/config", {
    token: ws.admin,
    body: { ...config, channels: [{ name: "ops", kind: "webhook", url: "https://hooks.example.com/beaver", secret_name: "HOOK_SECRET" }] },
  });
  expect(res.status).toBe(200);
}

describe("inbound: channel_inject", () => {
  it("a scheduled message is preceded by channel_inject, shown in the transcript, never sent to the model", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("done")));
    const id = await newSession(ws);
    const slot = Date.UTC(2026, 0, 1, 9);
    const out = await fireSlot(env, {
      workspaceId: ws.id,
      scheduleId: "sch_test",
      slot,
      sessionId: id,
      message: "daily report",
      createdBy: "tester",
    });
    expect((await waitForRun(env, id, out.run_id, 10_000)).status).toBe("completed");
    const events = await doEvents(id, ws.id);
    const at = events.findIndex((e) => e.type === "channel_inject");
    expect(events[at]).toMatchObject({ type: "channel_inject", channel: "schedule", metadata: { schedule_id: "sch_test" } });
    expect(events[at + 1]).toMatchObject({ type: "message", message: { role: "user", content: "daily report" } });
    expect(ws.main.promptText(0)).not.toContain("sch_test");
    const transcript = await json<{ items: { kind: string; notice?: string; details?: Record<string, unknown> }[] }>(
      await call("GET", `/api/sessions/${id}/transcript`, { token: ws.read }),
    );
    expect(transcript.items).toContainEqual(
      expect.objectContaining({ kind: "notice", notice: "channel", details: expect.objectContaining({ channel: "schedule" }) }),
    );
  });

  it("a task run (toolchain, mail) carries its channel", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("handled")));
    const { sessionId, runId } = await startAgentRun(env, {
      workspaceId: ws.id,
      taskId: "mail_1",
      title: "Mail: hello",
      toolset: "mail",
      metadata: {},
      content: "answer the mail",
      systemPrompt: "",
      toolData: {},
      model: null,
      idempotencyKey: "mail_1:attempt:1",
      channel: { channel: "mail", external_id: "mail_1", metadata: { attempt: 1 } },
    });
    expect((await waitForRun(env, sessionId, runId, 10_000)).status).toBe("completed");
    const events = await doEvents(sessionId, ws.id);
    expect(events.find((e) => e.type === "channel_inject")).toMatchObject({ channel: "mail", external_id: "mail_1" });
  });
});

describe("outbound: webhook channels", () => {
  it("a bound session posts each run's result, signed with HMAC-SHA256 of the body", async () => {
    const posts = receiver();
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("the answer")));
    await withChannel(ws);
    const id = await newSession(ws, { channel: "ops" });
    const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content: "question" } });
    expect(res.status).toBe(200);
    await until(() => posts.length === 1, 5_000, "the post");
    const [post] = posts;
    expect(post!.url).toBe("https://hooks.example.com/beaver");
    const body = JSON.parse(post!.body) as { type: string; session_id: string; result: { status: string; output_text: string } };
    expect(body).toMatchObject({
      type: "run_result",
      channel: "ops",
      session_id: id,
      result: { status: "completed", output_text: "the answer" },
    });
    const expected = await hmacSha256Hex("s3cret", post!.body);
    expect(post!.headers.get("X-Beaver-Signature")).toBe(expected);
    expect(post!.headers.get("X-Beaver-Signature-256")).toBe(`sha256=${expected}`);
  });

  it("a failed post is retried after a backoff, by the alarm, also after a restart", async () => {
    const posts = receiver([503, 200]);
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("again")));
    await withChannel(ws);
    const id = await newSession(ws);
    const bound = await call("PATCH", `/api/sessions/${id}`, { token: ws.member, body: { channel: "ops" } });
    expect((await json<{ channel: string }>(bound)).channel).toBe("ops");
    await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content: "q" } });
    await until(() => posts.length === 1, 5_000, "the first post");
    const pending = () =>
      runInDurableObject(stub(id), (_i, state) =>
        state.storage.sql.exec<{ attempts: number; next_at: number }>("SELECT attempts, next_at FROM channel_outbox").toArray(),
      );
    await until(async () => (await pending())[0]?.attempts === 1, 5_000, "the retry to be scheduled");
    expect((await pending())[0]!.next_at).toBeGreaterThan(Date.now() - 1_000);
    await abortAllDurableObjects();
    // Due now: the alarm after the restart delivers it.
    await runInDurableObject(stub(id), (_i, state) => void state.storage.sql.exec("UPDATE channel_outbox SET next_at = 0"));
    await runDurableObjectAlarm(stub(id));
    await until(() => posts.length === 2, 5_000, "the retried post");
    expect(posts[1]!.body).toBe(posts[0]!.body);
    expect(posts[1]!.headers.get("X-Beaver-Delivery-Attempt")).toBe("2");
    await until(async () => (await pending()).length === 0, 5_000, "the outbox to empty");
  });

  it("binding an unknown channel → 422; a bad channel config → 400", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("x")));
    const res = await call("POST", "/api/sessions", { token: ws.member, body: { channel: "nope" } });
    expect(res.status).toBe(422);
    expect((await json<{ error: { message: string } }>(res)).error.message).toContain("nope");
    const bad = await call("PUT", "/api/config", {
      token: ws.admin,
      body: { channels: [{ name: "x", kind: "email", url: "https://a.example", secret_name: "S" }] },
    });
    expect(bad.status).toBe(400);
  });

  it("the backoff grows and is jittered", () => {
    expect(deliveryBackoffMs(1, () => 0)).toBe(500);
    expect(deliveryBackoffMs(1, () => 1)).toBe(1_000);
    expect(deliveryBackoffMs(4, () => 0)).toBe(4_000);
    expect(deliveryBackoffMs(40, () => 1)).toBe(30 * 60_000);
  });
});
