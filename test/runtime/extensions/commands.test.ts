/**
 * Extensions the seed's way (docs/extensions.md; seed event-model-and-extensions.md): the shipped `/skills`
 * command answers without a model call (its output a `custom_message`, its state a `custom` event), an
 * unknown command is an assistant-visible message and no model call, a throwing command is isolated, an
 * extension's tools join the tool set, and `extensions: {name: {enabled: false}}` turns one off per
 * workspace. Real D1, R2 and DOs.
 */
import { afterEach, describe, expect, it } from "vitest";
import { z } from "zod";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, doEvents, newSession, scriptedWorkspace, text } from "../../support/sessions.ts";
import { testServices } from "../../support/test-services.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";
import type { CustomMessageEvent } from "../../../src/runtime/session/events.ts";

async function send(ws: TestWorkspace, sessionId: string, content: string) {
  const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body: { content } });
  expect(res.status).toBe(200);
  return json<{ run_id: string; status: string; output_text: string }>(res);
}

const commandMessages = async (ws: TestWorkspace, sid: string) =>
  (await doEvents(sid, ws.id)).filter((e): e is CustomMessageEvent => e.type === "custom_message");

afterEach(() => {
  testServices.extensions.length = 0;
});

describe("slash commands", () => {
  it("/skills answers from the run's activation without a model call, and records its state", async () => {
    const main = new ScriptedModel([text("a model answer")]);
    const ws = await scriptedWorkspace(main);
    const sid = await newSession(ws);
    const run = await send(ws, sid, "/skills");
    expect(run.status).toBe("completed");
    expect(run.output_text).toMatch(/^No skill was activated for this run\.\n\nAvailable: .*beaver-skill-authoring/);
    expect(main.calls).toHaveLength(0);
    const [answer] = await commandMessages(ws, sid);
    expect(answer).toMatchObject({ kind: "command:skills", run_id: run.run_id, message: { role: "assistant", text: run.output_text } });
    const custom = (await doEvents(sid, ws.id)).find((e) => e.type === "custom");
    expect(custom).toMatchObject({ kind: "skills:listed", run_id: run.run_id, data: { activated: [] } });
    // The transcript shows it; a later model step sees it as an assistant message.
    const next = await send(ws, sid, "thanks");
    expect(next.output_text).toBe("a model answer");
    expect(JSON.stringify(main.calls[0]!.prompt)).toContain("No skill was activated for this run.");
  });

  it("an unknown command is an assistant-visible message and no model call; a path is not a command", async () => {
    const main = new ScriptedModel([text("about the path")]);
    const ws = await scriptedWorkspace(main);
    const sid = await newSession(ws);
    const run = await send(ws, sid, "/nope with args");
    expect(run.status).toBe("completed");
    expect(run.output_text).toContain("There is no command /nope.");
    expect(run.output_text).toContain("/skills — List the skills");
    expect(main.calls).toHaveLength(0);
    expect((await commandMessages(ws, sid)).map((e) => e.kind)).toEqual(["command:unknown"]);
    expect((await send(ws, sid, "/etc/hosts looks odd")).output_text).toBe("about the path");
    expect(main.calls).toHaveLength(1);
  });

  it("an extension can be disabled per workspace; a throwing command is isolated; an extension's tools are offered", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    testServices.extensions.push({
      name: "flaky",
      tools: [
        defineTool({
          name: "flaky_tool",
          description: "A tool from an extension.",
          input: z.strictObject({}),
          execute: async () => ok("x"),
        }),
      ],
      commands: [
        {
          name: "boom",
          description: "Always throws.",
          run: () => {
            throw new Error("kaput");
          },
        },
      ],
    });
    const sid = await newSession(ws);
    const boom = await send(ws, sid, "/boom");
    expect(boom).toMatchObject({ status: "completed", output_text: "The command /boom failed: kaput" });
    await send(ws, sid, "hello");
    expect((main.calls[0]?.tools ?? []).map((t) => t.name)).toContain("flaky_tool");

    const current = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    const put = await call("PUT", "/api/config", {
      token: ws.admin,
      body: { model: current.model, extensions: { skills: { enabled: false }, flaky: { enabled: false } } },
    });
    expect(put.status).toBe(200);
    const off = await send(ws, sid, "/skills");
    expect(off.output_text).toContain("There is no command /skills.");
    expect(main.calls).toHaveLength(1);
    await send(ws, sid, "hello again");
    expect((main.calls[1]?.tools ?? []).map((t) => t.name)).not.toContain("flaky_tool");
  });

  it("refuses a malformed extensions section", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const bad = await call("PUT", "/api/config", { token: ws.admin, body: { extensions: { Skills: { enabled: "no" } } } });
    expect(bad.status).toBe(400);
  });
});
