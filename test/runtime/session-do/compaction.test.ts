/**
 * Compaction and titles in a real SessionDO with mock models (docs/sessions.md, "Compaction",
 * "Titles"): the trigger at a model step, the context starting at the summary, the full log kept,
 * rewind across a compaction, the fallback to trimming when the summary call fails, on-demand
 * compaction and its 409 during a run, and titles named by the auxiliary model after the first run.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import type { LanguageModelV4CallOptions } from "@ai-sdk/provider";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { CompactEvent, Message, MessageEvent, PersistentEvent } from "../../../src/runtime/session/events.ts";
import {
  ScriptedModel,
  deferred,
  doEvents,
  registerModel,
  scriptedWorkspace,
  text,
  until,
  generated,
  promptSized,
  replicated,
} from "../../support/sessions.ts";
import { call, json, type TestWorkspace } from "../../support/api.ts";

const SUMMARY =
  "## Goals\nPlan the beaver dam.\n## Decisions\nUse oak.\n## Facts\nthe first question was about the dam.\n## Open items\nNone.";
const TITLE = "Beaver dam planning";

/** An auxiliary model answering summary and title calls (`generateText`); `fail` makes summary calls throw. */
function auxModel(opts: { fail?: boolean } = {}) {
  const aux = new ScriptedModel([text("unused")]);
  const calls: { kind: "summary" | "title" | "skills"; prompt: string }[] = [];
  aux.model.doGenerate = async (options: LanguageModelV4CallOptions) => {
    const prompt = JSON.stringify(options.prompt);
    const kind = prompt.includes("You compact the earlier part")
      ? "summary"
      : prompt.includes("You name conversations")
        ? "title"
        : "skills";
    calls.push({ kind, prompt });
    if (kind === "skills") throw new Error("no skill choice here"); // skill selection falls back to its threshold rule
    if (kind === "summary" && opts.fail) throw Object.assign(new Error("scripted summary failure"), { statusCode: 400 });
    return generated(kind === "summary" ? SUMMARY : `"${TITLE}."`);
  };
  return { aux, calls };
}

/** Main model: answer n is long, so a few turns fill a small window; its usage counts the prompt (the context size anchors on it). */
const longAnswers = () => new ScriptedModel((i, options) => promptSized(text(`answer ${i} ${"a".repeat(1_600)}`), options));

async function configure(ws: TestWorkspace, main: ScriptedModel, aux: ScriptedModel | null, runtime: Record<string, unknown> = {}) {
  const config: Record<string, unknown> = {
    model: { provider: "openai-compatible", id: registerModel(main), base_url: "http://scripted.test/v1", context_window: 8_000 },
    runtime,
  };
  if (aux) config.auxiliary_model = { provider: "openai-compatible", id: registerModel(aux), base_url: "http://scripted.test/v1" };
  const res = await call("PUT", "/api/config", { token: ws.admin, body: config });
  expect(res.status).toBe(200);
}

async function turn(ws: TestWorkspace, sessionId: string, content: string) {
  const { run_id } = await submitRun(env, sessionId, { workspace_id: ws.id, content });
  return waitForRun(env, sessionId, run_id, 10_000);
}

const question = (i: number) => `question ${i} ${"q".repeat(1_600)}`;
const compacts = (events: PersistentEvent[]) => events.filter((e): e is CompactEvent => e.type === "compact");
const userTexts = (events: PersistentEvent[]) =>
  events
    .filter((e): e is MessageEvent => e.type === "message" && e.message.role === "user")
    .map((e) => (e.message as { content: string }).content);

async function context(ws: TestWorkspace, id: string): Promise<Message[]> {
  const res = await call("GET", `/api/sessions/${id}/context`, { token: ws.read });
  expect(res.status).toBe(200);
  return (await json<{ messages: Message[] }>(res)).messages;
}
const firstText = (messages: Message[]) => (messages[0]?.role === "user" ? messages[0].content : "");

describe("compaction at a model step", () => {
  it("compacts a long session at the threshold, answers afterwards, and keeps the full log", async () => {
    const main = longAnswers();
    const { aux, calls } = auxModel();
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux, { compact_at_share: 0.5 });
    const session = await createSession(env, { workspaceId: ws.id, title: "Dams" });
    let turns = 0;
    for (; turns < 8; turns++) {
      const result = await turn(ws, session.id, question(turns));
      expect(result.status).toBe("completed");
      if (compacts(await doEvents(session.id, ws.id)).length > 0) break;
    }
    expect(turns).toBeGreaterThan(0); // not on the first turn: the threshold was crossed later
    const events = await doEvents(session.id, ws.id);
    const [compact] = compacts(events);
    expect(compact).toBeDefined();
    expect(compact!.summary).toBe(SUMMARY);
    expect(compact!.tokens_after).toBeLessThan(compact!.tokens_before);
    const summaries = calls.filter((c) => c.kind === "summary");
    expect(summaries).toHaveLength(1);
    expect(summaries[0]!.prompt).toContain("question 0");
    // The step right after the compaction was sent the summary, not the oldest question.
    const last = main.promptText(main.calls.length - 1);
    expect(last).toContain("Plan the beaver dam.");
    expect(last).not.toContain("question 0 ");
    expect(last).toContain(`question ${turns} `);

    // The next turn still answers, still from the summary.
    expect((await turn(ws, session.id, "and now?")).output_text).toMatch(/^answer /);
    const ctx = await context(ws, session.id);
    expect(firstText(ctx)).toContain("<system-reminder>");
    expect(firstText(ctx)).toContain("Plan the beaver dam.");
    expect(JSON.stringify(ctx)).not.toContain("question 0 ");
    expect(ctx.at(-1)).toMatchObject({ role: "assistant" });
    // The context size anchors on the answer's reported usage (it came after the compaction).
    const lastAnswer = [...(await doEvents(session.id, ws.id))].reverse().find((e): e is MessageEvent => e.type === "message")!;
    const reported = (lastAnswer.message as { usage: { total_tokens: number } }).usage.total_tokens;
    const size = (
      await json<{ context_size: Record<string, unknown> }>(await call("GET", `/api/sessions/${session.id}/context`, { token: ws.read }))
    ).context_size;
    expect(size).toMatchObject({ source: "usage", usage_tokens: reported, trailing_tokens: 0 });
    expect(size.tokens).toBe(reported - (size.fixed_tokens as number));

    // Nothing was deleted: every question is still in the log.
    const all = await doEvents(session.id, ws.id);
    const users = userTexts(all);
    expect(users).toHaveLength(turns + 2);
    for (let i = 0; i <= turns; i++) expect(users).toContain(question(i));

    // Rewinding to before the compaction gives the uncompacted context back.
    const rewound = await call("POST", `/api/sessions/${session.id}/rewind`, {
      token: ws.member,
      body: { target_event_id: compact!.parent_id },
    });
    expect(rewound.status).toBe(200);
    const full = await context(ws, session.id);
    expect(firstText(full)).toBe(question(0));
    expect(JSON.stringify(full)).not.toContain("Plan the beaver dam.");
  });

  it("falls back to trimming when the summary call fails, and the run completes", async () => {
    const main = longAnswers();
    const { aux, calls } = auxModel({ fail: true });
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux, { compact_at_share: 0.3 });
    const session = await createSession(env, { workspaceId: ws.id, title: "Dams" });
    for (let i = 0; i < 8; i++) expect((await turn(ws, session.id, question(i))).status).toBe("completed");
    expect(calls.filter((c) => c.kind === "summary").length).toBeGreaterThan(0);
    expect(compacts(await doEvents(session.id, ws.id))).toHaveLength(0);
    // The token window trimmed the oldest turns instead.
    const last = main.promptText(main.calls.length - 1);
    expect(last).not.toContain("question 0 ");
    expect(last).toContain("question 7 ");
  });

  it("never compacts without a known context window", async () => {
    const main = longAnswers();
    const { aux, calls } = auxModel();
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux, { compact_at_share: 0.1 });
    await setNoWindow(ws, main, aux);
    const session = await createSession(env, { workspaceId: ws.id, title: "Dams" });
    for (let i = 0; i < 4; i++) await turn(ws, session.id, question(i));
    expect(compacts(await doEvents(session.id, ws.id))).toHaveLength(0);
    expect(calls.filter((c) => c.kind === "summary")).toHaveLength(0);
  });
});

async function setNoWindow(ws: TestWorkspace, main: ScriptedModel, aux: ScriptedModel) {
  const res = await call("PUT", "/api/config", {
    token: ws.admin,
    body: {
      model: { provider: "openai-compatible", id: registerModel(main), base_url: "http://scripted.test/v1" },
      auxiliary_model: { provider: "openai-compatible", id: registerModel(aux), base_url: "http://scripted.test/v1" },
      runtime: { compact_at_share: 0.1 },
    },
  });
  expect(res.status).toBe(200);
}

describe("POST /api/sessions/:id/compact", () => {
  it("compacts on demand; the context then starts at the summary", async () => {
    const main = new ScriptedModel((i) => text(`answer ${i}`));
    const { aux } = auxModel();
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux);
    const session = await createSession(env, { workspaceId: ws.id, title: "Dams" });
    for (let i = 0; i < 3; i++) await turn(ws, session.id, `short question ${i}`);
    const nothing = await call("POST", `/api/sessions/${session.id}/compact`, { token: ws.member, body: { keep_tokens: 100_000 } });
    expect(await json(nothing)).toMatchObject({ compacted: false, reason: "nothing_to_compact", event: null });

    const res = await call("POST", `/api/sessions/${session.id}/compact`, { token: ws.member, body: { keep_tokens: 15 } });
    expect(res.status).toBe(200);
    const body = await json<{ compacted: boolean; event: CompactEvent; active_leaf: string }>(res);
    expect(body).toMatchObject({ compacted: true, event: { type: "compact", summary: SUMMARY, run_id: null } });
    expect(body.active_leaf).toBe(body.event.id);
    const ctx = await context(ws, session.id);
    expect(firstText(ctx)).toContain("Plan the beaver dam.");
    // The newest turn is kept verbatim after the summary.
    expect(ctx.slice(1)).toEqual([
      { role: "user", content: "short question 2" },
      { role: "assistant", text: "answer 2", tool_calls: [] },
    ]);
    // The next run answers from it.
    expect((await turn(ws, session.id, "go on")).status).toBe("completed");
    expect(main.promptText(main.calls.length - 1)).toContain("Plan the beaver dam.");
    expect(main.promptText(main.calls.length - 1)).not.toContain("short question 0");
  });

  it("answers 409 while a run is open, and needs member scope", async () => {
    const gate = deferred();
    const main = new ScriptedModel([{ parts: text("late"), gate: gate.promise }]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id, title: "Dams" });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi" });
    await until(() => main.calls.length > 0, 5_000, "the model step");
    const busy = await call("POST", `/api/sessions/${session.id}/compact`, { token: ws.member, body: {} });
    expect(busy.status).toBe(409);
    expect(await json(busy)).toMatchObject({ error: { code: "busy" } });
    expect((await call("POST", `/api/sessions/${session.id}/compact`, { token: ws.read, body: {} })).status).toBe(403);
    gate.resolve();
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
  });
});

describe("session titles", () => {
  const listed = async (ws: TestWorkspace, id: string) => {
    await replicated(id); // the list reads D1, which gets a run's log after its result (docs/sessions.md)
    const res = await call("GET", "/api/sessions", { token: ws.read });
    return (await json<{ sessions: { id: string; title: string }[] }>(res)).sessions.find((s) => s.id === id)?.title;
  };

  it("a titleless session is named by the auxiliary model after its first run, listed and logged", async () => {
    const main = new ScriptedModel([text("Use oak for the dam.")]);
    const { aux, calls } = auxModel();
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux);
    const session = await createSession(env, { workspaceId: ws.id });
    expect((await turn(ws, session.id, "How should I build a beaver dam?\nDetails follow.")).status).toBe("completed");
    const titles = calls.filter((c) => c.kind === "title");
    expect(titles).toHaveLength(1);
    expect(titles[0]!.prompt).toContain("How should I build a beaver dam?");
    expect(titles[0]!.prompt).toContain("Use oak for the dam.");
    expect(await listed(ws, session.id)).toBe(TITLE);
    const info = (await doEvents(session.id, ws.id)).filter((e) => e.type === "session_info");
    expect(info).toMatchObject([{ changes: { title: TITLE } }]);
    // Only once: the second run does not rename it.
    await turn(ws, session.id, "and the roof?");
    expect(calls.filter((c) => c.kind === "title")).toHaveLength(1);
  });

  it("a titled session keeps its title; without an auxiliary model the first message names it", async () => {
    const main = new ScriptedModel([text("ok")]);
    const { aux, calls } = auxModel();
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux);
    const titled = await createSession(env, { workspaceId: ws.id, title: "My own title" });
    await turn(ws, titled.id, "How should I build a beaver dam?");
    expect(await listed(ws, titled.id)).toBe("My own title");
    expect(calls.filter((c) => c.kind === "title")).toHaveLength(0);

    const plain = new ScriptedModel([text("ok")]);
    const ws2 = await scriptedWorkspace(plain);
    const untitled = await createSession(env, { workspaceId: ws2.id });
    await turn(ws2, untitled.id, `  ${"Beaver ".repeat(20)}\nsecond line`);
    const title = await listed(ws2, untitled.id);
    expect(title).toHaveLength(60);
    expect(title!.startsWith("Beaver Beaver")).toBe(true);
    expect((await doEvents(untitled.id, ws2.id)).filter((e) => e.type === "session_info")).toHaveLength(0);
  });

  it("a failing title call never fails the run", async () => {
    const main = new ScriptedModel([text("ok")]);
    const aux = new ScriptedModel([text("unused")]);
    aux.model.doGenerate = async () => {
      throw Object.assign(new Error("scripted title failure"), { statusCode: 400 });
    };
    const ws = await scriptedWorkspace(main);
    await configure(ws, main, aux);
    const session = await createSession(env, { workspaceId: ws.id });
    expect((await turn(ws, session.id, "Beaver dams")).status).toBe("completed");
    expect(await listed(ws, session.id)).toBe("Beaver dams");
  });
});
