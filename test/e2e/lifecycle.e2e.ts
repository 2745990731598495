/**
 * Stop and channels end to end (docs/sessions.md, "Stop, close and retry"; docs/channels.md): real
 * `wrangler dev`, the scripted OpenAI-compatible server (which can answer slowly), and a webhook
 * receiver started by this test that checks each post's HMAC-SHA256 signature.
 */
import { createServer, type Server } from "node:http";
import { createHmac, timingSafeEqual } from "node:crypto";
import type { AddressInfo } from "node:net";
import { afterAll, describe, expect, inject, it } from "vitest";
import { api, newWorkspace } from "./client.ts";
import { scriptedModelClient, type ScriptedStep } from "../support/scripted-openai.ts";

const modelUrl = inject("modelUrl");
const models = scriptedModelClient(modelUrl);

async function workspaceScripted(steps: ScriptedStep[], extra: Record<string, unknown> = {}) {
  const ws = await newWorkspace();
  const modelId = `lifecycle-${Math.random().toString(36).slice(2, 8)}`;
  await models.script(modelId, steps);
  const res = await api("PUT", "/api/config", {
    token: ws.token,
    body: { model: { provider: "openai-compatible", id: modelId, base_url: `${modelUrl}/v1` }, ...extra },
  });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
  return { ...ws, modelId };
}

async function post<T>(token: string, path: string, body?: unknown): Promise<{ status: number; body: T }> {
  const res = await api("POST", path, { token, ...(body !== undefined ? { body } : {}) });
  return { status: res.status, body: (await res.json()) as T };
}

async function eventually<T>(read: () => Promise<T | undefined>, timeoutMs = 20_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (value !== undefined) return value;
    if (Date.now() > deadline) throw new Error("timed out");
    await new Promise((r) => setTimeout(r, 100));
  }
}

const runOf = async (token: string, session: string, run: string) =>
  (await (await api("GET", `/api/sessions/${session}/runs/${run}`, { token })).json()) as {
    status: string;
    result: { output_text: string; error?: { code: string } };
  };

describe("stop on wrangler dev", () => {
  it("a stop during a slow run drains it (finishes within the timeout), fails the queued message and refuses new ones", async () => {
    const ws = await workspaceScripted([{ text: "slow but done", delay_ms: 1_500 }, { text: "never asked" }]);
    const { body: session } = await post<{ id: string }>(ws.token, "/api/sessions", {});
    const { body: first } = await post<{ run_id: string }>(ws.token, `/api/sessions/${session.id}/messages`, { content: "slow one" });
    await eventually(async () => ((await models.requests(ws.modelId)).length === 1 ? true : undefined));
    const { body: queued } = await post<{ run_id: string }>(ws.token, `/api/sessions/${session.id}/messages`, { content: "queued one" });

    const stopped = await post<{ status: string }>(ws.token, `/api/sessions/${session.id}/stop`, { timeout_ms: 15_000 });
    expect(stopped).toMatchObject({ status: 200, body: { status: "stopped" } });
    expect(await runOf(ws.token, session.id, first.run_id)).toMatchObject({
      status: "completed",
      result: { output_text: "slow but done" },
    });
    expect(await runOf(ws.token, session.id, queued.run_id)).toMatchObject({
      status: "failed",
      result: { error: { code: "session_stopping" } },
    });
    const refused = await post<{ error: { code: string } }>(ws.token, `/api/sessions/${session.id}/messages`, { content: "more" });
    expect(refused).toMatchObject({ status: 409, body: { error: { code: "session_stopping" } } });
    expect(await models.requests(ws.modelId)).toHaveLength(1);
  });

  it("a stop whose timeout passes cancels the running run, then the session is stopped and can be closed", async () => {
    const ws = await workspaceScripted([{ text: "too late", delay_ms: 30_000 }]);
    const { body: session } = await post<{ id: string }>(ws.token, "/api/sessions", {});
    const { body: run } = await post<{ run_id: string }>(ws.token, `/api/sessions/${session.id}/messages`, { content: "very slow" });
    await eventually(async () => ((await models.requests(ws.modelId)).length === 1 ? true : undefined));
    const stopped = await post<{ status: string }>(ws.token, `/api/sessions/${session.id}/stop`, { timeout_ms: 500 });
    expect(stopped).toMatchObject({ status: 200, body: { status: "stopped" } });
    expect((await runOf(ws.token, session.id, run.run_id)).status).toBe("cancelled");
    expect((await post<{ status: string }>(ws.token, `/api/sessions/${session.id}/close`)).body.status).toBe("closed");
    expect((await post<{ error: { code: string } }>(ws.token, `/api/sessions/${session.id}/stop`)).status).toBe(409);
  });
});

describe("outbound channel on wrangler dev", () => {
  let server: Server | undefined;
  afterAll(() => new Promise<void>((resolve) => (server ? server.close(() => resolve()) : resolve())));

  it("a webhook receiver started by the test gets each run's result, signed with the channel's secret", async () => {
    const received: { body: string; signature: string; valid: boolean }[] = [];
    const secret = "e2e-channel-secret";
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on("data", (c: Buffer) => chunks.push(c));
      req.on("end", () => {
        const raw = Buffer.concat(chunks);
        const signature = String(req.headers["x-beaver-signature"] ?? "");
        const expected = createHmac("sha256", secret).update(raw).digest("hex");
        const valid = signature.length === expected.length && timingSafeEqual(Buffer.from(signature), Buffer.from(expected));
        received.push({ body: raw.toString("utf8"), signature, valid });
        res.writeHead(valid ? 204 : 401).end();
      });
    });
    await new Promise<void>((resolve) => server!.listen(0, "127.0.0.1", resolve));
    const port = (server.address() as AddressInfo).port;

    const ws = await workspaceScripted([{ text: "first result" }, { text: "second result" }], {
      channels: [{ name: "receiver", kind: "webhook", url: `http://127.0.0.1:${port}/hook`, secret_name: "CHANNEL_SECRET" }],
    });
    expect((await api("PUT", "/api/secrets/CHANNEL_SECRET", { token: ws.token, body: { value: secret } })).status).toBeLessThan(300);
    const { body: session } = await post<{ id: string }>(ws.token, "/api/sessions", { channel: "receiver" });
    for (const content of ["one", "two"]) {
      const res = await api("POST", `/api/sessions/${session.id}/messages?wait=true`, { token: ws.token, body: { content } });
      expect(res.status).toBe(200);
    }
    await eventually(async () => (received.length >= 2 ? true : undefined));
    expect(received.every((r) => r.valid)).toBe(true);
    const bodies = received.map((r) => JSON.parse(r.body) as { session_id: string; result: { output_text: string; status: string } });
    expect(bodies.map((b) => b.result.output_text)).toEqual(["first result", "second result"]);
    expect(bodies.every((b) => b.session_id === session.id && b.result.status === "completed")).toBe(true);
  });
});
