/**
 * Every session route against the rules every endpoint keeps: 401 without a valid token, 403 below
 * its scope (and for hidden events without admin), 404 for an unknown session, another workspace's
 * session or another session's run, 400/415 for malformed or mistyped bodies, 413 over the body
 * limit — always in the `{ error: { code, message } }` shape. One table, so a new route is one row.
 */
import { beforeAll, describe, expect, it } from "vitest";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { JSON_BODY_LIMIT } from "../../../src/edge/http/body-limit.ts";
import type { PersistentEvent } from "../../../src/runtime/session/events.ts";
import { ScriptedModel, newSession, scriptedWorkspace, text } from "../../support/sessions.ts";

type Scope = "read" | "member" | "admin";
interface Route {
  method: "GET" | "POST";
  /** `:id` and `:run` are filled in per case. */
  path: string;
  scope: Scope;
  /** A valid body (POST routes that take one). */
  body?: Record<string, unknown>;
}

let ws: TestWorkspace;
let other: TestWorkspace;
let sessionId: string;
let runId: string;
let otherRunId: string;
let firstEventId: string;
let leafEventId: string;

const routes = (): Route[] => [
  { method: "POST", path: "/api/sessions", scope: "member", body: {} },
  { method: "GET", path: "/api/sessions", scope: "read" },
  { method: "GET", path: "/api/sessions/search?q=hello", scope: "read" },
  { method: "GET", path: "/api/sessions/:id", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/events", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/runs", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/runs/:run", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/runs/:run/events", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/context", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/transcript", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/tree", scope: "read" },
  { method: "GET", path: "/api/sessions/:id/stream", scope: "read" },
  { method: "POST", path: "/api/sessions/:id/stream-ticket", scope: "read" },
  { method: "POST", path: "/api/sessions/:id/messages", scope: "member", body: { content: "hello again" } },
  { method: "POST", path: "/api/sessions/:id/rewind", scope: "member", body: { target_event_id: firstEventId } },
  { method: "POST", path: "/api/sessions/:id/branch", scope: "member", body: { leaf_event_id: leafEventId } },
  { method: "POST", path: "/api/sessions/:id/compact", scope: "member", body: {} },
  { method: "POST", path: "/api/sessions/:id/cancel", scope: "member", body: {} },
  { method: "POST", path: "/api/sessions/:id/close", scope: "member" },
  { method: "POST", path: "/api/chat", scope: "member", body: { message: "hello", session_id: ":id" } },
];

const fill = (text: string, id: string, run = runId) => text.replaceAll(":id", id).replaceAll(":run", run);
const bodyFor = (route: Route, id: string) =>
  route.body === undefined ? undefined : (JSON.parse(fill(JSON.stringify(route.body), id)) as Record<string, unknown>);
const sessionRoutes = () => routes().filter((r) => r.path.includes(":id") || r.body?.session_id !== undefined);
const below: Record<Scope, Scope | null> = { read: null, member: "read", admin: "member" };

async function expectError(res: Response, status: number, code: string, what: string): Promise<void> {
  const body = await res.text();
  expect([what, res.status], body).toEqual([what, status]);
  expect(JSON.parse(body), what).toEqual({ error: expect.objectContaining({ code, message: expect.any(String) }) });
}

beforeAll(async () => {
  ws = await scriptedWorkspace(new ScriptedModel((i) => text(`answer ${i}`)));
  other = await newWorkspace();
  sessionId = await newSession(ws);
  const done = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body: { content: "hello" } });
  runId = (await json<{ run_id: string }>(done)).run_id;
  const events = (await json<{ events: PersistentEvent[] }>(await call("GET", `/api/sessions/${sessionId}/events`, { token: ws.read })))
    .events;
  firstEventId = events[0]!.id;
  leafEventId = events.at(-1)!.id;
  const second = await newSession(ws);
  otherRunId = (
    await json<{ run_id: string }>(
      await call("POST", `/api/sessions/${second}/messages?wait=true`, { token: ws.member, body: { content: "elsewhere" } }),
    )
  ).run_id;
});

describe("every session route: authentication and scopes", () => {
  it("401 without a token and with an unknown token", async () => {
    for (const route of routes()) {
      const path = fill(route.path, sessionId);
      const what = `${route.method} ${route.path}`;
      await expectError(
        await call(route.method, path, { token: null, body: bodyFor(route, sessionId) }),
        401,
        "unauthorized",
        `${what} (no token)`,
      );
      await expectError(
        await call(route.method, path, { token: "bvr_unknown", body: bodyFor(route, sessionId) }),
        401,
        "unauthorized",
        `${what} (unknown token)`,
      );
    }
  });

  it("403 for a token below the route's scope", async () => {
    const checked = routes().filter((r) => below[r.scope] !== null);
    expect(checked.length).toBeGreaterThan(6);
    for (const route of checked) {
      const res = await call(route.method, fill(route.path, sessionId), {
        token: ws[below[route.scope]!],
        body: bodyFor(route, sessionId),
      });
      await expectError(res, 403, "forbidden", `${route.method} ${route.path} as ${below[route.scope]}`);
    }
  });

  it("403 for hidden events without admin, on every route that can show them", async () => {
    for (const path of ["/api/sessions/:id/events", "/api/sessions/:id/runs/:run/events", "/api/sessions/:id/stream"]) {
      for (const token of [ws.read, ws.member]) {
        await expectError(
          await call("GET", `${fill(path, sessionId)}?include_hidden=true`, { token }),
          403,
          "forbidden",
          `${path} include_hidden`,
        );
      }
    }
  });
});

describe("every session route: 404 without an existence leak", () => {
  it("for another workspace's session, even as that workspace's admin", async () => {
    for (const route of sessionRoutes()) {
      const res = await call(route.method, fill(route.path, sessionId), { token: other.admin, body: bodyFor(route, sessionId) });
      await expectError(res, 404, "not_found", `${route.method} ${route.path}`);
    }
  });

  it("for a session that does not exist", async () => {
    for (const route of sessionRoutes()) {
      const res = await call(route.method, fill(route.path, "ses_missing"), { token: ws.admin, body: bodyFor(route, "ses_missing") });
      await expectError(res, 404, "not_found", `${route.method} ${route.path}`);
    }
  });

  it("for a run of another session of the same workspace", async () => {
    for (const path of ["/api/sessions/:id/runs/:run", "/api/sessions/:id/runs/:run/events"]) {
      await expectError(await call("GET", fill(path, sessionId, otherRunId), { token: ws.admin }), 404, "not_found", path);
    }
  });
});

describe("every session route with a body: bad input", () => {
  const withBody = () => routes().filter((r) => r.body !== undefined);

  it("400 malformed_json for broken JSON", async () => {
    for (const route of withBody()) {
      const res = await call(route.method, fill(route.path, sessionId), {
        token: ws.admin,
        rawBody: '{"content": ',
        headers: { "Content-Type": "application/json" },
      });
      await expectError(res, 400, "malformed_json", `${route.method} ${route.path}`);
    }
  });

  it("400 naming the field for an unknown field or a wrong type", async () => {
    for (const route of withBody()) {
      const what = `${route.method} ${route.path}`;
      const unknown = await call(route.method, fill(route.path, sessionId), {
        token: ws.admin,
        body: { ...bodyFor(route, sessionId), colour: "red" },
      });
      expect([what, unknown.status]).toEqual([what, 400]);
      expect((await json<{ error: { details: { path: string }[] } }>(unknown)).error.details, what).toEqual([
        expect.objectContaining({ path: "colour" }),
      ]);
      const [field] = Object.keys(route.body!);
      if (field === undefined) continue;
      const wrongType = await call(route.method, fill(route.path, sessionId), {
        token: ws.admin,
        body: { ...bodyFor(route, sessionId), [field]: 42 },
      });
      expect([what, wrongType.status]).toEqual([what, 400]);
      expect((await json<{ error: { details: { path: string }[] } }>(wrongType)).error.details, what).toEqual([
        expect.objectContaining({ path: field }),
      ]);
    }
  });

  it("415 for a body that is not JSON", async () => {
    for (const route of withBody().filter((r) => r.path !== "/api/sessions/:id/cancel")) {
      const res = await call(route.method, fill(route.path, sessionId), {
        token: ws.admin,
        rawBody: "content=x",
        headers: { "Content-Type": "text/plain" },
      });
      await expectError(res, 415, "unsupported_media_type", `${route.method} ${route.path}`);
    }
  });

  it("413 for a body over the JSON limit, on every POST route", async () => {
    const huge = JSON.stringify({ content: "x".repeat(JSON_BODY_LIMIT) });
    for (const route of routes().filter((r) => r.method === "POST")) {
      const res = await call(route.method, fill(route.path, sessionId), {
        token: ws.admin,
        rawBody: huge,
        headers: { "Content-Type": "application/json" },
      });
      await expectError(res, 413, "payload_too_large", `${route.method} ${route.path}`);
    }
  });
});
