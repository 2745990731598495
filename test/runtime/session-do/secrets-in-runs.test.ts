/**
 * A workspace secret used as a model's API key never comes back out: not in HTTP answers, stream
 * frames, stored events (hidden ones included), run results or logs — even when the provider's
 * error message echoes the key. The provider is the real openai-compatible package; the network is
 * a fetch stub that answers 401 with the key in its body, as some servers do.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
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
