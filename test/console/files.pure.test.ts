// The console's Files panel logic (console/src/files/, docs/workspace.md "Console"): the default diff
// base, comparing two listings into a tree, reading a file's head, binary detection and diff rows.
import { describe, expect, it } from "vitest";
import { defaultBase, isCloneCall, type FileChangeLike } from "../../console/src/files/base.ts";
import { buildTree, compareListings } from "../../console/src/files/tree.ts";
import { diffRows, looksBinary, readHead } from "../../console/src/files/content.ts";

const change = (event_id: string, tool_name: string, command: string | null = null): FileChangeLike => ({ event_id, tool_name, command });

describe("defaultBase", () => {
  it("is the first clone's tree when the session cloned", () => {
    expect(
      defaultBase([
        change("e1", "write_file"),
        change("e2", "bash", "echo x > notes.txt"),
        change("e3", "bash", "git clone https://git.example/o/r.git ."),
        change("e4", "edit_file"),
        change("e5", "bash", "git clone https://git.example/o/other.git other"),
      ]),
    ).toBe("e3");
  });

  it("recognises the ways a clone can be called", () => {
    expect(isCloneCall(change("a", "bash", "git clone --depth 1 https://h/r.git"))).toBe(true);
    expect(isCloneCall(change("a", "bash", "cd work && git clone https://h/r.git"))).toBe(true);
    expect(isCloneCall(change("a", "bash", "git -c http.extraHeader=x clone https://h/r.git"))).toBe(true);
    expect(isCloneCall(change("a", "git_clone"))).toBe(true);
    expect(isCloneCall(change("a", "git-clone"))).toBe(true);
    expect(isCloneCall(change("a", "clone_repository"))).toBe(true);
    expect(isCloneCall(change("a", "git", "clone https://h/r.git"))).toBe(true);
    expect(isCloneCall(change("a", "bash", "echo git clone"))).toBe(false);
    expect(isCloneCall(change("a", "bash", "git commit -m 'clone'"))).toBe(false);
    expect(isCloneCall(change("a", "git", "checkout -b clone"))).toBe(false);
    expect(isCloneCall(change("a", "write_file"))).toBe(false);
  });

  it("is the session's first workspace tree without a clone, and null with no change", () => {
    expect(defaultBase([change("e1", "write_file"), change("e2", "bash", "echo git clone")])).toBe("e1");
    expect(defaultBase([])).toBeNull();
  });
});

describe("compareListings and buildTree", () => {
  const f = (path: string, sha256: string, size = 1) => ({ path, sha256, size });

  it("marks each path added, modified, deleted or the same by its hash, sorted by path", () => {
    const rows = compareListings(
      [f("src/a.ts", "1"), f("src/b.ts", "2b"), f("new.md", "3")],
      [f("src/a.ts", "1"), f("src/b.ts", "2"), f("old.md", "4")],
    );
    expect(rows.map((r) => [r.path, r.status])).toEqual([
      ["new.md", "added"],
      ["old.md", "deleted"],
      ["src/a.ts", "same"],
      ["src/b.ts", "modified"],
    ]);
    expect(compareListings([f("x", "1")], null)).toEqual([{ ...f("x", "1"), status: "same" }]);
  });

  it("folds rows into directories, directories first and sorted, counting changes on the way up", () => {
    const tree = buildTree(compareListings([f("z/q/b.ts", "1"), f("z/a.ts", "2"), f("a/x.ts", "3"), f("top.md", "4")], [f("z/a.ts", "2")]));
    expect(tree.dirs.map((d) => d.name)).toEqual(["a", "z"]);
    expect(tree.files.map((r) => r.path)).toEqual(["top.md"]);
    const z = tree.dirs[1]!;
    expect(z.path).toBe("z");
    expect(z.dirs[0]!.path).toBe("z/q");
    expect(z.files.map((r) => [r.path, r.status])).toEqual([["z/a.ts", "same"]]);
    expect([tree.changed, z.changed, z.dirs[0]!.changed]).toEqual([3, 1, 1]);
  });
});

describe("file content", () => {
  const stream = (chunks: Uint8Array[]) => {
    let pulled = 0;
    let cancelled = false;
    // highWaterMark 0: a chunk is pulled only when read, so `pulled` counts what readHead read.
    const body = new ReadableStream<Uint8Array>(
      {
        pull(controller) {
          if (pulled === chunks.length) return controller.close();
          controller.enqueue(chunks[pulled++]!);
        },
        cancel() {
          cancelled = true;
        },
      },
      { highWaterMark: 0 },
    );
    return { body, pulled: () => pulled, cancelled: () => cancelled };
  };

  it("reads at most max bytes and stops reading there", async () => {
    const s = stream([new Uint8Array(4).fill(1), new Uint8Array(4).fill(2), new Uint8Array(4).fill(3), new Uint8Array(4).fill(4)]);
    const head = await readHead(s.body, 6);
    expect(head.truncated).toBe(true);
    expect([...head.bytes]).toEqual([1, 1, 1, 1, 2, 2]);
    expect(s.pulled()).toBe(2);
    expect(s.cancelled()).toBe(true);
    const whole = await readHead(stream([new Uint8Array([7, 8])]).body, 6);
    expect(whole).toEqual({ bytes: new Uint8Array([7, 8]), truncated: false });
    expect(await readHead(null)).toEqual({ bytes: new Uint8Array(0), truncated: false });
  });

  it("calls a file binary when a NUL is in its first 8,000 bytes", () => {
    expect(looksBinary(new TextEncoder().encode("plain text\n"))).toBe(false);
    expect(looksBinary(new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0, 1]))).toBe(true);
    const late = new Uint8Array(9_000).fill(65);
    late[8_500] = 0;
    expect(looksBinary(late)).toBe(false);
  });

  it("turns a jsdiff patch into rows with both line numbers", () => {
    const before = "a\nb\nc\nd\ne\nf\ng\nh\n";
    const after = "a\nb\nc\nD\ne\nf\ng\nh\ni\n";
    expect(diffRows(before, after)).toEqual([
      { kind: "hunk", header: "@@ -1,8 +1,9 @@" },
      { kind: "line", op: " ", old: 1, new: 1, text: "a" },
      { kind: "line", op: " ", old: 2, new: 2, text: "b" },
      { kind: "line", op: " ", old: 3, new: 3, text: "c" },
      { kind: "line", op: "-", old: 4, new: null, text: "d" },
      { kind: "line", op: "+", old: null, new: 4, text: "D" },
      { kind: "line", op: " ", old: 5, new: 5, text: "e" },
      { kind: "line", op: " ", old: 6, new: 6, text: "f" },
      { kind: "line", op: " ", old: 7, new: 7, text: "g" },
      { kind: "line", op: " ", old: 8, new: 8, text: "h" },
      { kind: "line", op: "+", old: null, new: 9, text: "i" },
    ]);
    expect(diffRows("", "new\n")).toEqual([
      { kind: "hunk", header: "@@ -0,0 +1,1 @@" },
      { kind: "line", op: "+", old: null, new: 1, text: "new" },
    ]);
    expect(diffRows("same\n", "same\n")).toEqual([]);
  });
});
