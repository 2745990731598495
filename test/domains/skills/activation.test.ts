/**
 * Skills reach the agent (docs/skills-and-plugins.md, "Skills in a run"): per-run selection over the
 * workspace's current skills, the hidden `skill_activation_snapshotted` event, the `skills` prompt
 * section and the skill messages as the scripted model received them, explicit activation, the
 * `skill_view` tool, isolation (disabled, other workspaces), `allowed-tools` as tool-assembly hints,
 * session pins, and freezing for the run (also across an eviction). Real D1, R2 and DOs.
 */
import { describe, expect, it } from "vitest";
import { MockEmbeddingModelV4 } from "ai/test";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import {
  ScriptedModel,
  countingTool,
  deferred,
  doEvents,
  newSession,
  registerModel,
  registerToolset,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
  generated,
} from "../../support/sessions.ts";
import { testServices } from "../../support/test-services.ts";
import { skillMd, toolkitSkill } from "../../fixtures/skills/bundles.ts";
import { FIXTURE_SKILLS, fixtureSkill } from "../../fixtures/skills/agent-skills.ts";
import { tarGz, treeEntries } from "../../fixtures/skills/archives.ts";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { skillViewTool } from "../../../src/domains/skills/skill-view.ts";
import type {
  SkillActivationSnapshottedEvent,
  SystemPromptSnapshottedEvent,
  ToolResultMessage,
} from "../../../src/runtime/session/events.ts";

const COMIC_BODY = "# Comic steps\n\nMARKER-COMIC-BODY: sketch four panels, then ink them.\n";

async function putSkill(ws: TestWorkspace, name: string, files: Record<string, string>): Promise<void> {
  const res = await call("PUT", `/api/skills/${name}`, {
    token: ws.member,
    body: { files: Object.entries(files).map(([path, content]) => ({ path, content })) },
  });
  if (res.status !== 200) throw new Error(`publish ${name}: ${res.status} ${await res.text()}`);
}

async function uploadArchive(ws: TestWorkspace, name: string, files: Record<string, string | Uint8Array>): Promise<void> {
  const res = await call("PUT", `/api/skills/${name}/upload`, {
    token: ws.member,
    rawBody: await tarGz(treeEntries(files, name)),
    headers: { "Content-Type": "application/gzip" },
  });
  if (res.status !== 200) throw new Error(`upload ${name}: ${res.status} ${await res.text()}`);
}

async function send(ws: TestWorkspace, sessionId: string, body: Record<string, unknown>) {
  const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body });
  expect(res.status).toBe(200);
  return json<{ run_id: string; status: string; output_text: string }>(res);
}

async function activationOf(ws: TestWorkspace, sessionId: string, runId: string): Promise<SkillActivationSnapshottedEvent> {
  const events = await doEvents(sessionId, ws.id);
  const found = events.find((e): e is SkillActivationSnapshottedEvent => e.type === "skill_activation_snapshotted" && e.run_id === runId);
  if (!found) throw new Error("no skill_activation_snapshotted event");
  return found;
}

const systemOf = (model: ScriptedModel, i: number): string => {
  const first = model.calls[i]?.prompt[0];
  return first?.role === "system" ? first.content : "";
};

/** The texts of the user messages model call `i` received (skill messages and the user's own). */
const userTextsOf = (model: ScriptedModel, i: number): string[] =>
  (model.calls[i]?.prompt ?? []).flatMap((m) =>
    m.role === "user" ? [m.content.map((p) => (p.type === "text" ? p.text : "")).join("")] : [],
  );

/** The skill messages of model call `i`, joined ("" when there are none; docs/agent-loop.md, "Skill messages"). */
const skillTextOf = (model: ScriptedModel, i: number): string =>
  userTextsOf(model, i)
    .filter((t) => t.includes("<skill name="))
    .join("\n");

const hasActivation = async (ws: TestWorkspace, sessionId: string, runId: string): Promise<boolean> =>
  (await doEvents(sessionId, ws.id)).some((e) => e.type === "skill_activation_snapshotted" && e.run_id === runId);

const toolResults = async (ws: TestWorkspace, sessionId: string) =>
  (await doEvents(sessionId, ws.id)).flatMap((e) =>
    e.type === "message" && e.message.role === "tool_result" ? [e.message as ToolResultMessage] : [],
  );

describe("skills in a run", () => {
  it("activates a skill whose description matches the message: scores in the hidden event, body in a skill message", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics from a short script. Use when asked for a comic strip.", COMIC_BODY),
    });
    await putSkill(ws, "tax-forms", {
      "SKILL.md": skillMd("tax-forms", "Fills in German tax declarations (ELSTER). Use for income tax questions."),
    });
    const sid = await newSession(ws);
    const run = await send(ws, sid, { content: "Please draw me a comic strip about two cats" });
    expect(run.status).toBe("completed");

    const event = await activationOf(ws, sid, run.run_id);
    expect(event.skills.map((s) => s.name)).toEqual(["comic-toolkit"]);
    const comic = event.skills[0]!;
    expect(comic).toMatchObject({ version: "v0001", reason: "bm25_threshold" });
    expect(comic.content_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(comic.scores?.bm25).toBeGreaterThan(0);
    expect(comic.scores?.bm25_relative).toBe(1);
    expect(event.candidates?.[0]?.name).toBe("comic-toolkit");
    expect(event.rationale).toMatch(/threshold rule/);

    const system = systemOf(main, 0);
    expect(system).toContain("# Skills");
    expect(system).toContain("- tax-forms: Fills in German tax declarations");
    expect(system).toContain("- beaver-skill-authoring:"); // builtins are listed too
    // The body is its own message right before the user's, never in the system prompt (seed backend-flow.md §4.5).
    expect(system).not.toContain("MARKER-COMIC-BODY");
    const users = userTextsOf(main, 0);
    expect(users).toHaveLength(2);
    expect(users[0]).toMatch(/^<system-reminder>\n[^]*<skill name="comic-toolkit">[^]*MARKER-COMIC-BODY/);
    expect(users[0]).not.toContain("description: Draws four-panel"); // frontmatter stripped
    expect(users[1]).toBe("Please draw me a comic strip about two cats");
    // Never logged: the transcript holds the user's message only.
    const logged = (await doEvents(sid, ws.id)).filter((e) => e.type === "message" && e.message.role === "user");
    expect(JSON.stringify(logged)).not.toContain("MARKER-COMIC-BODY");
  });

  it("activates nothing when nothing matches, and activates an explicitly named skill", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics from a short script. Use when asked for a comic strip.", COMIC_BODY),
    });
    const sid = await newSession(ws);

    // No match: no skill message and no activation event (seed backend-flow.md §4.5).
    const none = await send(ws, sid, { content: "What time is it in Berlin?" });
    expect(await hasActivation(ws, sid, none.run_id)).toBe(false);
    expect(userTextsOf(main, 0)).toEqual(["What time is it in Berlin?"]);
    expect(systemOf(main, 0)).toContain("- comic-toolkit:");

    const explicit = await send(ws, sid, { content: "What time is it in Berlin?", skills: ["comic-toolkit", "no-such-skill"] });
    const e2 = await activationOf(ws, sid, explicit.run_id);
    expect(e2.skills.map((s) => [s.name, s.reason])).toEqual([["comic-toolkit", "explicit"]]);
    expect(e2.unknown).toEqual(["no-such-skill"]);
    expect(skillTextOf(main, 1)).toContain("MARKER-COMIC-BODY");

    // POST /api/chat takes `skills` too.
    const chat = await call("POST", "/api/chat", {
      token: ws.member,
      body: { message: "hello there", session_id: sid, skills: ["comic-toolkit"] },
    });
    expect(chat.status).toBe(200);
    expect(skillTextOf(main, 2)).toContain("MARKER-COMIC-BODY");
    const bad = await call("POST", "/api/chat", { token: ws.member, body: { message: "hi", skills: ["Not A Name"] } });
    expect(bad.status).toBe(400);
  });

  it("two runs of one session activating different skills get the same system prompt; the bodies only in skill messages", async () => {
    const main = new ScriptedModel([text("one"), text("two"), text("three")]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics from a short script. Use when asked for a comic strip.", COMIC_BODY),
    });
    await putSkill(ws, "tax-forms", {
      "SKILL.md": skillMd("tax-forms", "Fills in German tax declarations (ELSTER). Use for income tax questions.", "MARKER-TAX-BODY"),
    });
    const sid = await newSession(ws, { title: "fixed title" });
    const comic = await send(ws, sid, { content: "Please draw me a comic strip about two cats" });
    const tax = await send(ws, sid, { content: "Help me with my income tax declaration (ELSTER)" });
    const none = await send(ws, sid, { content: "What time is it in Berlin?" });
    expect((await activationOf(ws, sid, comic.run_id)).skills.map((s) => s.name)).toEqual(["comic-toolkit"]);
    expect((await activationOf(ws, sid, tax.run_id)).skills.map((s) => s.name)).toEqual(["tax-forms"]);

    // Identical but for the volatile tail, the runtime clock, which holds no skill.
    const [s0, s1, s2] = [0, 1, 2].map((i) => systemOf(main, i));
    const tail = (s: string) => s.slice(s.indexOf("# Runtime context"));
    const head = (s: string) => s.slice(0, s.indexOf("# Runtime context"));
    expect(head(s0!).length).toBeGreaterThan(0);
    expect(head(s1!)).toBe(head(s0!));
    expect(head(s2!)).toBe(head(s0!));
    for (const s of [s0!, s1!, s2!]) {
      expect(s).not.toContain("MARKER-COMIC-BODY");
      expect(s).not.toContain("MARKER-TAX-BODY");
      expect(tail(s).split("\n")[0]).toBe("# Runtime context");
      expect(tail(s)).not.toMatch(/skill/i);
    }
    const snapshots = (await doEvents(sid, ws.id)).filter((e): e is SystemPromptSnapshottedEvent => e.type === "system_prompt_snapshotted");
    expect(new Set(snapshots.map((e) => e.stable_chars)).size).toBe(1);

    // The second run's request: the first run's exchange, then its own skill message, then its user message.
    expect(skillTextOf(main, 0)).toContain("MARKER-COMIC-BODY");
    expect(skillTextOf(main, 0)).not.toContain("MARKER-TAX-BODY");
    expect(userTextsOf(main, 1)).toEqual([
      "Please draw me a comic strip about two cats",
      expect.stringContaining("MARKER-TAX-BODY"),
      "Help me with my income tax declaration (ELSTER)",
    ]);
    expect(skillTextOf(main, 1)).not.toContain("MARKER-COMIC-BODY");
    // A run matching no skill: no skill message, no activation event.
    expect(skillTextOf(main, 2)).toBe("");
    expect(await hasActivation(ws, sid, none.run_id)).toBe(false);
  });

  it("skill_view returns a supporting file byte-identical to the upload, describes binaries and lists close matches", async () => {
    const unicode = "# Größe — ✓\n\nLine with tabs\tand trailing spaces   \n\nno final newline";
    const main = new ScriptedModel([
      toolCalls(
        { id: "c1", name: "skill_view", args: { name: "comic-toolkit", path: "templates/panel.md" } },
        { id: "c2", name: "skill_view", args: { name: "comic-toolkit", path: "notes/unicode.md" } },
        { id: "c3", name: "skill_view", args: { name: "comic-toolkit", path: "assets/panel.png" } },
        { id: "c4", name: "skill_view", args: { name: "comic-tolkit" } },
        { id: "c5", name: "skill_view", args: { name: "comic-toolkit" } },
      ),
      text("done"),
    ]);
    const ws = await scriptedWorkspace(main);
    const files = toolkitSkill("comic-toolkit", { "notes/unicode.md": unicode });
    await uploadArchive(ws, "comic-toolkit", files);
    const sid = await newSession(ws);
    const run = await send(ws, sid, { content: "use the tool" });
    expect(run.status).toBe("completed");
    const results = await toolResults(ws, sid);
    expect(results.map((r) => r.is_error)).toEqual([false, false, false, true, false]);
    expect(results[0]!.content).toBe(files["templates/panel.md"]);
    expect(new TextEncoder().encode(results[1]!.content)).toEqual(new TextEncoder().encode(unicode));
    expect(results[2]!.content).toMatch(/^\[binary file\] assets\/panel\.png .*20 bytes, type image\/png/);
    expect(results[3]!.content).toMatch(/Close matches: comic-toolkit/);
    expect(results[4]!.content).toContain("Draws four-panel comics");
    expect(results[4]!.content).toContain("templates/panel.md");
  });

  it("never lists, activates or shows a disabled skill or another workspace's", async () => {
    const mainA = new ScriptedModel([text("ok")]);
    const a = await scriptedWorkspace(mainA);
    await putSkill(a, "secret-recipe", {
      "SKILL.md": skillMd("secret-recipe", "The secret sauce recipe for barbecue ribs. Use when cooking ribs.", "MARKER-SECRET"),
    });
    await putSkill(a, "old-recipe", {
      "SKILL.md": skillMd("old-recipe", "An outdated barbecue ribs recipe. Use when cooking ribs.", "MARKER-OLD"),
    });
    expect((await call("POST", "/api/skills/old-recipe/disable", { token: a.admin })).status).toBe(200);

    const view = (name: string) => ({ id: `v-${name}`, name: "skill_view", args: { name } });
    const mainB = new ScriptedModel([toolCalls(view("secret-recipe")), text("ok")]);
    const b = await scriptedWorkspace(mainB);
    const sidB = await newSession(b);
    const runB = await send(b, sidB, { content: "How do I cook barbecue ribs with the secret sauce recipe?", skills: ["secret-recipe"] });
    const eB = await activationOf(b, sidB, runB.run_id);
    expect(eB.skills).toEqual([]);
    expect(eB.unknown).toEqual(["secret-recipe"]);
    expect(JSON.stringify(mainB.calls)).not.toMatch(/secret-recipe\b.*sauce|MARKER-SECRET/);
    expect(systemOf(mainB, 0)).not.toContain("secret-recipe");
    const [viewB] = await toolResults(b, sidB);
    expect(viewB).toMatchObject({ is_error: true });
    expect(viewB!.content).toMatch(/No skill 'secret-recipe'/);

    const mainA2 = new ScriptedModel([toolCalls(view("old-recipe")), text("ok")]);
    const a2Model = registerModel(mainA2);
    const sidA = await newSession(a);
    // Same workspace, this run on another scripted model (PUT the config with it as main).
    expect(
      (
        await call("PUT", "/api/config", {
          token: a.admin,
          body: { model: { provider: "openai-compatible", id: a2Model, base_url: "http://scripted.test/v1" } },
        })
      ).status,
    ).toBe(200);
    const runA = await send(a, sidA, { content: "How do I cook barbecue ribs?", skills: ["old-recipe"] });
    const eA = await activationOf(a, sidA, runA.run_id);
    expect(eA.skills.map((s) => s.name)).toEqual(["secret-recipe"]);
    expect(eA.unknown).toEqual(["old-recipe"]);
    expect(systemOf(mainA2, 0)).not.toContain("old-recipe");
    expect(systemOf(mainA2, 0)).not.toContain("MARKER-OLD");
    const [viewA] = await toolResults(a, sidA);
    expect(viewA!.is_error).toBe(true);
  });

  it("a skill published during a run does not change that run; the next run sees it", async () => {
    const wait = countingTool("wait_here", { idempotent: true });
    const gate = deferred();
    wait.state.gate = gate.promise;
    const toolset = registerToolset("skills-midrun", [wait.spec, skillViewTool]);
    const main = new ScriptedModel([toolCalls({ id: "w1", name: "wait_here", args: {} }), text("done"), text("again")]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics. Use when asked for a comic strip.", "MARKER-V1"),
    });
    const sid = await newSession(ws);
    const { run_id } = await submitRun(env, sid, { workspace_id: ws.id, content: "draw a comic strip", toolset });
    const pending = waitForRun(env, sid, run_id, 30_000, ws.id);
    await until(() => wait.state.runs === 1, 10_000, "the tool to start");
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics. Use when asked for a comic strip.", "MARKER-V2"),
    });
    await putSkill(ws, "comic-colours", {
      "SKILL.md": skillMd("comic-colours", "Colours comic strip panels. Use when asked for a comic strip.", "MARKER-NEW"),
    });
    gate.resolve();
    const run = await pending;
    expect(run.status).toBe("completed");
    expect(main.calls).toHaveLength(2);
    expect(systemOf(main, 1)).toBe(systemOf(main, 0));
    expect(skillTextOf(main, 1)).toContain("MARKER-V1");
    expect(skillTextOf(main, 1)).not.toContain("MARKER-V2");
    expect(systemOf(main, 1)).not.toContain("comic-colours");
    const event = await activationOf(ws, sid, run.run_id);
    expect(event.skills.map((s) => [s.name, s.version])).toEqual([["comic-toolkit", "v0001"]]);

    const next = await send(ws, sid, { content: "draw a comic strip" });
    expect(skillTextOf(main, 2)).toContain("MARKER-V2");
    expect((await activationOf(ws, sid, next.run_id)).skills.find((s) => s.name === "comic-toolkit")?.version).toBe("v0002");
  });

  it("selects each real Agent Skills bundle for a message that plainly needs it, without an auxiliary model", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    for (const name of FIXTURE_SKILLS) {
      const files = Object.fromEntries(fixtureSkill(name).map((f) => [f.path, new TextDecoder().decode(f.bytes)]));
      await putSkill(ws, name, files);
    }
    const cases: [string, string][] = [
      ["build an MCP server for the GitHub API", "mcp-builder"],
      ["help me create a new skill", "skill-creator"],
      ["make this slide follow Anthropic's brand colours", "brand-guidelines"],
      ["call the Claude API from Python with streaming", "claude-api"],
    ];
    for (const [message, expected] of cases) {
      const sid = await newSession(ws);
      const run = await send(ws, sid, { content: message });
      const event = await activationOf(ws, sid, run.run_id);
      expect(
        event.skills.map((s) => s.name),
        message,
      ).toContain(expected);
      expect(event.skills[0]?.name, message).toBe(expected);
    }
  });

  it("lets the auxiliary model choose among the recalled candidates, with its reason recorded", async () => {
    const main = new ScriptedModel([text("ok")]);
    const aux = new ScriptedModel([text("unused")]);
    const auxCalls: unknown[] = [];
    aux.model.doGenerate = async (options) => {
      auxCalls.push(options.prompt);
      return generated(JSON.stringify({ skills: ["tax-forms", "invented-skill"], reason: "the user asks about taxes" }));
    };
    const ws = await scriptedWorkspace(main);
    const mainId = registerModel(main);
    const auxId = registerModel(aux);
    const config = {
      model: { provider: "openai-compatible", id: mainId, base_url: "http://scripted.test/v1" },
      auxiliary_model: { provider: "openai-compatible", id: auxId, base_url: "http://scripted.test/v1" },
    };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);
    await putSkill(ws, "tax-forms", {
      "SKILL.md": skillMd("tax-forms", "Fills in German tax declarations. Use for income tax questions.", "MARKER-TAX"),
    });
    await putSkill(ws, "comic-toolkit", { "SKILL.md": skillMd("comic-toolkit", "Draws comics about any topic.", COMIC_BODY) });
    const sid = await newSession(ws);
    const run = await send(ws, sid, { content: "Can you explain my income tax declaration?" });
    const event = await activationOf(ws, sid, run.run_id);
    expect(event.skills.map((s) => [s.name, s.reason])).toEqual([["tax-forms", "auxiliary_model"]]);
    expect(event.rationale).toContain("the user asks about taxes");
    expect(skillTextOf(main, 0)).toContain("MARKER-TAX");
    const auxPrompt = JSON.stringify(auxCalls[0]);
    expect(auxPrompt).toContain("tax-forms");
  });

  it("adds embedding recall when embedding_model is configured, caching each version's vector", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    const mainId = registerModel(main);
    // A toy embedding: one dimension per topic word.
    const topics = ["comic", "tax", "cat"];
    const embedded: string[] = [];
    const embedding = new MockEmbeddingModelV4({
      doEmbed: async ({ values }) => {
        embedded.push(...values);
        return { embeddings: values.map((v) => topics.map((t) => (v.toLowerCase().includes(t) ? 1 : 0.01))), warnings: [] };
      },
    });
    testServices.embeddingFactory = () => embedding;
    try {
      const config = {
        model: { provider: "openai-compatible", id: mainId, base_url: "http://scripted.test/v1" },
        embedding_model: { provider: "openai-compatible", id: "toy-embed", base_url: "http://embed.test/v1" },
      };
      expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);
      await putSkill(ws, "tax-forms", { "SKILL.md": skillMd("tax-forms", "Fills in tax declarations.", "MARKER-TAX") });
      const sid = await newSession(ws);
      const run = await send(ws, sid, { content: "my tax" });
      const event = await activationOf(ws, sid, run.run_id);
      const tax = event.candidates?.find((c) => c.name === "tax-forms");
      expect(tax?.scores.embedding).toBeGreaterThan(0.9);
      expect(event.skills.map((s) => s.name)).toContain("tax-forms");
      const firstCount = embedded.length;
      await send(ws, sid, { content: "my tax again" });
      // Only the message (for skill recall and for tool ranking, docs/agent-loop.md "Tool assembly"): the skills'
      // vectors came from D1, the tool descriptions' from the isolate.
      expect(embedded.slice(firstCount)).toEqual(["my tax again", "my tax again"]);
    } finally {
      testServices.embeddingFactory = null;
    }
  });

  it("offers the tools an activated skill's allowed-tools names, past max_tools; the choice says which skill named them", async () => {
    const tools = ["alpha_tool", "beta_tool", "zebra_sort"].map((n) => countingTool(n).spec);
    const toolset = registerToolset("skills-hinted", tools);
    const main = new ScriptedModel([text("plain"), text("with skill")]);
    const ws = await scriptedWorkspace(main, { runtime: { max_tools: 3 } });
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md":
        "---\nname: comic-toolkit\ndescription: Draws four-panel comics. Use when asked for a comic strip.\n" +
        "allowed-tools: zebra_sort no_such_tool\n---\n\nMARKER-COMIC-BODY\n",
    });
    const sid = await newSession(ws);
    const toolsOf = async (runId: string) => {
      const events = await doEvents(sid, ws.id);
      const snap = events.find((e): e is SystemPromptSnapshottedEvent => e.type === "system_prompt_snapshotted" && e.run_id === runId);
      return snap?.tools;
    };
    const offered = (i: number) => (main.calls[i]?.tools ?? []).map((t) => t.name).sort();

    // Relevance alone (nothing matches): the first three of the tool set; zebra_sort is left out.
    const plain = await submitRun(env, sid, { workspace_id: ws.id, content: "What time is it in Berlin?", toolset });
    expect((await waitForRun(env, sid, plain.run_id, 30_000, ws.id)).status).toBe("completed");
    expect(await hasActivation(ws, sid, plain.run_id)).toBe(false);
    expect((await toolsOf(plain.run_id))?.left_out).toContain("zebra_sort");
    expect(offered(0)).not.toContain("zebra_sort");

    const hinted = await submitRun(env, sid, { workspace_id: ws.id, content: "Please draw a comic strip about two cats", toolset });
    expect((await waitForRun(env, sid, hinted.run_id, 30_000, ws.id)).status).toBe("completed");
    const activation = await activationOf(ws, sid, hinted.run_id);
    expect(activation.skills.map((s) => [s.name, s.allowed_tools])).toEqual([["comic-toolkit", ["zebra_sort", "no_such_tool"]]]);
    const assembled = await toolsOf(hinted.run_id);
    expect(assembled?.max_tools).toBe(3);
    expect(assembled?.chosen).toContainEqual({ name: "zebra_sort", reason: "hinted", hinted_by: ["comic-toolkit"] });
    expect(assembled?.chosen.map((c) => c.name)).not.toContain("no_such_tool");
    expect(assembled?.chosen).toHaveLength(3);
    expect(offered(1)).toContain("zebra_sort");
    expect(offered(1)).toHaveLength(3);
  });

  it("a run resumed after an eviction keeps its frozen activation, though the skill changed and was disabled meanwhile", async () => {
    const once = countingTool("once_tool");
    const extra = countingTool("zebra_sort");
    const toolset = registerToolset("skills-evicted", [once.spec, extra.spec, skillViewTool]);
    const main = new ScriptedModel([toolCalls({ id: "o1", name: "once_tool", args: {} }), { hang: true }, text("resumed answer")]);
    const ws = await scriptedWorkspace(main);
    const description = "Draws four-panel comics. Use when asked for a comic strip.";
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": `---\nname: comic-toolkit\ndescription: ${description}\nallowed-tools: zebra_sort\n---\n\nMARKER-V1\n`,
    });
    const sid = await newSession(ws);
    const { run_id } = await submitRun(env, sid, { workspace_id: ws.id, content: "draw a comic strip", toolset });
    await until(() => main.calls.length === 2, 10_000, "the second model call");

    // Evicted as a crash would; while it is gone, the skill gets a new version and is then disabled.
    await abortAllDurableObjects();
    await putSkill(ws, "comic-toolkit", { "SKILL.md": skillMd("comic-toolkit", description, "MARKER-V2") });
    expect((await call("POST", "/api/skills/comic-toolkit/disable", { token: ws.admin })).status).toBe(200);
    expect(await runDurableObjectAlarm(stub(sid))).toBe(true);

    const run = await waitForRun(env, sid, run_id, 30_000, ws.id);
    expect(run).toMatchObject({ status: "completed", output_text: "resumed answer" });
    expect(once.state.runs).toBe(1);
    expect(main.calls).toHaveLength(3);
    expect(skillTextOf(main, 0)).toContain("MARKER-V1");
    expect(systemOf(main, 2)).toBe(systemOf(main, 0));
    expect(skillTextOf(main, 2)).toBe(skillTextOf(main, 0));
    expect(skillTextOf(main, 2)).not.toContain("MARKER-V2");
    const toolNames = (i: number) => (main.calls[i]?.tools ?? []).map((t) => t.name);
    expect(toolNames(0)).toContain("zebra_sort");
    expect(toolNames(2)).toEqual(toolNames(0));
    const events = await doEvents(sid, ws.id);
    const activations = events.filter((e) => e.type === "skill_activation_snapshotted" && e.run_id === run_id);
    expect(activations).toHaveLength(1);
    expect((activations[0] as SkillActivationSnapshottedEvent).skills.map((s) => [s.name, s.version])).toEqual([
      ["comic-toolkit", "v0001"],
    ]);
    expect(events.filter((e) => e.type === "system_prompt_snapshotted" && e.run_id === run_id)).toHaveLength(1);

    // The next run selects afresh: the disabled skill is gone.
    const next = await submitRun(env, sid, { workspace_id: ws.id, content: "draw a comic strip", toolset });
    await waitForRun(env, sid, next.run_id, 30_000, ws.id);
    expect(await hasActivation(ws, sid, next.run_id)).toBe(false);
  });

  it("activates the session's metadata.skills for each of its runs, as pinned", async () => {
    const main = new ScriptedModel([text("one"), text("two")]);
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "comic-toolkit", {
      "SKILL.md": skillMd("comic-toolkit", "Draws four-panel comics from a short script. Use when asked for a comic strip.", COMIC_BODY),
    });
    const sid = await newSession(ws, { metadata: { skills: ["comic-toolkit", "not-offered"] } });
    for (const [i, content] of ["What time is it in Berlin?", "And in Tokyo?"].entries()) {
      const run = await send(ws, sid, { content });
      const event = await activationOf(ws, sid, run.run_id);
      expect(event.skills.map((s) => [s.name, s.reason])).toEqual([["comic-toolkit", "pinned"]]);
      expect(event.unknown).toEqual(["not-offered"]);
      expect(skillTextOf(main, i)).toContain("MARKER-COMIC-BODY");
    }
  });
});
