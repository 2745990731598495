/**
 * The config row the edge reads beside a run's rate limits (edge/http/run-preread.ts; docs/performance.md,
 * "The run's config read beside its rate limits"): a run that opens at once parses that row instead of
 * reading D1 again, on the RPC and the stream submit alike; a run queued behind another reads D1 afresh
 * when it opens, so a config saved while it waited applies to it. The rows handed in here differ from
 * D1 on purpose, so the prompt says which one the run opened with.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { readConfigAndRevision, type ConfigAndRevisionRow } from "../../../src/storage/config/store.ts";
import { ScriptedModel, deferred, doEvents, readSse, scriptedWorkspace, text, until } from "../../support/sessions.ts";
import { call, json } from "../../support/api.ts";

/** The workspace's row as D1 holds it, with the time zone swapped: what only a run that used this row can show. */
async function rowWithZone(workspaceId: string, timezone: string): Promise<ConfigAndRevisionRow> {
  const row = await readConfigAndRevision(env, workspaceId);
  const config = JSON.parse(row.config!) as { runtime?: Record<string, unknown> };
  return { ...row, config: JSON.stringify({ ...config, runtime: { ...config.runtime, timezone } }) };
}

/** The time zone each run's system prompt was snapshotted with, by run id. */
async function promptZones(sessionId: string, workspaceId: string): Promise<Record<string, string>> {
  const zones: Record<string, string> = {};
  for (const e of await doEvents(sessionId, workspaceId))
    if (e.type === "system_prompt_snapshotted") zones[e.run_id!] = /Time zone: (\S+)/.exec(e.prompt)?.[1] ?? "";
  return zones;
}

describe("the config read beside a run's rate limits", () => {
  it("a run that opens at once uses the row read for its request, through submitAndWait and the stream submit", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("one"), text("two"), text("three")]), {
      runtime: { timezone: "Asia/Tokyo" },
    });
    const session = await createSession(env, { workspaceId: ws.id });
    const client = SessionClient.of(env, session.id);

    const waited = await client.submitAndWait({ workspace_id: ws.id, content: "a" }, 10_000, await rowWithZone(ws.id, "Europe/Berlin"));
    expect(waited.result.status).toBe("completed");
    const streamed = await client.submitSse({ workspace_id: ws.id, content: "b" }, await rowWithZone(ws.id, "America/Lima"));
    const streamedRun = streamed.headers.get("X-Run-Id")!;
    await readSse(streamed); // the run's frames, until it ends
    expect((await waitForRun(env, session.id, streamedRun, 10_000)).status).toBe("completed");
    // Without a row, the session reads D1 as before.
    const plain = await client.submitAndWait({ workspace_id: ws.id, content: "c" }, 10_000);
    expect(plain.result.status).toBe("completed");

    expect(await promptZones(session.id, ws.id)).toEqual({
      [waited.submitted.run_id]: "Europe/Berlin",
      [streamedRun]: "America/Lima",
      [plain.submitted.run_id]: "Asia/Tokyo",
    });
  });

  it("a run queued behind another reads the config when it opens, so a change saved while it waited applies", async () => {
    const gate = deferred();
    const main = new ScriptedModel([{ parts: text("first"), gate: gate.promise }, text("second")]);
    const ws = await scriptedWorkspace(main, { runtime: { timezone: "Asia/Tokyo" } });
    const session = await createSession(env, { workspaceId: ws.id });
    const client = SessionClient.of(env, session.id);

    const first = await client.submit({ workspace_id: ws.id, content: "first" }, await readConfigAndRevision(env, ws.id));
    await until(() => main.calls.length === 1, 5_000, "the first run's model call");
    // Queued behind the first run, with the row as it stands now (Tokyo).
    const second = await client.submit({ workspace_id: ws.id, content: "second" }, await readConfigAndRevision(env, ws.id));
    expect(second.status).toBe("queued");
    const config = await json<Record<string, unknown>>(await call("GET", "/api/config", { token: ws.admin }));
    expect(
      (await call("PUT", "/api/config", { token: ws.admin, body: { ...config, runtime: { timezone: "Europe/Berlin" } } })).status,
    ).toBe(200);
    gate.resolve();
    expect((await waitForRun(env, session.id, second.run_id, 10_000)).status).toBe("completed");

    expect(await promptZones(session.id, ws.id)).toEqual({ [first.run_id]: "Asia/Tokyo", [second.run_id]: "Europe/Berlin" });
  });
});
