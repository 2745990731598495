/**
 * Limits and quotas (docs/limits.md): free-form fields over their size answer 413 naming the field,
 * list pages stop at the byte budget and page on without losing anything, and per-workspace quotas
 * answer 429 `quota_exceeded` without Retry-After. Operator overrides come from `BEAVER_LIMITS`.
 */
import { afterEach, describe, expect, it } from "vitest";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { setTestLimits } from "../../support/test-services.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { DEFAULT_LIMITS } from "../../../src/storage/limits.ts";

type ErrorJson = { error: { code: string; message: string; details?: Record<string, unknown> } };

afterEach(() => setTestLimits(null));

async function expectTooLarge(res: Response, field: string, limit: number) {
  expect(res.status).toBe(413);
  const body = await json<ErrorJson>(res);
  expect(body.error.code).toBe("payload_too_large");
  expect(body.error.details).toEqual({ field, limit_bytes: limit });
}

async function expectQuota(res: Response, quota: string, limit: number) {
  expect(res.status).toBe(429);
  expect(res.headers.get("Retry-After")).toBeNull();
  const body = await json<ErrorJson>(res);
  expect(body.error.code).toBe("quota_exceeded");
  expect(body.error.details).toEqual({ quota, limit, used: limit });
}

const createSession = (ws: TestWorkspace, body: unknown) => call("POST", "/api/sessions", { token: ws.member, body });

describe("field sizes (docs/limits.md)", () => {
  it("a session's metadata of ~1 MB answers 413 naming the field; at the limit it is accepted", async () => {
    const ws = await newWorkspace();
    await expectTooLarge(
      await createSession(ws, { metadata: { blob: "x".repeat(1000 * 1000) } }),
      "metadata",
      DEFAULT_LIMITS.session_metadata_bytes,
    );
    const atLimit = { blob: "x".repeat(DEFAULT_LIMITS.session_metadata_bytes - '{"blob":""}'.length) };
    expect((await createSession(ws, { metadata: atLimit })).status).toBe(201);
    await expectTooLarge(await createSession(ws, { metadata: { ...atLimit, b: 1 } }), "metadata", DEFAULT_LIMITS.session_metadata_bytes);
    // Bytes, not characters: 400 three-byte characters are over a 1 KiB title.
    await expectTooLarge(await createSession(ws, { title: "€".repeat(400) }), "title", DEFAULT_LIMITS.session_title_bytes);
    expect((await createSession(ws, { title: "€".repeat(300) })).status).toBe(201);
  });

  it("the operator's BEAVER_LIMITS lowers a limit; an invalid override is a 500 misconfiguration, never ignored", async () => {
    const ws = await newWorkspace();
    setTestLimits({ session_metadata_bytes: 64 });
    await expectTooLarge(await createSession(ws, { metadata: { note: "y".repeat(64) } }), "metadata", 64);
    setTestLimits({ session_metadata_byte: 64 });
    const bad = await createSession(ws, { metadata: {} });
    expect(bad.status).toBe(500);
    expect((await json<ErrorJson>(bad)).error.code).toBe("server_misconfigured");
  });

  it("messages, mail, agents, task comments and outputs, token names and config answer 413 naming the field", async () => {
    const ws = await newWorkspace();
    setTestLimits({
      message_bytes: 32,
      mail_subject_bytes: 16,
      mail_body_bytes: 32,
      agent_model_bytes: 64,
      label_bytes: 8,
      config_bytes: 128,
    });
    const session = await json<{ id: string }>(await createSession(ws, {}));
    await expectTooLarge(
      await call("POST", `/api/sessions/${session.id}/messages`, { token: ws.member, body: { content: "m".repeat(33) } }),
      "content",
      32,
    );
    await expectTooLarge(await call("POST", "/api/chat", { token: ws.member, body: { message: "m".repeat(33) } }), "message", 32);

    const longModel = { provider: "openai-compatible", id: "m", base_url: `https://example.com/${"p".repeat(100)}` };
    await expectTooLarge(
      await call("POST", "/api/agents", {
        token: ws.admin,
        body: { id: "dev", gitea_username: "dev", roles: ["developer"], model: longModel },
      }),
      "model",
      64,
    );
    for (const id of ["dev", "rev"]) {
      expect((await call("POST", "/api/agents", { token: ws.admin, body: { id, gitea_username: id, roles: ["developer"] } })).status).toBe(
        201,
      );
    }
    await expectTooLarge(await call("PATCH", "/api/agents/dev", { token: ws.admin, body: { model: longModel } }), "model", 64);
    const mail = (subject: string, body: string) =>
      call("POST", "/api/mail", { token: ws.member, body: { from_agent: "dev", to_agent: "rev", performative: "inform", subject, body } });
    await expectTooLarge(await mail("s".repeat(17), "b"), "subject", 16);
    await expectTooLarge(await mail("s", "b".repeat(33)), "body", 32);
    const sent = await mail("s", "b");
    expect(sent.status).toBe(201);
    const mailId = (await json<{ id: string }>(sent)).id;
    await expectTooLarge(await call("POST", `/api/mail/${mailId}/reply`, { token: ws.member, body: { body: "r".repeat(33) } }), "body", 32);

    await expectTooLarge(
      await call("POST", "/api/tokens", { token: ws.admin, body: { name: "n".repeat(9), scopes: ["read"] } }),
      "name",
      8,
    );
    await expectTooLarge(
      await call("PUT", "/api/config", { token: ws.admin, body: { runtime: { system_prompt: "p".repeat(200) } } }),
      "config",
      128,
    );
  });

  it("task comments and outputs answer 413 naming the field before the task is looked up", async () => {
    const ws = await newWorkspace();
    setTestLimits({ task_comment_bytes: 10, task_output_bytes: 20 });
    await expectTooLarge(
      await call("POST", "/api/toolchain/tasks/any/comments", { token: ws.member, body: { body: "c".repeat(11) } }),
      "body",
      10,
    );
    await expectTooLarge(
      await call("POST", "/api/toolchain/tasks/any/outputs", { token: ws.member, body: { content: "o".repeat(21) } }),
      "content",
      20,
    );
    // Within the limit the request goes on (and finds no such task).
    expect((await call("POST", "/api/toolchain/tasks/any/comments", { token: ws.member, body: { body: "c" } })).status).toBe(404);
  });
});

describe("list byte budget (docs/limits.md)", () => {
  it("30 sessions with large metadata: ?limit=200 stays under the budget and pages through all of them", async () => {
    const ws = await newWorkspace();
    const budget = 100 * 1024;
    setTestLimits({ list_page_bytes: budget });
    const ids = new Set<string>();
    for (let i = 0; i < 30; i++) {
      const res = await createSession(ws, { title: `s${i}`, metadata: { blob: "m".repeat(15 * 1024) } });
      expect(res.status).toBe(201);
      ids.add((await json<{ id: string }>(res)).id);
    }
    type Page = { sessions: { id: string }[]; next_updated_before: number | null; next_before_id: string | null };
    const seen: string[] = [];
    let query = "limit=200";
    let pages = 0;
    for (;;) {
      const res = await call("GET", `/api/sessions?${query}`, { token: ws.read });
      expect(res.status).toBe(200);
      const text = await res.text();
      expect(new TextEncoder().encode(text).byteLength).toBeLessThan(budget + 1024);
      const page = JSON.parse(text) as Page;
      seen.push(...page.sessions.map((s) => s.id));
      pages++;
      if (page.next_updated_before === null) break;
      query = `limit=200&updated_before=${page.next_updated_before}&before_id=${page.next_before_id}`;
      expect(pages).toBeLessThan(20);
    }
    expect(pages).toBeGreaterThan(1);
    expect(seen).toHaveLength(30);
    expect(new Set(seen)).toEqual(ids);
  });

  it("mail pages stop at the budget and hand back a cursor that loses nothing", async () => {
    const ws = await newWorkspace();
    for (const id of ["dev", "rev"]) {
      expect((await call("POST", "/api/agents", { token: ws.admin, body: { id, gitea_username: id, roles: ["developer"] } })).status).toBe(
        201,
      );
    }
    for (let i = 0; i < 6; i++) {
      const res = await call("POST", "/api/mail", {
        token: ws.member,
        body: { from_agent: "dev", to_agent: "rev", performative: "inform", subject: `m${i}`, body: "b".repeat(10_000) },
      });
      expect(res.status).toBe(201);
    }
    setTestLimits({ list_page_bytes: 25_000 });
    type Page = { mail: { id: string }[]; next_before: number | null; next_before_id: string | null };
    const first = await json<Page>(await call("GET", "/api/mail?limit=200", { token: ws.read }));
    expect(first.mail.length).toBe(2);
    let all = first.mail.map((m) => m.id);
    let cursor = first;
    while (cursor.next_before !== null) {
      cursor = await json<Page>(
        await call("GET", `/api/mail?limit=200&before=${cursor.next_before}&before_id=${cursor.next_before_id}`, { token: ws.read }),
      );
      all = [...all, ...cursor.mail.map((m) => m.id)];
    }
    expect(new Set(all).size).toBe(6);
  });
});

describe("workspace quotas (docs/limits.md)", () => {
  it("sessions: the next create over the quota answers 429 quota_exceeded without Retry-After, also through chat", async () => {
    const ws = await newWorkspace();
    setTestLimits({ sessions: 2 });
    expect((await createSession(ws, {})).status).toBe(201);
    expect((await createSession(ws, {})).status).toBe(201);
    await expectQuota(await createSession(ws, {}), "sessions", 2);
    await expectQuota(await call("POST", "/api/chat", { token: ws.member, body: { message: "hi" } }), "sessions", 2);
    // Another workspace has its own count.
    expect((await createSession(await newWorkspace(), {})).status).toBe(201);
  });

  it("agents, skills and plugin sources: a new one over the quota answers 429; updating an existing one does not", async () => {
    const ws = await newWorkspace();
    setTestLimits({ agents: 1, skills: 1, plugin_sources: 1 });
    const agent = (id: string) => call("POST", "/api/agents", { token: ws.admin, body: { id, gitea_username: id, roles: ["developer"] } });
    expect((await agent("a1")).status).toBe(201);
    await expectQuota(await agent("a2"), "agents", 1);

    const skill = (name: string, text: string) =>
      call("PUT", `/api/skills/${name}`, { token: ws.member, body: { files: [{ path: "SKILL.md", content: skillMd(name, text) }] } });
    expect((await skill("one", "First.")).status).toBe(200);
    expect((await skill("one", "First, updated.")).status).toBe(200);
    await expectQuota(await skill("two", "Second."), "skills", 1);

    const source = (id: string) => call("PUT", `/api/plugins/sources/${id}`, { token: ws.admin, body: { owner: "o", repo: id } });
    expect((await source("s1")).status).toBe(200);
    expect((await source("s1")).status).toBe(200);
    await expectQuota(await source("s2"), "plugin_sources", 1);
  });
});
