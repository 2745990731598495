/**
 * A workspace secret used as a model's API key never comes back out: not in HTTP answers, stream
 * frames, stored events (hidden ones included), run results or logs — even when the provider's
 * error message echoes the key. The provider is the real openai-compatible package; the network is
 * a fetch stub that answers 401 with the key in its body, as some servers do. Worker secrets reach a
 * workspace only where the operator lends them (README, Worker secrets; vitest.config.ts lists them).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { call, newWorkspace } from "../../support/api.ts";
import { doEvents, newSession, readSse } from "../../support/sessions.ts";

const KEY = "sk-leaky-secret-0123456789abcdef";

afterEach(() => vi.restoreAllMocks());

describe("secret values in runs", () => {
  it("never appear in responses, stream frames, events, results or logs", async () => {
    const logged: string[] = [];
    for (const level of ["log", "info", "warn", "error", "debug"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => {
        logged.push(
          args.map((a) => (a instanceof Error ? `${a.message} ${a.stack ?? ""}` : typeof a === "string" ? a : JSON.stringify(a))).join(" "),
        );
      });
    }
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      sent.push(req.headers.get("authorization") ?? "");
      return Response.json({ error: { message: `Incorrect API key provided: ${KEY}`, type: "invalid_request_error" } }, { status: 401 });
    });

    const ws = await newWorkspace();
    const answers: string[] = [];
    const keep = async (res: Response) => {
      const text = await res.text();
      answers.push(text);
      return { status: res.status, text };
    };
    expect((await keep(await call("PUT", "/api/secrets/MODEL_KEY", { token: ws.admin, body: { value: KEY } }))).status).toBe(200);
    const model = { provider: "openai-compatible", id: "m1", base_url: "https://llm.test/v1", api_key_secret: "MODEL_KEY" };
    expect(
      (
        await keep(
          await call("PUT", "/api/config", {
            token: ws.admin,
            body: { model, fallback_model: { ...model, base_url: "https://other.test/v1" } },
          }),
        )
      ).status,
    ).toBe(200);
    await keep(await call("GET", "/api/secrets", { token: ws.admin }));
    await keep(await call("GET", "/api/config", { token: ws.admin }));

    const chat = await keep(await call("POST", "/api/chat", { token: ws.member, body: { message: "hello" } }));
    expect(chat.status).toBe(502);
    expect(JSON.parse(chat.text)).toMatchObject({ error: { code: "provider_error", message: expect.stringContaining("[redacted]") } });
    const sessionId = (JSON.parse(chat.text) as { error: { details: { session_id: string } } }).error.details.session_id;

    const id = await newSession(ws);
    const streamed = await call("POST", `/api/sessions/${id}/messages`, {
      token: ws.member,
      body: { content: "again" },
      headers: { Accept: "text/event-stream" },
    });
    const frames = await readSse(streamed);
    expect(
      frames.some(
        (f) => f.type === "run_failed" || (f.type === "message" && f.message.role === "assistant" && f.message.error !== undefined),
      ),
    ).toBe(true);
    answers.push(JSON.stringify(frames));

    for (const sid of [sessionId, id]) {
      for (const path of ["", "/events?include_hidden=true", "/runs", "/transcript", "/context", "/tree"]) {
        await keep(await call("GET", `/api/sessions/${sid}${path}`, { token: ws.admin }));
      }
      answers.push(JSON.stringify(await doEvents(sid, ws.id)));
    }

    expect(sent.length).toBeGreaterThanOrEqual(4);
    expect(sent).toContain(`Bearer ${KEY}`); // the key did reach the provider
    for (const text of [...answers, ...logged]) expect(text).not.toContain(KEY);
  });
});

describe("Worker secrets are not lent across tenants", () => {
  // A workspace admin points a model at their own server and names a Worker var as its API key.
  it("an unlent Worker var answers exactly like a name no var has, and its value reaches no request", async () => {
    const sent: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      const req = new Request(input, init);
      sent.push(`${req.url} ${[...req.headers].map(([k, v]) => `${k}: ${v}`).join("; ")} ${await req.text()}`);
      return Response.json({ error: { message: "nope" } }, { status: 401 });
    });
    const b = await newWorkspace();
    const answers: { status: number; code: string; message: string }[] = [];
    // OPERATOR_ONLY_KEY exists but is listed nowhere; SINGLE_TENANT_KEY is listed but not for this workspace.
    for (const name of ["OPERATOR_ONLY_KEY", "SINGLE_TENANT_KEY", "BEAVER_ADMIN_TOKEN", "NO_SUCH_VAR_ANYWHERE"]) {
      const model = { provider: "openai-compatible", id: "m1", base_url: "https://attacker.test/v1", api_key_secret: name };
      expect((await call("PUT", "/api/config", { token: b.admin, body: { model } })).status).toBe(200);
      const res = await call("POST", "/api/chat", { token: b.member, body: { message: "hello" } });
      const { error } = (await res.json()) as { error: { code: string; message: string } };
      answers.push({ status: res.status, code: error.code, message: error.message.split(name).join("<name>") });
    }
    expect(answers[0]).toMatchObject({ status: 422, code: "no_model_configured" });
    expect(answers[0]!.message).toContain("secret '<name>' named by api_key_secret is not set");
    for (const a of answers) expect(a).toEqual(answers[0]);
    for (const line of sent) {
      for (const value of [env.OPERATOR_ONLY_KEY, env.SINGLE_TENANT_KEY, env.BEAVER_ADMIN_TOKEN!]) expect(line).not.toContain(value);
    }
    expect(sent.filter((line) => line.includes("attacker.test"))).toEqual([]);
  });

  it("a lent name reaches the provider for a listed workspace only", async () => {
    const auth: string[] = [];
    vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
      auth.push(new Request(input, init).headers.get("authorization") ?? "(none)");
      return Response.json({ error: { message: "nope" } }, { status: 401 });
    });
    const model = { provider: "openai-compatible", id: "m1", base_url: "https://llm.test/v1", api_key_secret: "SINGLE_TENANT_KEY" };
    const listed = await newWorkspace("ws-shared-keys");
    expect((await call("PUT", "/api/config", { token: listed.admin, body: { model } })).status).toBe(200);
    expect((await call("POST", "/api/chat", { token: listed.member, body: { message: "hello" } })).status).toBe(502);
    expect(auth).toContain(`Bearer ${env.SINGLE_TENANT_KEY}`);

    auth.length = 0;
    const unlisted = await newWorkspace();
    expect((await call("PUT", "/api/config", { token: unlisted.admin, body: { model } })).status).toBe(200);
    const res = await call("POST", "/api/chat", { token: unlisted.member, body: { message: "hello" } });
    expect(res.status).toBe(422);
    expect(auth).toEqual([]);
  });
});
