/**
 * CORS (docs/cors.md): off unless `BEAVER_CORS_ORIGINS` lists origins; a listed origin gets its
 * preflight answered without a token and its answers readable (exposed headers, no credentials); an
 * unlisted one gets no CORS headers. The app is called in-process with the variable set per test
 * (the Worker's own environment leaves it unset, i.e. off).
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createApp } from "../../../src/edge/http/app.ts";
import { parseCorsOrigins } from "../../../src/edge/http/cors.ts";
import { call } from "../../support/api.ts";
import type { Env } from "../../../src/storage/env.ts";

const APP = "https://app.example.com";

function request(path: string, init: RequestInit, origins: string | undefined): Promise<Response> {
  const vars: Env = { ...(env as unknown as Env), BEAVER_CORS_ORIGINS: origins };
  return Promise.resolve(createApp().request(`https://beaver.test${path}`, init, vars));
}

const preflight = (origin: string, method = "POST", headers = "authorization,content-type") => ({
  method: "OPTIONS",
  headers: { Origin: origin, "Access-Control-Request-Method": method, "Access-Control-Request-Headers": headers },
});

describe("CORS", () => {
  it("is off by default: no CORS headers, and a preflight is no answer a browser accepts", async () => {
    const res = await call("GET", "/api/ping", { token: null, headers: { Origin: APP } });
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBeNull();
    const pre = await request("/v1/chat/completions", preflight(APP), undefined);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBeNull();
    expect(pre.headers.get("Access-Control-Allow-Methods")).toBeNull();
    const blank = await request("/api/ping", { headers: { Origin: APP } }, " , ");
    expect(blank.headers.get("Access-Control-Allow-Origin")).toBeNull();
  });

  it("answers a listed origin's preflight without a token, and its real requests with the origin and exposed headers", async () => {
    const origins = `https://other.example, ${APP}/`;
    const pre = await request("/v1/chat/completions", preflight(APP, "POST", "authorization,content-type,x-stainless-lang"), origins);
    expect(pre.status).toBe(204);
    expect(pre.headers.get("Access-Control-Allow-Origin")).toBe(APP);
    expect(pre.headers.get("Access-Control-Allow-Methods")).toContain("POST");
    expect(pre.headers.get("Access-Control-Allow-Headers")).toBe("authorization,content-type,x-stainless-lang");
    expect(pre.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(pre.headers.get("Vary")).toContain("Origin");

    const res = await request("/api/sessions", { headers: { Origin: APP, Authorization: "Bearer test-admin-token" } }, origins);
    expect(res.status).toBe(200);
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(APP);
    const exposed = (res.headers.get("Access-Control-Expose-Headers") ?? "").split(",");
    expect(exposed).toEqual(expect.arrayContaining(["X-Request-Id", "Retry-After", "X-Beaver-Session-Id"]));
    expect(res.headers.get("Access-Control-Allow-Credentials")).toBeNull();
    expect(res.headers.get("Vary")).toContain("Origin");

    // Errors are readable too (a browser app must see why it got 401).
    const denied = await request("/v1/models", { headers: { Origin: APP } }, origins);
    expect(denied.status).toBe(401);
    expect(denied.headers.get("Access-Control-Allow-Origin")).toBe(APP);
  });

  it("keeps streams working for an allowed origin: a session's SSE stream answers with the CORS headers", async () => {
    const created = await call("POST", "/api/sessions", { body: {} });
    const { id } = (await created.json()) as { id: string };
    const res = await request(
      `/api/sessions/${id}/stream?last_seq=0`,
      { headers: { Origin: APP, Authorization: "Bearer test-admin-token" } },
      APP,
    );
    expect(res.status).toBe(200);
    expect(res.headers.get("Content-Type")).toContain("text/event-stream");
    expect(res.headers.get("Access-Control-Allow-Origin")).toBe(APP);
    const reader = res.body!.getReader();
    const first = new TextDecoder().decode((await reader.read()).value);
    expect(first).toContain(": connected");
    await reader.cancel();
  });

  it("refuses an origin not listed: no Access-Control-Allow-Origin, on the preflight or the request", async () => {
    const origins = APP;
    for (const origin of ["https://evil.example", "https://app.example.com.evil.example", "http://app.example.com"]) {
      const pre = await request("/v1/chat/completions", preflight(origin), origins);
      expect(pre.headers.get("Access-Control-Allow-Origin"), origin).toBeNull();
      const res = await request("/api/ping", { headers: { Origin: origin } }, origins);
      expect(res.status, origin).toBe(200);
      expect(res.headers.get("Access-Control-Allow-Origin"), origin).toBeNull();
    }
  });

  it("reads the variable strictly: exact origins only, a malformed entry is the operator's error", async () => {
    expect(parseCorsOrigins(undefined)).toEqual([]);
    expect(parseCorsOrigins("https://A.example:8443/, http://localhost:5173")).toEqual(["https://a.example:8443", "http://localhost:5173"]);
    for (const bad of ["*", "app.example.com", "https://app.example.com/path", "ftp://x.example"]) {
      expect(() => parseCorsOrigins(bad), bad).toThrow(/BEAVER_CORS_ORIGINS/);
    }
    const res = await request("/api/ping", { headers: { Origin: APP } }, "*");
    expect(res.status).toBe(500);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe("server_misconfigured");
  });
});
