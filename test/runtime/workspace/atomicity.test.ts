// Nothing half-written (docs/workspace.md, "Atomic changes"): a multi-file change interrupted by an
// eviction leaves none of its files, and a commit whose transaction fails leaves no rows behind.
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { abortAllDurableObjects, runDurableObjectAlarm } from "cloudflare:test";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { workspaceTools } from "../../../src/runtime/workspace/tools/index.ts";
import { EMPTY_TREE_HASH, FileObjects } from "../../../src/storage/files/objects.ts";
import {
  ScriptedModel,
  doEvents,
  registerToolset,
  runInDurableObject,
  scriptedWorkspace,
  stub,
  text,
  toolCalls,
  until,
  toolResults,
} from "../../support/sessions.ts";

describe("workspace atomicity", () => {
  it("an eviction in the middle of a multi-file shell command leaves none of its files", async () => {
    // Polled, not awaited: a promise resolved inside the object and awaited here would cross I/O contexts.
    const entered = { at: 0 };
    // `hang` never returns: the command has written two files (one large, so already in R2) when the object dies.
    const hang = {
      name: "hang",
      run: async (_args: string[], io: { signal: AbortSignal }) => {
        entered.at = Date.now();
        await new Promise((resolve) => io.signal.addEventListener("abort", resolve, { once: true }));
        return { stdout: "", stderr: "", exitCode: 0 };
      },
    };
    const toolset = registerToolset("ws-evict", workspaceTools({ commands: () => [hang] }));
    const main = new ScriptedModel([
      toolCalls({ id: "b1", name: "bash", args: { command: `echo a > a.txt; seq 1 20000 > big.txt; echo b > b.txt; hang` } }),
      toolCalls({ id: "l1", name: "list_files", args: {} }),
      text("done"),
    ]);
    const ws = await scriptedWorkspace(main);
    const session = await createSession(env, { workspaceId: ws.id });
    const { run_id } = await submitRun(env, session.id, { workspace_id: ws.id, content: "go", toolset });
    await until(() => entered.at > 0, 10_000, "the command to hang");
    await abortAllDurableObjects();
    expect(await runDurableObjectAlarm(stub(session.id))).toBe(true);
    const result = await waitForRun(env, session.id, run_id, 15_000);
    expect(result.status).toBe("completed");
    const results = toolResults(await doEvents(session.id, ws.id));
    expect(results[0]).toMatchObject({ tool_call_id: "b1", is_error: true });
    expect(results[0]!.content).toContain("interrupted");
    expect(results[1]!.content).toBe("(the workspace is empty)");
    await runInDurableObject(stub(session.id), async (_instance, state) => {
      expect(state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ws_calls`).one().n).toBe(0);
      expect(state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ws_blobs`).one().n).toBe(0);
    });
  });

  it("a commit whose transaction fails writes none of its blobs or trees", async () => {
    const ws = await scriptedWorkspace(new ScriptedModel([text("x")]));
    const session = await createSession(env, { workspaceId: ws.id });
    await runInDurableObject(stub(session.id), async (_instance, state) => {
      const objects = new FileObjects(state.storage, env, ws.id);
      const a = await objects.stage(new TextEncoder().encode("one"));
      const b = await objects.stage(new TextEncoder().encode("two"));
      const limits = { maxBytes: 1_000, maxFiles: 10 };
      const prepared = await objects.prepare(
        EMPTY_TREE_HASH,
        [
          { path: "x/one.txt", blob: a },
          { path: "x/y/two.txt", blob: b },
        ],
        limits,
      );
      expect(prepared.files).toBe(2);
      expect(() =>
        objects.write(prepared, () => {
          throw new Error("crash after the rows, before the commit");
        }),
      ).toThrow("crash");
      expect(objects.hasTree(prepared.root)).toBe(false);
      expect(state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ws_blobs`).one().n).toBe(0);
      expect(state.storage.sql.exec(`SELECT COUNT(*) AS n FROM ws_trees`).one().n).toBe(0);
      // The same change written for real is all there, and the hash names it.
      objects.write(prepared);
      expect([...objects.walk(prepared.root)].map((f) => f.path)).toEqual(["x/one.txt", "x/y/two.txt"]);
      expect(new TextDecoder().decode(await objects.read(objects.lookup(prepared.root, "x/y/two.txt")!.hash))).toBe("two");
      // A path that would be both a file and a directory is refused before anything is written.
      await expect(objects.prepare(prepared.root, [{ path: "x/one.txt/z", blob: a }], limits)).rejects.toThrow("is a file");
    });
  });
});
