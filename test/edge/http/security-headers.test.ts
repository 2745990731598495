// Security headers of the API's answers (src/edge/http/security-headers.ts, docs/console.md "Headers").
import { describe, expect, it } from "vitest";
import { call, newWorkspace } from "../../support/api.ts";

describe("API security headers", () => {
  it("an authenticated JSON answer: nosniff, no-referrer, no framing, no-store", async () => {
    const ws = await newWorkspace();
    const res = await call("GET", "/api/sessions", { token: ws.read });
    expect(res.status).toBe(200);
    expect(res.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(res.headers.get("Referrer-Policy")).toBe("no-referrer");
    expect(res.headers.get("Content-Security-Policy")).toContain("frame-ancestors 'none'");
    expect(res.headers.get("Cache-Control")).toBe("no-store");
  });
  it("errors and public answers get them too; an unauthenticated answer is not marked no-store", async () => {
    const denied = await call("GET", "/api/sessions", { token: null });
    expect(denied.status).toBe(401);
    expect(denied.headers.get("X-Content-Type-Options")).toBe("nosniff");
    const ping = await call("GET", "/api/ping", { token: null });
    expect(ping.headers.get("X-Content-Type-Options")).toBe("nosniff");
    expect(ping.headers.get("Cache-Control")).toBeNull();
    const missing = await call("GET", "/api/nowhere");
    expect(missing.status).toBe(404);
    expect(missing.headers.get("Cache-Control")).toBe("no-store");
  });
});
