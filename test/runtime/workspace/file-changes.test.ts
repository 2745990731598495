// `GET /api/sessions/:id/file-changes` (docs/workspace.md, "API"): the file-changing tool results on the
// active path, with their tool, a bash call's command and the tree each left — what the console's Files
// panel offers as diff bases. A real run on the `code` tool set in workerd (SessionDO SQLite, R2).
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { ScriptedModel, scriptedWorkspace, text, toolCalls } from "../../support/sessions.ts";
import { call, json, newWorkspace } from "../../support/api.ts";

interface Change {
  event_id: string;
  tool_name: string;
  command: string | null;
  tree_hash: string;
  changed: boolean;
}

describe("GET /api/sessions/:id/file-changes", () => {
  it("names each file-changing call on the active path, oldest first, with its command and tree; 404 elsewhere", async () => {
    const calls = [
      { name: "write_file", args: { path: "a.txt", content: "1\n" } },
      { name: "bash", args: { command: "mkdir -p lib && echo 2 > lib/b.txt" } },
      { name: "read_file", args: { path: "a.txt" } },
      { name: "bash", args: { command: "echo nothing changes" } },
      { name: "write_file", args: { path: "a.txt", content: "1\n" } },
      { name: "edit_file", args: { path: "a.txt", old_text: "1", new_text: "3" } },
    ];
    const model = new ScriptedModel([...calls.map((c, i) => toolCalls({ id: `c${i}`, name: c.name, args: c.args })), text("done")]);
    const ws = await scriptedWorkspace(model);
    const id = (await createSession(env, { workspaceId: ws.id })).id;
    const { run_id } = await submitRun(env, id, { workspace_id: ws.id, content: "work", toolset: "code", max_tool_iterations: 20 });
    expect((await waitForRun(env, id, run_id, 20_000)).status).toBe("completed");

    const res = await call("GET", `/api/sessions/${id}/file-changes`, { token: ws.read });
    expect(res.status).toBe(200);
    const body = await json<{ active_leaf: string; changes: Change[] }>(res);
    expect(body.changes.map((c) => [c.tool_name, c.command, c.changed])).toEqual([
      ["write_file", null, true],
      ["bash", "mkdir -p lib && echo 2 > lib/b.txt", true],
      ["write_file", null, false],
      ["edit_file", null, true],
    ]);
    // Each change's tree is the tree the files API shows at that event.
    for (const change of body.changes) {
      const listing = await json<{ tree_hash: string }>(
        await call("GET", `/api/sessions/${id}/files?event=${change.event_id}`, { token: ws.read }),
      );
      expect(listing.tree_hash).toBe(change.tree_hash);
    }
    expect(body.changes[1]!.tree_hash).toBe(body.changes[2]!.tree_hash);
    expect(body.changes[3]!.tree_hash).toBe(
      (await json<{ tree_hash: string }>(await call("GET", `/api/sessions/${id}/files`, { token: ws.read }))).tree_hash,
    );

    // After a rewind to before the bash call, the active path holds only the first change.
    const rewind = await call("POST", `/api/sessions/${id}/rewind`, {
      token: ws.member,
      body: { target_event_id: body.changes[0]!.event_id, client_id: "test" },
    });
    expect(rewind.status).toBe(200);
    const rewound = await json<{ changes: Change[] }>(await call("GET", `/api/sessions/${id}/file-changes`, { token: ws.read }));
    expect(rewound.changes.map((c) => c.event_id)).toEqual([body.changes[0]!.event_id]);

    const other = await newWorkspace();
    expect((await call("GET", `/api/sessions/${id}/file-changes`, { token: other.read })).status).toBe(404);
  });
});
