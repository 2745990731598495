/**
 * Memory's frozen snapshot (docs/memory.md): a fact the agent adds with `memory` during a run is saved
 * at once but is absent from that run's later model calls and present in the next run's system
 * prompt; an agent's run remembers its own scope plus the workspace's. Real D1 and DOs, scripted model.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, type TestWorkspace } from "../../support/api.ts";
import { ScriptedModel, doEvents, newSession, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";
import { addEntry } from "../../../src/domains/memory/store.ts";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";

const FACT = "The release train leaves on Thursdays.";

const systemOf = (model: ScriptedModel, i: number): string => {
  const first = model.calls[i]?.prompt[0];
  return first?.role === "system" ? first.content : "";
};

async function send(ws: TestWorkspace, sessionId: string, content: string) {
  const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body: { content } });
  expect(res.status).toBe(200);
  return json<{ run_id: string; status: string }>(res);
}

describe("memory snapshot", () => {
  it("a fact added during a run reaches the prompt only from the next run", async () => {
    const main = new ScriptedModel((i) =>
      i === 0 ? toolCalls({ id: "m1", name: "memory", args: { action: "add", store: "notes", text: FACT } }) : text("ok"),
    );
    const ws = await scriptedWorkspace(main);
    const sessionId = await newSession(ws);
    const first = await send(ws, sessionId, "remember the release day");
    expect(first.status).toBe("completed");
    expect(main.calls).toHaveLength(2);
    // Durable at once…
    const memory = await json<{ stores: { notes: { entries: { text: string }[] } } }>(await call("GET", "/api/memory", { token: ws.read }));
    expect(memory.stores.notes.entries.map((e) => e.text)).toEqual([FACT]);
    // …but the run that wrote it kept its snapshot: neither of its model calls saw it in the system prompt.
    expect(systemOf(main, 0)).not.toContain(FACT);
    expect(systemOf(main, 1)).not.toContain(FACT);
    expect(systemOf(main, 0)).not.toContain("# Memory");

    const second = await send(ws, sessionId, "when is the release?");
    expect(second.status).toBe("completed");
    expect(systemOf(main, 2)).toContain("# Memory");
    expect(systemOf(main, 2)).toContain(`- ${FACT}`);
    expect(systemOf(main, 2)).toContain("2% of 2,200 chars used");
    // The snapshot is stored with the run: its system_prompt_snapshotted event carries it.
    const snapshots = (await doEvents(sessionId, ws.id)).filter((e) => e.type === "system_prompt_snapshotted");
    expect(snapshots.map((e) => e.type === "system_prompt_snapshotted" && e.prompt.includes(FACT))).toEqual([false, true]);
    // The tool result told the model when the change shows.
    expect(main.promptText(1)).toContain("from the next run");
  });

  it("an agent's run remembers its own scope and the workspace's, not another agent's", async () => {
    const main = new ScriptedModel([text("ok")]);
    const ws = await scriptedWorkspace(main);
    const actor = { kind: "token", id: "test" } as const;
    await addEntry(env, { workspaceId: ws.id, agentId: "alpha" }, "notes", "ALPHA-OWN-FACT", actor);
    await addEntry(env, { workspaceId: ws.id, agentId: "beta" }, "notes", "BETA-OWN-FACT", actor);
    await addEntry(env, { workspaceId: ws.id, agentId: null }, "profile", "WORKSPACE-PROFILE-FACT", actor);
    const sessionId = `task:mem-${ws.id}`;
    await createSession(env, { workspaceId: ws.id, id: sessionId, title: "t", metadata: {} });
    const run = await submitRun(env, sessionId, { workspace_id: ws.id, content: "go", tool_data: { agent_id: "alpha" } });
    const result = await waitForRun(env, sessionId, run.run_id, 10_000, ws.id);
    expect(result.status).toBe("completed");
    const system = systemOf(main, 0);
    expect(system).toContain("ALPHA-OWN-FACT");
    expect(system).toContain("WORKSPACE-PROFILE-FACT");
    expect(system).toContain("read-only for you");
    expect(system).not.toContain("BETA-OWN-FACT");
  });
});
