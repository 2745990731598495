// The seed's session lifecycle events (docs/extensions.md, "Lifecycle events"; issue 20 item 7): `session_start`
// when a session is created and `session_end` when it is closed or deleted, to extension subscribers and live streams.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { StreamFrame } from "../../../src/runtime/session/events.ts";
import { createSession } from "../../../src/runtime/session/service.ts";
import { call } from "../../support/api.ts";
import { testServices } from "../../support/test-services.ts";
import { ScriptedModel, readSse, scriptedWorkspace, text, until } from "../../support/sessions.ts";

afterEach(() => {
  testServices.extensions = [];
});

/** An extension that records every lifecycle frame it is told about, with the session it came from. */
function recorder() {
  const seen: { type: string; session: string; reason?: string; run_id: string | null }[] = [];
  testServices.extensions = [
    {
      name: "lifecycle-recorder",
      onEvent: (frame: StreamFrame, ctx) => {
        if (frame.type === "session_start" || frame.type === "session_end")
          seen.push({
            type: frame.type,
            session: ctx.sessionId,
            run_id: frame.run_id,
            ...(frame.type === "session_end" && !frame.persistent ? { reason: frame.reason } : {}),
          });
      },
    },
  ];
  return seen;
}

describe("session lifecycle events", () => {
  it("session_start on create (once: creating it again emits nothing), session_end `closed` on close, to subscribers and live streams", async () => {
    const seen = recorder();
    const ws = await scriptedWorkspace(new ScriptedModel([text("hi")]));
    const session = await createSession(env, { workspaceId: ws.id });
    await until(() => seen.length === 1, 5_000, "session_start");
    expect(seen).toEqual([{ type: "session_start", session: session.id, run_id: null }]);
    expect((await createSession(env, { workspaceId: ws.id, id: session.id })).created).toBe(false);

    const stream = await call("GET", `/api/sessions/${session.id}/stream`, { token: ws.read });
    expect(stream.status).toBe(200);
    const reading = readSse(stream, (f) => f.type === "session_end");
    await new Promise((r) => setTimeout(r, 50));
    expect((await call("POST", `/api/sessions/${session.id}/close`, { token: ws.member })).status).toBe(200);
    const frames = await reading;
    expect(frames.at(-1)).toMatchObject({ persistent: false, type: "session_end", reason: "closed", run_id: null });
    await until(() => seen.length === 2, 5_000, "session_end");
    expect(seen[1]).toEqual({ type: "session_end", session: session.id, run_id: null, reason: "closed" });
    // Closing again changes nothing and says nothing.
    expect((await call("POST", `/api/sessions/${session.id}/close`, { token: ws.member })).status).toBe(200);
    await new Promise((r) => setTimeout(r, 50));
    expect(seen.filter((s) => s.type === "session_start")).toHaveLength(1);
    expect(seen).toHaveLength(2);
  });

  it("session_end `deleted` when an open session is deleted", async () => {
    const seen = recorder();
    const ws = await scriptedWorkspace(new ScriptedModel([text("hi")]));
    const session = await createSession(env, { workspaceId: ws.id });
    expect((await call("DELETE", `/api/sessions/${session.id}`, { token: ws.admin })).status).toBeLessThan(300);
    await until(() => seen.some((s) => s.type === "session_end"), 5_000, "session_end");
    expect(seen.find((s) => s.type === "session_end")).toEqual({
      type: "session_end",
      session: session.id,
      run_id: null,
      reason: "deleted",
    });
  });
});
