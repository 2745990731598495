// The workspace store's pure parts (docs/workspace.md): the empty tree's constant, canonical listings,
// path checks, and which recorded tree belongs to a place in the session tree.
import { describe, expect, it } from "vitest";
import { EMPTY_TREE_HASH, canonicalTreeBody, treeHashOfBody } from "../../src/storage/files/objects.ts";
import { callKey, treeAtEvent } from "../../src/runtime/workspace/tree-at.ts";
import { dirPath, filePath } from "../../src/runtime/workspace/paths.ts";
import { SessionTree } from "../../src/runtime/session/tree.ts";
import type { PersistentEvent } from "../../src/runtime/session/events.ts";

describe("workspace trees", () => {
  it("names the empty tree by the hash of its canonical listing", async () => {
    expect(canonicalTreeBody([])).toBe("[]");
    expect(await treeHashOfBody("[]")).toBe(EMPTY_TREE_HASH);
    const body = canonicalTreeBody([{ name: "a", kind: "file", hash: "h", size: 1, files: 1 }]);
    expect(body).toBe('[["a","f","h",1,1]]');
    expect(await treeHashOfBody(body)).not.toBe(EMPTY_TREE_HASH);
  });

  it("takes the tree recorded by the nearest tool result at or above an event", () => {
    let seq = 0;
    const msg = (id: string, parent: string | null, message: Record<string, unknown>, run = "r1") =>
      ({
        id,
        seq: ++seq,
        ts: 0,
        session_id: "s",
        parent_id: parent,
        run_id: run,
        client_id: "c",
        type: "message",
        message,
      }) as unknown as PersistentEvent;
    const tree = SessionTree.fromEvents([
      msg("u1", null, { role: "user", content: "x" }),
      msg("a1", "u1", { role: "assistant", text: "", tool_calls: [] }),
      msg("t1", "a1", { role: "tool_result", tool_call_id: "c1", tool_name: "write_file", content: "", is_error: false }),
      msg("t2", "t1", { role: "tool_result", tool_call_id: "c2", tool_name: "read_file", content: "", is_error: false }),
      msg("t3", "a1", { role: "tool_result", tool_call_id: "c3", tool_name: "write_file", content: "", is_error: false }),
    ]);
    const recorded = new Map([
      [callKey("r1", "c1"), "tree-1"],
      [callKey("r1", "c3"), "tree-3"],
    ]);
    expect(treeAtEvent(tree, "t2", recorded)).toBe("tree-1");
    expect(treeAtEvent(tree, "t3", recorded)).toBe("tree-3");
    expect(treeAtEvent(tree, "a1", recorded)).toBe(EMPTY_TREE_HASH);
    expect(treeAtEvent(tree, null, recorded)).toBe(EMPTY_TREE_HASH);
    // Another run's call with the same id is another call.
    expect(treeAtEvent(tree, "t2", new Map([[callKey("r2", "c1"), "other"]]))).toBe(EMPTY_TREE_HASH);
  });

  it("accepts relative paths and refuses the rest with a sentence", () => {
    expect(filePath("./src//x.ts".replace("//", "/"))).toBe("src/x.ts");
    expect(dirPath(undefined)).toBe("");
    expect(dirPath(".")).toBe("");
    expect(dirPath("src/")).toBe("src");
    for (const bad of ["../x", "/abs", "a\\b", "a\u0000b", "a/../../b", ""]) expect(() => filePath(bad)).toThrow(/Invalid path/);
  });
});
