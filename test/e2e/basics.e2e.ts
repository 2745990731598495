import { describe, expect, it } from "vitest";
import { api, newWorkspace } from "./client.ts";

describe("wrangler dev: basics", () => {
  it("answers ping without a token and 401 without one elsewhere", async () => {
    const ping = await api("GET", "/api/ping", { token: null });
    expect(ping.status).toBe(200);
    expect(await ping.json()).toMatchObject({ status: "ok" });
    expect((await api("GET", "/api/config", { token: null })).status).toBe(401);
  });

  it("creates a workspace and a token that works there and nowhere else", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    const put = await api("PUT", "/api/config", { token: a.token, body: { runtime: { timezone: "Asia/Tokyo" } } });
    expect(put.status).toBe(200);
    const readA = (await (await api("GET", "/api/config", { token: a.token })).json()) as { runtime: { timezone: string } };
    const readB = (await (await api("GET", "/api/config", { token: b.token })).json()) as { runtime: { timezone: string } };
    expect(readA.runtime.timezone).toBe("Asia/Tokyo");
    expect(readB.runtime.timezone).toBe("UTC");
    // zod's English messages and the OpenAPI document, from the bundle that leaves zod's other locales
    // out (wrangler.toml [alias], docs/performance.md "The bundle").
    const bad = await api("PUT", "/api/config", { token: a.token, body: { runtime: { timezone: 5 } } });
    expect(bad.status).toBe(400);
    expect(JSON.stringify(await bad.json())).toMatch(/expected string, received number/);
    const doc = (await (await api("GET", "/api/openapi.json", { token: null })).json()) as { paths: Record<string, unknown> };
    expect(Object.keys(doc.paths)).toContain("/api/config");
  });
});
