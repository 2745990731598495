import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";

type Err = { error: { code: string; message: string; details?: { path: string; message: string }[] } };

describe("workspace configuration", () => {
  it("returns defaults, then saves and returns a valid config", async () => {
    const ws = await newWorkspace();
    const before = await json(await call("GET", "/api/config", { token: ws.read }));
    expect(before).toMatchObject({ runtime: { max_tool_iterations: 8, timezone: "UTC" } });
    const body = {
      model: { provider: "openai-compatible", id: "m1", base_url: "https://llm.example.com/v1", api_key_secret: "MY_KEY" },
      runtime: { max_tool_iterations: 3, timezone: "Europe/Berlin" },
    };
    const put = await call("PUT", "/api/config", { token: ws.admin, body });
    expect(put.status).toBe(200);
    const after = await json(await call("GET", "/api/config", { token: ws.read }));
    expect(after).toMatchObject(body);
  });

  it("rejects unknown keys at any depth, naming the key path", async () => {
    const ws = await newWorkspace();
    const top = await call("PUT", "/api/config", { token: ws.admin, body: { sessionsDir: "/tmp/nope" } });
    expect(top.status).toBe(400);
    const topErr = await json<Err>(top);
    expect(topErr.error.code).toBe("validation_failed");
    expect(topErr.error.message).toContain("sessionsDir");
    const deep = await call("PUT", "/api/config", { token: ws.admin, body: { runtime: { max_tool_iterations: 2, nope: 1 } } });
    const deepErr = await json<Err>(deep);
    expect(deep.status).toBe(400);
    expect(deepErr.error.details?.[0]?.path).toBe("runtime.nope");
  });

  it("rejects wrong types and bad values with the field path", async () => {
    const ws = await newWorkspace();
    const res = await call("PUT", "/api/config", { token: ws.admin, body: { model: { provider: "nope", id: "x" } } });
    expect(res.status).toBe(400);
    expect((await json<Err>(res)).error.details?.[0]?.path).toBe("model.provider");
    const tz = await call("PUT", "/api/config", { token: ws.admin, body: { runtime: { timezone: "Mars/Olympus" } } });
    expect((await json<Err>(tz)).error.details?.[0]?.path).toBe("runtime.timezone");
  });

  it("answers malformed JSON with 400 and a wrong content type with 415", async () => {
    const ws = await newWorkspace();
    const bad = await call("PUT", "/api/config", { token: ws.admin, rawBody: "{nope", headers: { "Content-Type": "application/json" } });
    expect(bad.status).toBe(400);
    expect((await json<Err>(bad)).error.code).toBe("malformed_json");
    const text = await call("PUT", "/api/config", { token: ws.admin, rawBody: "x=1", headers: { "Content-Type": "text/plain" } });
    expect(text.status).toBe(415);
  });

  it("answers an oversize body with 413", async () => {
    const ws = await newWorkspace();
    const big = JSON.stringify({ runtime: { system_prompt: "x".repeat(2 * 1024 * 1024) } });
    const res = await call("PUT", "/api/config", { token: ws.admin, rawBody: big, headers: { "Content-Type": "application/json" } });
    expect(res.status).toBe(413);
    expect((await json<Err>(res)).error.code).toBe("payload_too_large");
  });
});
