import { describe, expect, it } from "vitest";
import { call, json } from "../../support/api.ts";
import { createApp } from "../../../src/edge/http/app.ts";

describe("OpenAPI document", () => {
  it("is served without a token as OpenAPI 3.1 and lists the routes", async () => {
    const res = await call("GET", "/api/openapi.json", { token: null });
    expect(res.status).toBe(200);
    const doc = await json<{ openapi: string; paths: Record<string, unknown> }>(res);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/ping", "/api/tokens", "/api/config", "/api/secrets/{name}"]));
  });

  it("lists every /api route the app serves, with its method", async () => {
    const doc = await json<{ paths: Record<string, Record<string, unknown>> }>(await call("GET", "/api/openapi.json", { token: null }));
    const documented = new Set(
      Object.entries(doc.paths).flatMap(([path, ops]) => Object.keys(ops).map((method) => `${method.toUpperCase()} ${path}`)),
    );
    const served = createApp()
      .routes.filter((r) => r.method !== "ALL" && r.path.startsWith("/api/") && r.path !== "/api/openapi.json")
      .map((r) => `${r.method} ${r.path.replace(/\/$/, "").replace(/:([A-Za-z_]+)/g, "{$1}")}`);
    expect(served.length).toBeGreaterThan(30);
    expect(served.filter((route) => !documented.has(route))).toEqual([]);
  });

  it("answers unknown routes with a JSON 404", async () => {
    const res = await call("GET", "/api/nothing-here");
    expect(res.status).toBe(404);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("not_found");
  });
});
