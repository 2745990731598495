/**
 * The per-isolate token cache (src/edge/http/token-cache.ts; docs/performance.md, "Token cache"): a
 * lookup is reused for at most TOKEN_CACHE_TTL_MS, a revocation on this isolate takes effect at once,
 * and a revocation elsewhere (straight in D1, as another isolate would) within the TTL.
 */
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";
import { TOKEN_CACHE_TTL_MS, cachedPrincipal, forgetToken, rememberPrincipal } from "../../../src/edge/http/token-cache.ts";
import { principalForToken } from "../../../src/edge/http/auth.ts";
import { sha256Hex } from "../../../src/kernel/hash.ts";
import type { Principal } from "../../../src/edge/http/context.ts";

const principal = (tokenId: string): Principal => ({ workspaceId: "w", tokenId, scopes: ["read"], bootstrap: false });

describe("token cache", () => {
  it("keeps a lookup until its TTL, and forgets a token by id", () => {
    rememberPrincipal("hash-a", principal("tok_a"), 1_000);
    rememberPrincipal("hash-b", principal("tok_b"), 1_000);
    expect(cachedPrincipal("hash-a", 1_000 + TOKEN_CACHE_TTL_MS - 1)?.tokenId).toBe("tok_a");
    expect(cachedPrincipal("hash-a", 1_000 + TOKEN_CACHE_TTL_MS)).toBeUndefined();
    forgetToken("tok_b");
    expect(cachedPrincipal("hash-b", 1_001)).toBeUndefined();
  });

  it("a token revoked through the API stops working on this isolate at once, though it was just used", async () => {
    const ws = await newWorkspace();
    const created = await json<{ id: string; token: string }>(
      await call("POST", "/api/tokens", { token: ws.admin, body: { name: "temp", scopes: ["read"] } }),
    );
    for (let i = 0; i < 3; i++) expect((await call("GET", "/api/config", { token: created.token })).status).toBe(200);
    expect((await call("DELETE", `/api/tokens/${created.id}`, { token: ws.admin })).status).toBe(200);
    expect((await call("GET", "/api/config", { token: created.token })).status).toBe(401);
  });

  it("a token revoked elsewhere (in D1 only) is refused once its cached lookup expires", async () => {
    const ws = await newWorkspace();
    const created = await json<{ id: string; token: string }>(
      await call("POST", "/api/tokens", { token: ws.admin, body: { name: "temp", scopes: ["read"] } }),
    );
    expect((await principalForToken(env, created.token))?.tokenId).toBe(created.id);
    await env.DB.prepare("UPDATE api_tokens SET revoked_at = ? WHERE id = ?").bind(Date.now(), created.id).run();
    // Another isolate revoked it: this one may still accept it, but never past the TTL.
    expect(cachedPrincipal(await sha256Hex(created.token), Date.now() + TOKEN_CACHE_TTL_MS)).toBeUndefined();
    expect(await principalForToken(env, created.token)).toBeNull();
  });
});
