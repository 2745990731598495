import { describe, expect, it } from "vitest";
import { call, json } from "../helpers/api.ts";

describe("OpenAPI document", () => {
  it("is served without a token as OpenAPI 3.1 and lists the routes", async () => {
    const res = await call("GET", "/api/openapi.json", { token: null });
    expect(res.status).toBe(200);
    const doc = await json<{ openapi: string; paths: Record<string, unknown> }>(res);
    expect(doc.openapi).toBe("3.1.0");
    expect(Object.keys(doc.paths)).toEqual(expect.arrayContaining(["/api/ping", "/api/tokens", "/api/config", "/api/secrets/{name}"]));
  });

  it("answers unknown routes with a JSON 404", async () => {
    const res = await call("GET", "/api/nothing-here");
    expect(res.status).toBe(404);
    expect((await json<{ error: { code: string } }>(res)).error.code).toBe("not_found");
  });
});
