/**
 * The runtime notions evaluation runs rest on (docs/evaluation.md, "Isolation"): a dry run answers an
 * `outward` tool without executing it (the model reads that it was not executed, the call stays in the
 * log) while other tools run as usual; an isolated session is never replicated to D1; a run's skill
 * override replaces the skill's current version for that run only.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { z } from "zod";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";
import {
  ScriptedModel,
  doEvents,
  registerModel,
  registerToolset,
  scriptedWorkspace,
  text,
  toolCalls,
  generated,
} from "../../support/sessions.ts";
import { call, json } from "../../support/api.ts";

function outwardTool() {
  const state = { runs: 0 };
  const spec = defineTool({
    name: "send_letter",
    description: "sends a letter",
    input: z.strictObject({ to: z.string() }),
    outward: true,
    async execute() {
      state.runs++;
      return ok("sent");
    },
  });
  return { spec, state };
}

const toolResults = (events: Awaited<ReturnType<typeof doEvents>>) =>
  events.flatMap((e) => (e.type === "message" && e.message.role === "tool_result" ? [e.message] : []));

describe("dry runs and isolated sessions", () => {
  it("a dry run answers outward tools without running them; other tools run; a normal run executes them", async () => {
    const letter = outwardTool();
    const toolset = registerToolset("dry-run-letters", [letter.spec]);
    const script = () => [
      toolCalls({ id: "l1", name: "send_letter", args: { to: "Ada" } }, { id: "e1", name: "echo", args: { text: "still runs" } }),
      text("done"),
    ];
    const main = new ScriptedModel([...script(), ...script()]);
    const ws = await scriptedWorkspace(main);

    const dry = await createSession(env, { workspaceId: ws.id, isolated: true });
    const { run_id } = await submitRun(env, dry.id, { workspace_id: ws.id, content: "write to Ada", toolset, dry_run: true });
    expect((await waitForRun(env, dry.id, run_id, 10_000)).status).toBe("completed");
    expect(letter.state.runs).toBe(0);
    const [sent, echoed] = toolResults(await doEvents(dry.id, ws.id));
    expect(sent).toMatchObject({
      tool_name: "send_letter",
      is_error: false,
      content: expect.stringContaining("[dry run] Tool 'send_letter' was NOT executed"),
    });
    expect(sent!.content).toContain('{"to":"Ada"}');
    expect(echoed).toMatchObject({ tool_name: "echo", content: "still runs" });
    // The model read the dry-run result.
    expect(main.promptText(1)).toContain("was NOT executed");

    const real = await createSession(env, { workspaceId: ws.id });
    const second = await submitRun(env, real.id, { workspace_id: ws.id, content: "write to Ada", toolset });
    expect((await waitForRun(env, real.id, second.run_id, 10_000)).status).toBe("completed");
    expect(letter.state.runs).toBe(1);

    // Only the normal session reached D1: listed, and its events searchable; the isolated one is not.
    const listed = await json<{ sessions: { id: string }[] }>(await call("GET", "/api/sessions", { token: ws.read }));
    expect(listed.sessions.map((s) => s.id)).toEqual([real.id]);
    const events = await env.DB.prepare("SELECT count(*) AS n FROM session_events WHERE session_id = ?")
      .bind(dry.id)
      .first<{ n: number }>();
    expect(events!.n).toBe(0);
  });

  it("a run's skill override is what the run's skill selection and skill_view see", async () => {
    const main = new ScriptedModel([toolCalls({ id: "v1", name: "skill_view", args: { name: "tone" } }), text("read it")]);
    const ws = await scriptedWorkspace(main);
    const put = (body: string) =>
      call("PUT", "/api/skills/tone", {
        token: ws.member,
        body: { files: [{ path: "SKILL.md", content: `---\nname: tone\ndescription: Sets the tone.\n---\n\n${body}\n` }] },
      });
    expect((await put("OLD-TONE-RULE")).status).toBe(200);
    expect((await put("NEW-TONE-RULE")).status).toBe(200);
    const versions = await json<{ versions: { version: string; tree_hash: string; content_hash: string }[] }>(
      await call("GET", "/api/skills/tone/versions", { token: ws.read }),
    );
    const old = versions.versions.find((v) => v.version === "v0001")!;
    const session = await createSession(env, { workspaceId: ws.id, isolated: true });
    const override = {
      name: "tone",
      version: "draft:test",
      tree_hash: old.tree_hash,
      content_hash: old.content_hash,
      description: "Sets the tone.",
    };
    const { run_id } = await submitRun(env, session.id, {
      workspace_id: ws.id,
      content: "hello",
      pinned_skills: ["tone"],
      skill_overrides: [override],
    });
    expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
    // The activated body in the system prompt and skill_view's answer are the override's tree, not the current v0002.
    expect(main.promptText(0)).toContain("OLD-TONE-RULE");
    expect(main.promptText(0)).not.toContain("NEW-TONE-RULE");
    const [viewed] = toolResults(await doEvents(session.id, ws.id));
    expect(viewed).toMatchObject({ tool_name: "skill_view", is_error: false });
    expect(viewed!.content).toContain("OLD-TONE-RULE");
    const activation = (await doEvents(session.id, ws.id)).find((e) => e.type === "skill_activation_snapshotted") as unknown as {
      skills: { name: string; version: string }[];
    };
    expect(activation.skills).toEqual([expect.objectContaining({ name: "tone", version: "draft:test" })]);
  });

  it("skill_choice requested_only activates only the pinned skill and never asks the auxiliary model; auto does", async () => {
    const main = new ScriptedModel([text("one"), text("two")]);
    const aux = new ScriptedModel([text("unused")]);
    const auxCalls: unknown[] = [];
    aux.model.doGenerate = async (options) => {
      auxCalls.push(options.prompt);
      return generated(JSON.stringify({ skills: ["weather"], reason: "the user asks about the weather" }));
    };
    const ws = await scriptedWorkspace(main);
    const config = {
      model: { provider: "openai-compatible", id: registerModel(main), base_url: "http://scripted.test/v1" },
      auxiliary_model: { provider: "openai-compatible", id: registerModel(aux), base_url: "http://scripted.test/v1" },
    };
    expect((await call("PUT", "/api/config", { token: ws.admin, body: config })).status).toBe(200);
    const skill = (name: string, description: string) =>
      call("PUT", `/api/skills/${name}`, {
        token: ws.member,
        body: { files: [{ path: "SKILL.md", content: `---\nname: ${name}\ndescription: ${description}\n---\n\nBody of ${name}.\n` }] },
      });
    expect((await skill("tone", "Sets the tone of letters.")).status).toBe(200);
    expect((await skill("weather", "Answers questions about the weather forecast.")).status).toBe(200);
    const activationOf = async (sessionId: string) =>
      (await doEvents(sessionId, ws.id)).find((e) => e.type === "skill_activation_snapshotted") as unknown as {
        skills: { name: string; reason: string }[];
        rationale: string;
      };
    const runWith = async (skill_choice: "auto" | "requested_only") => {
      // Titled, as evaluation sessions are, so the auxiliary model is not asked for a title either.
      const session = await createSession(env, { workspaceId: ws.id, isolated: true, title: `skill choice ${skill_choice}` });
      const { run_id } = await submitRun(env, session.id, {
        workspace_id: ws.id,
        content: "What is the weather forecast for tomorrow?",
        pinned_skills: ["tone"],
        skill_choice,
      });
      expect((await waitForRun(env, session.id, run_id, 10_000)).status).toBe("completed");
      return activationOf(session.id);
    };

    const only = await runWith("requested_only");
    expect(only.skills.map((s) => [s.name, s.reason])).toEqual([["tone", "pinned"]]);
    expect(only.rationale).toContain("requested_only");
    expect(auxCalls).toHaveLength(0);

    // The same message with the automatic choice asks the auxiliary model, which adds the matching skill.
    const auto = await runWith("auto");
    expect(auto.skills.map((s) => s.name).sort()).toEqual(["tone", "weather"]);
    expect(auxCalls).toHaveLength(1);
  });
});
