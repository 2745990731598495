import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";

describe("authentication and scopes", () => {
  it("ping needs no token and touches nothing", async () => {
    const res = await call("GET", "/api/ping", { token: null });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: "ok", service: "beaver" });
  });

  it("rejects a missing or unknown token with 401 and the error shape", async () => {
    const missing = await call("GET", "/api/config", { token: null });
    expect(missing.status).toBe(401);
    expect(await json(missing)).toEqual({ error: { code: "unauthorized", message: expect.any(String) } });
    const wrong = await call("GET", "/api/config", { token: "bvr_nope" });
    expect(wrong.status).toBe(401);
  });

  it("creates tokens whose secret is shown once and stored only as a hash", async () => {
    const ws = await newWorkspace();
    const list = await json<{ tokens: Record<string, unknown>[] }>(await call("GET", "/api/tokens", { token: ws.admin }));
    expect(list.tokens).toHaveLength(3);
    for (const t of list.tokens) {
      expect(t).not.toHaveProperty("token");
      expect(JSON.stringify(t)).not.toContain(ws.admin);
    }
  });

  it("enforces scopes: read cannot write config, member cannot manage tokens", async () => {
    const ws = await newWorkspace();
    expect((await call("GET", "/api/config", { token: ws.read })).status).toBe(200);
    const put = await call("PUT", "/api/config", { token: ws.read, body: {} });
    expect(put.status).toBe(403);
    expect((await json<{ error: { code: string } }>(put)).error.code).toBe("forbidden");
    expect((await call("GET", "/api/tokens", { token: ws.member })).status).toBe(403);
  });

  it("revoked tokens stop working", async () => {
    const ws = await newWorkspace();
    const created = await json<{ id: string; token: string }>(
      await call("POST", "/api/tokens", { token: ws.admin, body: { name: "temp", scopes: ["read"] } }),
    );
    expect((await call("GET", "/api/config", { token: created.token })).status).toBe(200);
    expect((await call("DELETE", `/api/tokens/${created.id}`, { token: ws.admin })).status).toBe(200);
    expect((await call("GET", "/api/config", { token: created.token })).status).toBe(401);
  });

  it("a workspace admin cannot see or revoke another workspace's token (404) or create workspaces (403)", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    const bTokens = await json<{ tokens: { id: string }[] }>(await call("GET", "/api/tokens", { token: b.admin }));
    const victim = bTokens.tokens[0]!.id;
    expect((await call("DELETE", `/api/tokens/${victim}`, { token: a.admin })).status).toBe(404);
    expect((await call("GET", `/api/tokens?workspace_id=${b.id}`, { token: a.admin })).status).toBe(403);
    expect((await call("POST", "/api/workspaces", { token: a.admin, body: { id: "zz-new", name: "x" } })).status).toBe(403);
  });

  it("rejects duplicate workspaces with 409", async () => {
    const ws = await newWorkspace();
    const res = await call("POST", "/api/workspaces", { body: { id: ws.id, name: "again" } });
    expect(res.status).toBe(409);
  });
});
