// Tool assembly: always and hinted tools first and never cut, then the most relevant up to max_tools and the token budget.
import { describe, expect, it } from "vitest";
import { z } from "zod";
import { assembleTools, relevanceScores, terms } from "../../../src/runtime/tools/assemble.ts";
import { defineTool, ok, type ToolSpec } from "../../../src/runtime/tools/spec.ts";
import { estimateToolTokens } from "../../../src/runtime/agent/tokens.ts";
import { registeredToolsets } from "../../../src/app/runtime.ts";

const tool = (name: string, description: string, extra: Partial<ToolSpec<unknown>> = {}) =>
  defineTool({ name, description, input: z.strictObject({}), execute: async () => ok(name), ...extra });

const catalogue = [
  tool("echo", "Echoes the given text back.", { always: true }),
  tool("current_time", "Tells the current date and time in a time zone."),
  tool("weather_forecast", "Forecast of the weather (rain, temperature, wind) for a city."),
  tool("gitea_pull_request", "Reads a Gitea pull request: title, body, diff and review comments."),
  tool("gitea_issue", "Reads a Gitea issue and its comments."),
  tool("send_mail", "Sends an email message to a recipient."),
  tool("calendar_events", "Lists calendar events in a date range."),
];

describe("assembleTools", () => {
  it("offers the tools runtime.always_tools names (reason `configured`) whatever the limits; unknown names are ignored", () => {
    const out = assembleTools(catalogue, {
      query: "Will it rain in Berlin tomorrow?",
      alwaysTools: ["calendar_events", "gitea_issue", "no_such_tool"],
      maxTools: 1,
      budgetTokens: 10_000,
    });
    expect(out.choices).toEqual([
      { name: "echo", reason: "always" },
      { name: "gitea_issue", reason: "configured" },
      { name: "calendar_events", reason: "configured" },
    ]);
  });

  it("ranks by embedding similarity when given, over keywords: a tool that shares no word with the message can win", () => {
    const query = "Check the weather forecast";
    const keywords = assembleTools(catalogue, { query, maxTools: 2, budgetTokens: 10_000 });
    expect(keywords.choices[1]).toMatchObject({ name: "weather_forecast", ranked_by: "keywords" });
    const similarity = new Map([
      ["weather_forecast", 0.1],
      ["calendar_events", 0.9123456],
    ]);
    const out = assembleTools(catalogue, { query, similarity, maxTools: 2, budgetTokens: 10_000 });
    expect(out.choices).toEqual([
      { name: "echo", reason: "always" },
      { name: "calendar_events", reason: "relevant", score: 0.912, ranked_by: "embedding" },
    ]);
  });

  it("offers always tools, then hinted ones, then the most relevant to the user message", () => {
    const out = assembleTools(catalogue, {
      query: "Will it rain in Berlin tomorrow? Check the weather.",
      hintedTools: ["send_mail"],
      maxTools: 3,
      budgetTokens: 10_000,
    });
    expect(out.choices).toEqual([
      { name: "echo", reason: "always" },
      { name: "weather_forecast", reason: "relevant", score: expect.any(Number), ranked_by: "keywords" },
      { name: "send_mail", reason: "hinted" },
    ]);
    expect(out.specs.map((s) => s.name)).toEqual(["echo", "weather_forecast", "send_mail"]);
    expect(out.left_out).toEqual(["current_time", "gitea_pull_request", "gitea_issue", "calendar_events"]);
  });

  it("ranks by relevance: a pull-request question picks the pull-request tool before the issue tool", () => {
    const out = assembleTools(catalogue, { query: "Review the pull request diff on Gitea", maxTools: 2, budgetTokens: 10_000 });
    expect(out.choices.map((c) => c.name)).toEqual(["echo", "gitea_pull_request"]);
  });

  it("always and hinted tools are kept even past max_tools and the budget; relevant ones stop at the budget", () => {
    const out = assembleTools(catalogue, {
      query: "weather",
      hintedTools: ["send_mail", "calendar_events", "no_such_tool"],
      maxTools: 1,
      budgetTokens: 1,
    });
    expect(out.choices.map((c) => [c.name, c.reason])).toEqual([
      ["echo", "always"],
      ["send_mail", "hinted"],
      ["calendar_events", "hinted"],
    ]);
    const by = assembleTools(catalogue, {
      query: "weather",
      hintedTools: ["send_mail"],
      hintedBy: new Map([["send_mail", ["mail-skill", "other-skill"]]]),
      maxTools: 1,
      budgetTokens: 1,
    });
    expect(by.choices.find((c) => c.name === "send_mail")).toEqual({
      name: "send_mail",
      reason: "hinted",
      hinted_by: ["mail-skill", "other-skill"],
    });
    const room = estimateToolTokens(catalogue[0]!) + estimateToolTokens(catalogue[2]!);
    const budgeted = assembleTools(catalogue, { query: "weather in Paris", maxTools: 10, budgetTokens: room });
    expect(budgeted.choices.map((c) => c.name)).toEqual(["echo", "weather_forecast"]);
    expect(budgeted.tokens).toBeLessThanOrEqual(room);
  });

  it("fills free slots in tool-set order when nothing matches, and is deterministic", () => {
    const a = assembleTools(catalogue, { query: "hello", maxTools: 3, budgetTokens: 10_000 });
    expect(a.choices.map((c) => c.name)).toEqual(["echo", "current_time", "weather_forecast"]);
    expect(assembleTools(catalogue, { query: "hello", maxTools: 3, budgetTokens: 10_000 })).toEqual(a);
  });

  it("splits names and drops stop words when matching", () => {
    expect(terms("gitea_pullRequest for the PR")).toEqual(["gitea", "pull", "request", "pr"]);
    const [time, weather] = relevanceScores([catalogue[1]!, catalogue[2]!], "what is the current time");
    expect(time!).toBeGreaterThan(weather!);
  });

  it("toolchain and mail sets keep their domain tools however small max_tools is", () => {
    const sets = registeredToolsets();
    for (const name of ["toolchain", "mail"]) {
      const specs = sets.get(name)!();
      const domain = specs.filter((s) => s.always).map((s) => s.name);
      expect(domain.length).toBeGreaterThan(0);
      const out = assembleTools(specs, { query: "anything", maxTools: 1, budgetTokens: 100 });
      expect(out.specs.map((s) => s.name)).toEqual(expect.arrayContaining(domain));
    }
    expect(sets.get("toolchain")!().some((s) => s.always && s.name.includes("report"))).toBe(true);
    // `delegate` in chat and code sessions only (docs/delegation.md, "Which tool sets offer it").
    const offering = [...sets].filter(([, make]) => make().some((s) => s.name === "delegate")).map(([name]) => name);
    expect(offering.sort()).toEqual(["code", "default"]);
  });
});
