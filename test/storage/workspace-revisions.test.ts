/**
 * The workspace content revision (docs/performance.md, "Run-open reads"): triggers give a workspace a
 * new revision on every change to its skills, skill versions, memory, config, secrets and toolchain
 * agents, and a run reuses the skill
 * catalog and memory snapshot read under the revision it opens with — so a change is seen by the next
 * run, and an unchanged workspace is not read again. Real D1 and DOs, scripted model.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, type TestWorkspace } from "../support/api.ts";
import { ScriptedModel, newSession, scriptedWorkspace, text } from "../support/sessions.ts";
import { addEntry } from "../../src/domains/memory/store.ts";
import { loadConfigAndRevision } from "../../src/storage/config/store.ts";
import { skillMd } from "../fixtures/skills/bundles.ts";

const revisionOf = async (workspaceId: string) => (await loadConfigAndRevision(env, workspaceId)).revision;
const actor = { kind: "token", id: "test" } as const;

const systemOf = (model: ScriptedModel, i: number): string => {
  const first = model.calls[i]?.prompt[0];
  return first?.role === "system" ? first.content : "";
};

async function send(ws: TestWorkspace, sessionId: string, content: string) {
  const res = await call("POST", `/api/sessions/${sessionId}/messages?wait=true`, { token: ws.member, body: { content } });
  expect(res.status).toBe(200);
  expect((await json<{ status: string }>(res)).status).toBe("completed");
}

async function putSkill(ws: TestWorkspace, name: string, description: string): Promise<void> {
  const res = await call("PUT", `/api/skills/${name}`, {
    token: ws.member,
    body: { files: [{ path: "SKILL.md", content: skillMd(name, description, "# Steps\n\nDo the thing.\n") }] },
  });
  expect(res.status).toBe(200);
}

/** Puts the revision back, as if nothing had changed: what a run then shows proves it did not read again. */
const setRevision = (workspaceId: string, revision: string) =>
  env.DB.prepare("INSERT OR REPLACE INTO workspace_revisions (workspace_id, revision) VALUES (?, ?)").bind(workspaceId, revision).run();

describe("workspace content revision", () => {
  it("changes with every insert, update and delete of skills, skill versions, memory, config, secrets and agents", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    const seen = [await revisionOf(ws.id)];
    const changed = async () => {
      const now = await revisionOf(ws.id);
      expect(seen).not.toContain(now);
      seen.push(now);
    };
    await putSkill(ws, "release-notes", "Write release notes from merged pull requests.");
    await changed();
    await putSkill(ws, "release-notes", "Write release notes from merged pull requests, grouped by area.");
    await changed();
    expect((await call("POST", "/api/skills/release-notes/disable", { token: ws.admin })).status).toBe(200);
    await changed();
    await addEntry(env, { workspaceId: ws.id, agentId: null }, "notes", "The release train leaves on Thursdays.", actor);
    await changed();
    await env.DB.prepare("UPDATE memory_entries SET text = 'Fridays.' WHERE workspace_id = ?").bind(ws.id).run();
    await changed();
    await env.DB.prepare("DELETE FROM memory_entries WHERE workspace_id = ?").bind(ws.id).run();
    await changed();
    await env.DB.prepare("DELETE FROM skill_versions WHERE workspace_id = ?").bind(ws.id).run();
    await changed();
    expect((await call("PUT", "/api/config", { token: ws.admin, body: { runtime: { max_tools: 12 } } })).status).toBe(200);
    await changed();
    expect((await call("PUT", "/api/secrets/SOME_KEY", { token: ws.admin, body: { value: "v1" } })).status).toBe(200);
    await changed();
    expect((await call("DELETE", "/api/secrets/SOME_KEY", { token: ws.admin })).status).toBe(200);
    await changed();
    const agent = { id: "reviewer", gitea_username: "reviewer", roles: ["reviewer"] };
    expect((await call("POST", "/api/agents", { token: ws.admin, body: agent })).status).toBe(201);
    await changed();
    // Reads and another workspace's changes leave it as it is.
    expect((await call("GET", "/api/skills", { token: ws.read })).status).toBe(200);
    const other = await scriptedWorkspace(new ScriptedModel([text("ok")]));
    await addEntry(env, { workspaceId: other.id, agentId: null }, "notes", "elsewhere", actor);
    expect(await revisionOf(ws.id)).toBe(seen.at(-1));
  });

  it("a run reuses the skill catalog and memory read under its revision, and reads them again under a new one", async () => {
    const main = new ScriptedModel(() => text("ok"));
    const ws = await scriptedWorkspace(main);
    await putSkill(ws, "release-notes", "MARKER-OLD-DESCRIPTION for release notes.");
    await addEntry(env, { workspaceId: ws.id, agentId: null }, "notes", "MARKER-OLD-FACT", actor);
    const sessionId = await newSession(ws);
    await send(ws, sessionId, "first");
    expect(systemOf(main, 0)).toContain("MARKER-OLD-DESCRIPTION");
    expect(systemOf(main, 0)).toContain("MARKER-OLD-FACT");
    const read = await revisionOf(ws.id);

    // Changed, then the revision put back: the next run shows what was read under it, without reading again.
    await env.DB.prepare("UPDATE skills SET description = 'MARKER-NEW-DESCRIPTION for release notes.' WHERE workspace_id = ?")
      .bind(ws.id)
      .run();
    await env.DB.prepare("UPDATE memory_entries SET text = 'MARKER-NEW-FACT' WHERE workspace_id = ?").bind(ws.id).run();
    expect(await revisionOf(ws.id)).not.toBe(read);
    await setRevision(ws.id, read);
    await send(ws, sessionId, "second");
    expect(systemOf(main, 1)).toContain("MARKER-OLD-DESCRIPTION");
    expect(systemOf(main, 1)).toContain("MARKER-OLD-FACT");

    // Any other revision: read again.
    await setRevision(ws.id, "fresh");
    await send(ws, sessionId, "third");
    expect(systemOf(main, 2)).toContain("MARKER-NEW-DESCRIPTION");
    expect(systemOf(main, 2)).toContain("MARKER-NEW-FACT");
    expect(systemOf(main, 2)).not.toContain("MARKER-OLD");
  });
});
