/**
 * Workspace secrets over HTTP and `resolveSecret`: encrypted at rest, names only in listings, kept per
 * workspace, and Worker secrets lent only as the operator lists them (README, Worker secrets;
 * vitest.config.ts binds SINGLE_TENANT_KEY lent to `default` and `ws-shared-keys`, OPERATOR_ONLY_KEY lent to nobody).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { resolveSecret } from "../../../src/storage/secrets/store.ts";
import { fetchSource } from "../../../src/domains/governance/plugin-sources.ts";

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

  it("keeps workspaces apart", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await call("PUT", "/api/secrets/SHARED", { token: a.admin, body: { value: "a-only" } });
    expect(await resolveSecret(env, b.id, "SHARED")).toBeUndefined();
    expect((await json<{ secrets: unknown[] }>(await call("GET", "/api/secrets", { token: b.admin }))).secrets).toEqual([]);
  });

  it("lends a Worker secret only when both its name and the workspace are listed, and never a BEAVER_ one", async () => {
    const listed = await newWorkspace("ws-shared-keys");
    const other = await newWorkspace();
    // Listed name, listed workspaces (`default` and ws-shared-keys): lent.
    expect(await resolveSecret(env, listed.id, "SINGLE_TENANT_KEY")).toBe("from-worker-env");
    expect(await resolveSecret(env, "default", "SINGLE_TENANT_KEY")).toBe("from-worker-env");
    // Listed name, unlisted workspace: not lent.
    expect(await resolveSecret(env, other.id, "SINGLE_TENANT_KEY")).toBeUndefined();
    // A Worker var that exists but is not listed: lent to nobody, answered like a name no var has.
    for (const ws of [listed.id, "default", other.id]) {
      expect(await resolveSecret(env, ws, "OPERATOR_ONLY_KEY")).toBeUndefined();
      expect(await resolveSecret(env, ws, "NO_SUCH_VAR_ANYWHERE")).toBeUndefined();
      // BEAVER_ADMIN_TOKEN is listed in BEAVER_SHARED_SECRETS here, and still never lent.
      expect(await resolveSecret(env, ws, "BEAVER_ADMIN_TOKEN")).toBeUndefined();
      expect(await resolveSecret(env, ws, "BEAVER_SECRETS_KEY")).toBeUndefined();
    }
    // The workspace's own secret wins over the lent one.
    await call("PUT", "/api/secrets/SINGLE_TENANT_KEY", { token: listed.admin, body: { value: "own-value" } });
    expect(await resolveSecret(env, listed.id, "SINGLE_TENANT_KEY")).toBe("own-value");
  });

  it("lends to `default` only when BEAVER_SHARED_SECRETS_WORKSPACES is unset, and nothing when BEAVER_SHARED_SECRETS is", async () => {
    const listed = await newWorkspace("ws-shared-keys-2");
    const { BEAVER_SHARED_SECRETS_WORKSPACES: _w, ...defaultWorkspaces } = env;
    const onlyListed = { ...defaultWorkspaces, BEAVER_SHARED_SECRETS_WORKSPACES: listed.id };
    expect(await resolveSecret(defaultWorkspaces, "default", "SINGLE_TENANT_KEY")).toBe("from-worker-env");
    expect(await resolveSecret(defaultWorkspaces, listed.id, "SINGLE_TENANT_KEY")).toBeUndefined();
    expect(await resolveSecret(onlyListed, listed.id, "SINGLE_TENANT_KEY")).toBe("from-worker-env");
    expect(await resolveSecret(onlyListed, "default", "SINGLE_TENANT_KEY")).toBeUndefined();
    const { BEAVER_SHARED_SECRETS: _s, ...nothingShared } = env;
    expect(await resolveSecret(nothingShared, "default", "SINGLE_TENANT_KEY")).toBeUndefined();
    expect(await resolveSecret({ ...env, BEAVER_SHARED_SECRETS: "" }, "default", "SINGLE_TENANT_KEY")).toBeUndefined();
  });

  it("a Gitea token secret naming an unlent Worker var sends no token", async () => {
    const b = await newWorkspace();
    const config = { toolchain: { gitea_base_url: "https://gitea.test/", gitea_token_secret: "OPERATOR_ONLY_KEY" } };
    expect((await call("PUT", "/api/config", { token: b.admin, body: config })).status).toBe(200);
    expect((await call("PUT", "/api/plugins/sources/src", { token: b.admin, body: { owner: "o", repo: "r" } })).status).toBe(200);
    const sent: string[] = [];
    const fetchImpl = async (input: RequestInfo | URL, init?: RequestInit) => {
      const req = new Request(input, init);
      sent.push(`${req.url} ${[...req.headers].map(([k, v]) => `${k}: ${v}`).join("; ")}`);
      return new Response('{"message":"not found"}', { status: 404 });
    };
    await fetchSource(env, b.id, "src", { actor: "t", fetchImpl });
    expect(sent).toHaveLength(1);
    expect(sent[0]).not.toContain(env.OPERATOR_ONLY_KEY);
    expect(sent[0]).not.toMatch(/authorization/i);
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
