/**
 * The edges of every toolchain HTTP route in one table: no token (401), a token without the scope
 * (403), another workspace's object (404, never 403), and for routes with a body: malformed JSON
 * (400), an unknown field (400 with its path), a wrong content type (415) and an oversize body (413).
 * Nothing a refused request carried may show up afterwards.
 */
import { describe, expect, it } from "vitest";
import { call, json } from "../../support/api.ts";
import { fixture } from "../../support/toolchain-fixtures.ts";
import { deliverOk, getTask, toolchainWorkspace } from "../../support/toolchain-setup.ts";

type Err = { error: { code: string; message: string; details?: { path: string }[] } };
type Scope = "read" | "member" | "admin";

interface Route {
  method: string;
  path: string;
  /** The least scope that may call it. */
  scope: Scope;
  /** A valid body, for routes that take one. */
  body?: Record<string, unknown>;
}

const TOO_BIG = JSON.stringify({ body: "x".repeat(1_100_000) });

async function seeded() {
  const ws = await toolchainWorkspace();
  const { task_ids } = await deliverOk(ws.id, "issue_assign", fixture("issue_assign"));
  const mail = await json<{ id: string }>(
    await call("POST", "/api/mail", {
      token: ws.member,
      body: { from_agent: "boss", to_agent: "jony", performative: "request", subject: "Status?", body: "Where are we?" },
    }),
  );
  const routes: Route[] = [
    { method: "GET", path: "/api/toolchain/deliveries", scope: "read" },
    { method: "GET", path: "/api/toolchain/tasks", scope: "read" },
    { method: "GET", path: `/api/toolchain/tasks/${task_ids[0]}`, scope: "read" },
    {
      method: "POST",
      path: `/api/toolchain/tasks/${task_ids[0]}/comments`,
      scope: "member",
      body: { body: "a note on the task", comment_type: "observation" },
    },
    { method: "POST", path: `/api/toolchain/tasks/${task_ids[0]}/outputs`, scope: "member", body: { content: "plan" } },
    { method: "POST", path: `/api/toolchain/tasks/${task_ids[0]}/cancel`, scope: "member" },
    { method: "POST", path: `/api/toolchain/tasks/${task_ids[0]}/retry`, scope: "member" },
    { method: "POST", path: "/api/toolchain/dispatch", scope: "member" },
    { method: "GET", path: "/api/agents", scope: "read" },
    { method: "GET", path: "/api/agents/jony", scope: "read" },
    { method: "POST", path: "/api/agents", scope: "admin", body: { id: "newbie", gitea_username: "newbie", roles: ["developer"] } },
    { method: "PATCH", path: "/api/agents/jony", scope: "admin", body: { enabled: false } },
    { method: "GET", path: "/api/mail", scope: "read" },
    { method: "GET", path: `/api/mail/${mail.id}`, scope: "read" },
    {
      method: "POST",
      path: "/api/mail",
      scope: "member",
      body: { from_agent: "jony", to_agent: "boss", performative: "inform", subject: "FYI", body: "Done." },
    },
    { method: "POST", path: `/api/mail/${mail.id}/reply`, scope: "member", body: { body: "Almost there." } },
    { method: "POST", path: `/api/mail/${mail.id}/cancel`, scope: "member" },
  ];
  return { ws, taskId: task_ids[0]!, mailId: mail.id, routes };
}

const weaker: Record<Scope, Scope | null> = { read: null, member: "read", admin: "member" };

describe("toolchain, agents and mail routes: authentication and scopes", () => {
  it("answer 401 without a token and 403 with a token of a weaker scope, and change nothing", async () => {
    const { ws, taskId, mailId, routes } = await seeded();
    for (const r of routes) {
      const anonymous = await call(r.method, r.path, { token: null, body: r.body });
      expect(anonymous.status, `${r.method} ${r.path} without a token`).toBe(401);
      const weak = weaker[r.scope];
      if (!weak) continue;
      const refused = await call(r.method, r.path, { token: ws[weak], body: r.body });
      expect(refused.status, `${r.method} ${r.path} as ${weak}`).toBe(403);
      expect((await json<Err>(refused)).error.code).toBe("forbidden");
    }
    const task = await getTask(ws.read, taskId);
    expect(task.task.status).toBe("pending");
    expect(task.comments).toEqual([]);
    expect(task.outputs).toEqual([]);
    expect(
      (await json<{ agents: { id: string; enabled: boolean }[] }>(await call("GET", "/api/agents", { token: ws.read }))).agents.find(
        (a) => a.id === "jony",
      )?.enabled,
    ).toBe(true);
    expect(
      (await json<{ mail: { status: string }; replies: unknown[] }>(await call("GET", `/api/mail/${mailId}`, { token: ws.read }))).mail
        .status,
    ).toBe("pending");
  });
});

describe("toolchain, agents and mail routes: another workspace", () => {
  it("sees 404 for every object of this one (never 403), with any scope, and changes nothing", async () => {
    const { ws, taskId, mailId, routes } = await seeded();
    const other = await toolchainWorkspace();
    const objectRoutes = routes.filter((r) => r.path.includes(taskId) || r.path.includes(mailId));
    expect(objectRoutes).toHaveLength(8);
    for (const r of objectRoutes) {
      const res = await call(r.method, r.path, { token: other.admin, body: r.body });
      expect(res.status, `${r.method} ${r.path}`).toBe(404);
      expect((await json<Err>(res)).error.code).toBe("not_found");
    }
    // Lists only show the caller's own.
    const deliveries = await json<{ deliveries: unknown[] }>(await call("GET", "/api/toolchain/deliveries", { token: other.read }));
    expect(deliveries.deliveries).toEqual([]);
    expect((await json<{ mail: unknown[] }>(await call("GET", "/api/mail", { token: other.read }))).mail).toEqual([]);
    // A reply may not point into another workspace either.
    const reply = await call("POST", "/api/mail", {
      token: other.member,
      body: { from_agent: "jony", to_agent: "boss", performative: "inform", subject: "Re", body: "x", in_reply_to: mailId },
    });
    expect(reply.status).toBe(404);
    // Agents share ids across workspaces, but a change in one never touches the other.
    expect((await call("PATCH", "/api/agents/jony", { token: other.admin, body: { enabled: false } })).status).toBe(200);
    expect((await json<{ enabled: boolean }>(await call("GET", "/api/agents/jony", { token: ws.read }))).enabled).toBe(true);
    const task = await getTask(ws.read, taskId);
    expect(task.task.status).toBe("pending");
    expect(task.comments).toEqual([]);
    expect(
      (await json<{ mail: { status: string }; replies: unknown[] }>(await call("GET", `/api/mail/${mailId}`, { token: ws.read }))).replies,
    ).toEqual([]);
  });
});

describe("toolchain, agents and mail routes: bad bodies", () => {
  it("answer 400 for malformed JSON and unknown fields, 415 for a wrong content type, 413 when oversize", async () => {
    const { ws, taskId, mailId, routes } = await seeded();
    for (const r of routes.filter((x) => x.body)) {
      const token = ws.admin;
      const where = `${r.method} ${r.path}`;
      const malformed = await call(r.method, r.path, { token, rawBody: '{"body": ', headers: { "Content-Type": "application/json" } });
      expect(malformed.status, `${where} malformed`).toBe(400);
      const unknown = await call(r.method, r.path, { token, body: { ...r.body, surprise: true } });
      expect(unknown.status, `${where} unknown field`).toBe(400);
      expect(
        (await json<Err>(unknown)).error.details?.map((d) => d.path),
        `${where} unknown field`,
      ).toContain("surprise");
      const text = await call(r.method, r.path, { token, rawBody: JSON.stringify(r.body), headers: { "Content-Type": "text/plain" } });
      expect(text.status, `${where} text/plain`).toBe(415);
      const big = await call(r.method, r.path, { token, rawBody: TOO_BIG, headers: { "Content-Type": "application/json" } });
      expect(big.status, `${where} oversize`).toBe(413);
      expect((await json<Err>(big)).error.code).toBe("payload_too_large");
    }
    const task = await getTask(ws.read, taskId);
    expect(task.comments).toEqual([]);
    expect(task.outputs).toEqual([]);
    const agents = await json<{ agents: { id: string; enabled: boolean }[] }>(await call("GET", "/api/agents", { token: ws.read }));
    expect(agents.agents.map((a) => a.id)).not.toContain("newbie");
    expect(agents.agents.find((a) => a.id === "jony")?.enabled).toBe(true);
    expect((await json<{ replies: unknown[] }>(await call("GET", `/api/mail/${mailId}`, { token: ws.read }))).replies).toEqual([]);
    expect((await json<{ mail: unknown[] }>(await call("GET", "/api/mail", { token: ws.read }))).mail).toHaveLength(1);
  });
});
