// GET /api/usage (src/runtime/session/usage-report.ts, docs/console.md "Usage"): token usage of the
// workspace's runs by day, model, agent and session, from D1's replicated runs. The model is scripted.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { ScriptedModel, USAGE, newSession, scriptedWorkspace, text } from "../../support/sessions.ts";

interface Row {
  key: string;
  label?: string | null;
  runs: number;
  input_tokens: number;
  output_tokens: number;
  total_tokens: number;
}
interface Report {
  days: Row[];
  models: Row[];
  agents: Row[];
  sessions: Row[];
}

describe("GET /api/usage", () => {
  it("sums the runs' usage by day, model, agent and session, in the caller's workspace only", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel(() => text("ok")));
    const a = await newSession(ws, { title: "two runs" });
    const b = await newSession(ws, { title: "agent run", metadata: { agent_id: "reviewer" } });
    for (const [id, content] of [
      [a, "one"],
      [a, "two"],
      [b, "three"],
    ] as const) {
      expect((await call("POST", `/api/sessions/${id}/messages?wait=true`, { token: ws.member, body: { content } })).status).toBe(200);
    }
    for (const id of [a, b]) expect(await SessionClient.of(env, id).flushReplication()).toBe(true);
    const res = await call("GET", "/api/usage?days=7", { token: ws.read });
    expect(res.status).toBe(200);
    const report = await json<Report>(res);
    const per = USAGE.inputTokens.total! + USAGE.outputTokens.total!;
    expect(report.days).toHaveLength(1);
    expect(report.days[0]).toMatchObject({ key: new Date().toISOString().slice(0, 10), runs: 3, total_tokens: 3 * per });
    expect(report.models).toHaveLength(1);
    expect(report.agents.map((r) => [r.key, r.runs])).toEqual([
      ["chat", 2],
      ["reviewer", 1],
    ]);
    expect(report.sessions.map((r) => [r.key, r.label, r.runs])).toEqual([
      [a, "two runs", 2],
      [b, "agent run", 1],
    ]);
    const other = await newWorkspace();
    expect((await json<Report>(await call("GET", "/api/usage", { token: other.read }))).days).toEqual([]);
    expect((await call("GET", "/api/usage?days=0", { token: ws.read })).status).toBe(400);
  });
});
