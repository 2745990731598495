// In-worker: what a run is given — a cacheable system-prompt prefix shared across runs, the prompt
// budget's run fact, full usage (cache and reasoning tokens) per step, run and session, and the
// assembled tool set, recorded and frozen across an eviction.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { z } from "zod";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import type { PersistentEvent, SystemPromptSnapshottedEvent } from "../../../src/runtime/session/events.ts";
import { ScriptedModel, doEvents, registerToolset, scriptedWorkspace, stub, text, until } from "../../support/sessions.ts";
import { call, json } from "../../support/api.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";

const systemOf = (options: LanguageModelV4CallOptions): string =>
  options.prompt
    .filter((m) => m.role === "system")
    .map((m) => m.content)
    .join("\n\n");
const snapshots = (events: PersistentEvent[]) =>
  events.filter((e): e is SystemPromptSnapshottedEvent => e.type === "system_prompt_snapshotted");
const toolNames = (options: LanguageModelV4CallOptions) => (options.tools ?? []).map((t) => t.name);

async function setConfig(ws: { admin: string }, change: (config: Record<string, Record<string, unknown>>) => void): Promise<void> {
  const config = await json<Record<string, Record<string, unknown>>>(await call("GET", "/api/config", { token: ws.admin }));
  change(config);
  const res = await call("PUT", "/api/config", { token: ws.admin, body: config });
  if (res.status !== 200) throw new Error(`config: ${res.status} ${await res.text()}`);
}

const cachedUsage = (): LanguageModelV4StreamPart => ({
  type: "finish",
  finishReason: { unified: "stop", raw: "stop" },
  usage: { inputTokens: { total: 100, noCache: 30, cacheRead: 60, cacheWrite: 10 }, outputTokens: { total: 20, text: 15, reasoning: 5 } },
});

describe("cacheable prefix", () => {
  it("two consecutive runs of one session send an identical system prompt up to the volatile runtime section", async () => {
    const main = new ScriptedModel([text("one"), text("two")]);
    const ws = await scriptedWorkspace(main, { runtime: { system_prompt: "Answer in English." } });
    const session = await createSession(env, { workspaceId: ws.id });
    const first = await submitRun(env, session.id, { workspace_id: ws.id, content: "first" });
    await waitForRun(env, session.id, first.run_id, 10_000);
    await new Promise((r) => setTimeout(r, 1_100)); // the clock (to the second) moves on
    const second = await submitRun(env, session.id, { workspace_id: ws.id, content: "second" });
    await waitForRun(env, session.id, second.run_id, 10_000);

    const [a, b] = [systemOf(main.calls[0]!), systemOf(main.calls[1]!)];
    expect(a).not.toBe(b);
    const volatileAt = a.indexOf("# Runtime context");
    expect(volatileAt).toBeGreaterThan(0);
    expect(b.indexOf("# Runtime context")).toBe(volatileAt);
    expect(b.slice(0, volatileAt)).toBe(a.slice(0, volatileAt));
    expect(a.slice(0, volatileAt)).toContain("Answer in English.");
    // The runtime section is the last one: nothing stable follows the clock.
    expect(a.slice(volatileAt)).not.toContain("# Session");

    const snaps = snapshots(await doEvents(session.id, ws.id));
    expect(snaps).toHaveLength(2);
    expect(snaps[0]!.stable_chars).toBe(volatileAt);
    expect(snaps[1]!.prompt.slice(0, snaps[1]!.stable_chars)).toBe(snaps[0]!.prompt.slice(0, snaps[0]!.stable_chars));
    expect(snaps[0]!.prompt_budget).toBeUndefined(); // no context_window configured: no budget
  });
});

describe("prompt budget", () => {
  it("with a small context_window the workspace instructions are shortened and the run fact says so", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    await setConfig(ws, (c) => {
      c.model!.context_window = 8_000; // 15% = 1,200 tokens
      c.runtime = { system_prompt: "Follow the house style. ".repeat(600) };
    });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "hi", system_prompt_extra: "# Task\nSay hi." });
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
    const [snap] = snapshots(await doEvents(session.id, ws.id));
    // The skills catalog (the builtins are listed in every run) ranks below the workspace section
    // (docs/agent-loop.md, "The system prompt"), so it goes first: too little of it would be left to shorten.
    expect(snap!.prompt_budget).toMatchObject({ budget_tokens: 1_200, dropped: ["skills"], over_budget: false });
    expect(snap!.prompt_budget!.shortened.map((s) => s.id)).toEqual(["workspace"]);
    expect(snap!.prompt_budget!.tokens_after).toBeLessThanOrEqual(1_200);
    expect(systemOf(main.calls[0]!)).toBe(snap!.prompt);
    expect(snap!.prompt).toContain("# Task\nSay hi.");
    expect(snap!.prompt).toContain("shortened to fit the system prompt budget");
  });
});

describe("usage details", () => {
  it("cache-read, cache-write and reasoning tokens add up per step, per run and per session", async () => {
    const parts = (t: string): LanguageModelV4StreamPart[] => [...text(t).filter((p) => p.type !== "finish"), cachedUsage()];
    const main = new ScriptedModel([parts("one"), parts("two")]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    for (const content of ["a", "b"]) {
      const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content });
      const result = await waitForRun(env, session.id, run_id, 10_000);
      expect(result.usage).toEqual({
        input_tokens: 100,
        output_tokens: 20,
        total_tokens: 120,
        cache_read_tokens: 60,
        cache_write_tokens: 10,
        reasoning_tokens: 5,
      });
    }
    const events = await doEvents(session.id, ws.id);
    const assistant = events.find((e) => e.type === "message" && e.message.role === "assistant");
    expect(assistant).toMatchObject({ message: { usage: { cache_read_tokens: 60, cache_write_tokens: 10, reasoning_tokens: 5 } } });
    const one = await json<{ usage: Record<string, number> }>(await call("GET", `/api/sessions/${session.id}`, { token: ws.read }));
    expect(one.usage).toEqual({
      input_tokens: 200,
      output_tokens: 40,
      total_tokens: 240,
      cache_read_tokens: 120,
      cache_write_tokens: 20,
      reasoning_tokens: 10,
    });
  });
});

describe("tool assembly", () => {
  const tools = [
    ["weather_forecast", "Forecast of the weather: rain, temperature and wind for a city."],
    ["gitea_issue", "Reads a Gitea issue and its comments."],
    ["send_mail", "Sends an email to a recipient."],
    ["calendar_events", "Lists calendar events in a date range."],
    ["stock_quote", "Current price of a stock ticker."],
  ].map(([name, description]) =>
    defineTool({ name: name!, description: description!, input: z.strictObject({}), execute: async () => ok(name!) }),
  );

  it("offers the always tools and the most relevant rest up to max_tools, records why, and keeps the set after an eviction", async () => {
    const toolset = registerToolset("assembly-set", tools);
    const main = new ScriptedModel([{ hang: true }, text("sunny")]);
    const ws = await scriptedWorkspace(main, { runtime: { max_tools: 3 } });
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, {
      workspace_id: ws.id,
      content: "Will it rain in Oslo? Check the weather forecast.",
      toolset,
    });
    await until(() => main.calls.length === 1, 5_000, "first model call");
    const offered = toolNames(main.calls[0]!);
    expect(offered).toHaveLength(3);
    expect(offered).toContain("weather_forecast");

    // Evicted mid-run; meanwhile the workspace allows more tools. The resumed run keeps its set.
    await abortAllDurableObjects();
    await setConfig(ws, (c) => {
      c.runtime = { ...c.runtime, max_tools: 20 };
    });
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
    expect(toolNames(main.calls.at(-1)!)).toEqual(offered);

    const [snap] = snapshots(await doEvents(session.id, ws.id));
    expect(snap!.tools).toMatchObject({ max_tools: 3, budget_tokens: 3_000 });
    expect(snap!.tools!.chosen.map((c) => c.name).sort()).toEqual([...offered].sort());
    expect(snap!.tools!.chosen.find((c) => c.name === "weather_forecast")).toMatchObject({ reason: "relevant", score: expect.any(Number) });
    expect(snap!.tools!.left_out).toHaveLength(tools.length + 2 - 3);
  });
});
