/**
 * Issue 25, item 8: with only request lines, an operator could not find a run in Workers Logs. Each
 * finished run now writes one JSON line (src/runtime/session/run-log-line.ts) with its ids, workspace,
 * status, model, tokens, duration and tool count — whatever BEAVER_ACCESS_LOG says.
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { RUN_END_MESSAGE, runEndLine } from "../../../src/runtime/session/run-log-line.ts";
import { ScriptedModel, countingTool, registerToolset, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";

afterEach(() => vi.restoreAllMocks());

/** JSON lines written to the console from now on (the Durable Object runs in this isolate). */
function captureLogs(): Record<string, unknown>[] {
  const lines: Record<string, unknown>[] = [];
  const keep = (...args: unknown[]) => {
    if (typeof args[0] !== "string") return;
    try {
      lines.push(JSON.parse(args[0]) as Record<string, unknown>);
    } catch {
      // not one of ours
    }
  };
  for (const level of ["log", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation(keep);
  return lines;
}

describe("the run's log line", () => {
  it("is written once per finished run with ids, workspace, status, model, tokens, duration and tool count", async () => {
    const probe = countingTool("log_probe");
    const toolset = registerToolset("run-log-probe", [probe.spec]);
    const ws = await scriptedWorkspace(
      new ScriptedModel([
        toolCalls({ id: "c1", name: "log_probe", args: { n: 1 } }, { id: "c2", name: "log_probe", args: { n: 2 } }),
        text("done"),
      ]),
    );
    const session = await createSession(env, { workspaceId: ws.id });
    const lines = captureLogs();
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "go", toolset });
    const result = await waitForRun(env, session.id, run_id, 10_000);
    expect(result.status).toBe("completed");
    const mine = lines.filter((l) => l.msg === RUN_END_MESSAGE && l.run_id === run_id);
    expect(mine).toHaveLength(1);
    expect(mine[0]).toMatchObject({
      level: "info",
      run_id,
      session_id: session.id,
      workspace_id: ws.id,
      status: "completed",
      error_code: null,
      model: expect.stringMatching(/^main-/),
      tool_calls: 2,
      tool_steps: 1,
      attempts: 1,
      total_tokens: result.usage.total_tokens,
    });
    expect(mine[0]!.total_tokens).toBeGreaterThan(0);
    expect(mine[0]!.duration_ms).toEqual(expect.any(Number));
  });

  it("builds its fields from the run's data alone", () => {
    const line = runEndLine({
      result: {
        session_id: "ses_a",
        run_id: "run_b",
        status: "failed",
        output_text: "",
        finish_reason: "error",
        tool_iterations: 3,
        provider: "openai",
        model: "gpt-x",
        usage: { input_tokens: 10, output_tokens: 5, total_tokens: 15 },
        error: { code: "upstream_unavailable", message: "HTTP 503" },
      },
      workspaceId: "ws-c",
      clientId: "api",
      startedAt: 1_000,
      endedAt: 4_500,
      toolCalls: 4,
      attempts: 2,
    });
    expect(line).toEqual({
      run_id: "run_b",
      session_id: "ses_a",
      workspace_id: "ws-c",
      client_id: "api",
      status: "failed",
      finish_reason: "error",
      error_code: "upstream_unavailable",
      provider: "openai",
      model: "gpt-x",
      input_tokens: 10,
      output_tokens: 5,
      total_tokens: 15,
      cache_read_tokens: 0,
      duration_ms: 3_500,
      tool_calls: 4,
      tool_steps: 3,
      attempts: 2,
    });
  });
});
