import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { resolveSecret } from "../../../src/storage/secrets/store.ts";

describe("secrets", () => {
  it("stores values encrypted, lists names only, resolves and deletes", async () => {
    const ws = await newWorkspace();
    const value = "sk-very-secret-value-123";
    const put = await call("PUT", "/api/secrets/OPENAI_KEY", { token: ws.admin, body: { value } });
    expect(put.status).toBe(200);
    expect(await put.text()).not.toContain(value);

    const row = await env.DB.prepare("SELECT ciphertext, iv FROM secrets WHERE workspace_id = ? AND name = ?")
      .bind(ws.id, "OPENAI_KEY")
      .first<{ ciphertext: string; iv: string }>();
    expect(row?.ciphertext).toBeTruthy();
    expect(row?.ciphertext).not.toContain(value);
    expect(atob(row!.ciphertext)).not.toContain(value);

    const listRes = await call("GET", "/api/secrets", { token: ws.admin });
    const listText = await listRes.text();
    expect(listText).not.toContain(value);
    expect(JSON.parse(listText).secrets).toEqual([{ name: "OPENAI_KEY", created_at: expect.any(Number), updated_at: expect.any(Number) }]);

    expect(await resolveSecret(env, ws.id, "OPENAI_KEY")).toBe(value);
    expect((await call("DELETE", "/api/secrets/OPENAI_KEY", { token: ws.admin })).status).toBe(200);
    expect((await call("DELETE", "/api/secrets/OPENAI_KEY", { token: ws.admin })).status).toBe(404);
    expect(await resolveSecret(env, ws.id, "OPENAI_KEY")).toBeUndefined();
  });

  it("keeps workspaces apart and falls back to Worker vars, never to BEAVER_ ones", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await call("PUT", "/api/secrets/SHARED", { token: a.admin, body: { value: "a-only" } });
    expect(await resolveSecret(env, b.id, "SHARED")).toBeUndefined();
    expect((await json<{ secrets: unknown[] }>(await call("GET", "/api/secrets", { token: b.admin }))).secrets).toEqual([]);
    expect(await resolveSecret(env, b.id, "SINGLE_TENANT_KEY")).toBe("from-worker-env");
    expect(await resolveSecret(env, b.id, "BEAVER_ADMIN_TOKEN")).toBeUndefined();
  });

  it("a ciphertext copied to another workspace does not decrypt", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await call("PUT", "/api/secrets/K", { token: a.admin, body: { value: "v" } });
    await env.DB.prepare(
      "INSERT INTO secrets (workspace_id, name, ciphertext, iv, created_at, updated_at) SELECT ?, name, ciphertext, iv, created_at, updated_at FROM secrets WHERE workspace_id = ? AND name = 'K'",
    )
      .bind(b.id, a.id)
      .run();
    await expect(resolveSecret(env, b.id, "K")).rejects.toThrow();
  });

  it("validates secret names and needs admin", async () => {
    const ws = await newWorkspace();
    expect((await call("PUT", "/api/secrets/bad-name", { token: ws.admin, body: { value: "x" } })).status).toBe(400);
    expect((await call("PUT", "/api/secrets/OK", { token: ws.member, body: { value: "x" } })).status).toBe(403);
    expect((await call("PUT", "/api/secrets/OK", { token: ws.admin, body: { value: "x", extra: 1 } })).status).toBe(400);
  });
});
