/**
 * The runtime notions evaluation runs rest on (docs/evaluation.md, "Isolation"): a dry run answers an
 * `outward` tool without executing it (the model reads that it was not executed, the call stays in the
 * log) while other tools run as usual; an isolated session is never replicated to D1.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { z } from "zod";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { defineTool, ok } from "../../../src/runtime/tools/spec.ts";
import { ScriptedModel, doEvents, registerToolset, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";
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
});
