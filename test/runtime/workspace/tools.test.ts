// The session workspace's tools through real runs (docs/workspace.md): a scripted model calls
// read_file, write_file, edit_file, list_files, grep and bash on the `code` tool set; the SessionDO's
// SQLite and R2 hold the files; the workspace follows rewinds and branch switches.
import { afterEach, describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { createSession, submitRun, waitForRun } from "../../../src/runtime/session/service.ts";
import { SessionClient } from "../../../src/runtime/session/client.ts";
import { ScriptedModel, doEvents, scriptedWorkspace, text, toolCalls, type ScriptStep, toolResults } from "../../support/sessions.ts";
import { setTestLimits } from "../../support/test-services.ts";
import { call, json, newWorkspace } from "../../support/api.ts";
import { unpackTar } from "modern-tar";

type Call = { name: string; args: unknown };

/** A model that makes each call in turn (one per step), then answers "done". */
function calling(calls: Call[]): ScriptStep[] {
  return [...calls.map((c, i) => toolCalls({ id: `c${i}`, name: c.name, args: c.args })), text("done")];
}

interface Target {
  ws: { id: string; read: string };
  id: string;
  /** What the session's scripted model answers next: `steps[i - offset]` on its i-th call. */
  script: { steps: ScriptStep[]; offset: number; model: ScriptedModel };
}

/** Runs `calls` in a (new or given) session on the `code` tool set; returns the results in order. */
async function run(calls: Call[], session?: Target) {
  let target = session;
  if (!target) {
    const script = { steps: [] as ScriptStep[], offset: 0, model: null as unknown as ScriptedModel };
    script.model = new ScriptedModel((i) => script.steps[Math.min(i - script.offset, script.steps.length - 1)]!);
    const ws = await scriptedWorkspace(script.model);
    target = { ws, id: (await createSession(env, { workspaceId: ws.id })).id, script };
  }
  target.script.steps = calling(calls);
  target.script.offset = target.script.model.calls.length;
  const before = toolResults(await doEvents(target.id, target.ws.id)).length;
  const { run_id } = await submitRun(env, target.id, {
    workspace_id: target.ws.id,
    content: "work",
    toolset: "code",
    max_tool_iterations: 50,
  });
  const result = await waitForRun(env, target.id, run_id, 20_000);
  expect(result.status).toBe("completed");
  const events = await doEvents(target.id, target.ws.id);
  return { session: target, results: toolResults(events).slice(before), events };
}

afterEach(() => setTestLimits(null));

describe("workspace file tools", () => {
  it("write, read (numbered, paged), edit (exact, ambiguous, missing), list with a glob, grep", async () => {
    const { results } = await run([
      { name: "write_file", args: { path: "src/app.ts", content: "const a = 1;\nconst b = 1;\nexport { a, b };\n" } },
      { name: "write_file", args: { path: "README.md", content: "# demo\n" } },
      { name: "read_file", args: { path: "src/app.ts" } },
      { name: "read_file", args: { path: "src/app.ts", offset: 2, limit: 1 } },
      { name: "edit_file", args: { path: "src/app.ts", old_text: "= 1;", new_text: "= 2;" } },
      { name: "edit_file", args: { path: "src/app.ts", old_text: "const c", new_text: "x" } },
      { name: "edit_file", args: { path: "src/app.ts", old_text: "const b = 1;", new_text: "const b = 3;" } },
      { name: "list_files", args: { glob: "*.ts" } },
      { name: "list_files", args: {} },
      { name: "grep", args: { pattern: "CONST [ab] = \\d", ignore_case: true } },
      { name: "grep", args: { pattern: "demo", path: "src" } },
      { name: "grep", args: { pattern: "(unclosed" } },
      { name: "read_file", args: { path: "src/nope.ts" } },
      { name: "read_file", args: { path: "src" } },
    ]);
    const [w1, w2, r1, r2, eAmb, eMissing, eOk, l1, l2, g1, g2, gBad, rMissing, rDir] = results;
    expect(w1).toMatchObject({ is_error: false, content: "Created src/app.ts (43 bytes)" });
    expect(w2).toMatchObject({ is_error: false });
    expect(r1!.content).toBe("     1\tconst a = 1;\n     2\tconst b = 1;\n     3\texport { a, b };");
    expect(r2!.content).toBe("     2\tconst b = 1;\n[showing lines 2-2 of 3; continue with offset=3]");
    expect(eAmb).toMatchObject({ is_error: true });
    expect(eAmb!.content).toContain("occurs 2 times in 'src/app.ts' (at lines 1, 2)");
    expect(eMissing!.content).toContain("old_text was not found in 'src/app.ts'");
    expect(eOk).toMatchObject({ is_error: false, content: "Edited src/app.ts: replaced 1 occurrence (line 2)" });
    expect(l1!.content).toBe("src/app.ts");
    expect(l2!.content).toBe("README.md\nsrc/app.ts");
    expect(g1!.content).toBe("src/app.ts:1:const a = 1;\nsrc/app.ts:2:const b = 3;");
    expect(g2!.content).toBe("No matches");
    expect(gBad).toMatchObject({ is_error: true });
    expect(gBad!.content).toContain("invalid_pattern");
    expect(rMissing!.content).toContain("No file 'src/nope.ts'");
    expect(rDir!.content).toContain("'src' is a directory");
  });

  it("refuses paths that escape the workspace: '..', absolute, backslash, NUL", async () => {
    const bad = ["../etc/passwd", "/etc/passwd", "a\\b.txt", "a\u0000b", "src/../../x", "C:/x"];
    const { results } = await run([
      ...bad.map((path) => ({ name: "write_file", args: { path, content: "x" } })),
      { name: "read_file", args: { path: "../secret" } },
      { name: "list_files", args: {} },
    ]);
    for (const r of results.slice(0, bad.length + 1)) {
      expect(r.is_error).toBe(true);
      expect(r.content).toContain("Invalid path");
    }
    expect(results.at(-1)!.content).toBe("(the workspace is empty)");
  });

  it("answers each limit with a clear error and leaves the workspace as it was", async () => {
    setTestLimits({ workspace_file_bytes: 100, workspace_files: 2, workspace_bytes: 150, workspace_tool_output_bytes: 1024 });
    const { results } = await run([
      { name: "write_file", args: { path: "big.txt", content: "x".repeat(101) } },
      { name: "write_file", args: { path: "a.txt", content: "a".repeat(80) } },
      { name: "write_file", args: { path: "b.txt", content: "b".repeat(80) } },
      { name: "write_file", args: { path: "b.txt", content: "b" } },
      { name: "write_file", args: { path: "c.txt", content: "c" } },
      { name: "bash", args: { command: "seq 1 2000" } },
      { name: "list_files", args: {} },
    ]);
    expect(results[0]!.content).toContain("one file may hold 100 (workspace_file_bytes)");
    expect(results[1]!.is_error).toBe(false);
    expect(results[2]!.content).toContain("the limit is 150 (workspace_bytes)");
    expect(results[3]!.is_error).toBe(false);
    expect(results[4]!.content).toContain("the limit is 2 (workspace_files)");
    expect(results[5]!.content).toContain("[stdout truncated:");
    expect(new TextEncoder().encode(results[5]!.content).byteLength).toBeLessThan(1200);
    expect(results[6]!.content).toBe("a.txt\nb.txt");
  });

  it("keeps large files in R2 and small ones in the SessionDO, and reads both back", async () => {
    const big = "line of text\n".repeat(10_000); // 130 KB: over the inline size
    const { results, session } = await run([
      { name: "write_file", args: { path: "big.txt", content: big } },
      { name: "write_file", args: { path: "small.txt", content: "tiny" } },
      { name: "grep", args: { pattern: "^line", path: "big.txt" } },
      { name: "read_file", args: { path: "big.txt", offset: 9_999 } },
    ]);
    expect(results[2]!.content).toContain("big.txt:1:line of text");
    expect(results[2]!.content).toContain("more matches not shown");
    expect(results[3]!.content).toBe("  9999\tline of text\n 10000\tline of text");
    const listed = await env.BLOBS.list({ prefix: `ws/${session.ws.id}/files/` });
    expect(listed.objects).toHaveLength(1);
    const other = await env.BLOBS.list({ prefix: `ws/${session.ws.id}/blobs/` });
    expect(other.objects).toHaveLength(0);
  });
});

describe("workspace shell", () => {
  it("runs bash over the workspace: pipes, exit codes, file changes kept, /tmp discarded", async () => {
    const { results } = await run([
      { name: "write_file", args: { path: "notes/a.txt", content: "beta\nalpha\ngamma\n" } },
      {
        name: "bash",
        args: {
          command: "sort notes/a.txt | head -2 > notes/sorted.txt && cat notes/sorted.txt && echo tmp > /tmp/x && wc -l < notes/a.txt",
        },
      },
      { name: "bash", args: { command: "ls notes; exit 3" } },
      {
        name: "bash",
        args: {
          command: "mkdir -p lib/deep && echo 'export const x = 1;' > lib/deep/x.ts && mv notes/a.txt notes/b.txt && rm notes/sorted.txt",
        },
      },
      { name: "list_files", args: {} },
      { name: "bash", args: { command: "ls /tmp; find . -name '*.ts'; grep -rn alpha ." } },
      { name: "bash", args: { command: "cat does-not-exist.txt" } },
      { name: "read_file", args: { path: "lib/deep/x.ts" } },
    ]);
    expect(results[1]!.content).toBe("exit code: 0\nstdout:\nalpha\nbeta\n3\n\n[workspace: 1 path changed]");
    expect(results[2]!.content).toBe("exit code: 3\nstdout:\na.txt\nsorted.txt\n");
    expect(results[3]!.content).toContain("exit code: 0");
    expect(results[4]!.content).toBe("lib/deep/x.ts\nnotes/b.txt");
    expect(results[5]!.content).toContain("./lib/deep/x.ts");
    expect(results[5]!.content).toContain("notes/b.txt:2:alpha");
    expect(results[5]!.content).not.toContain("x\n./lib");
    expect(results[6]!.content).toMatch(/^exit code: 1\nstderr:\n.*does-not-exist\.txt/);
    expect(results[7]!.content).toBe("     1\texport const x = 1;");
  });

  it("stops a command past its time limit and keeps none of its changes; its description says it is not Linux", async () => {
    setTestLimits({ shell_time_ms: 500 });
    const { results, session } = await run([
      { name: "bash", args: { command: "echo partial > p.txt; sleep 30" } },
      { name: "list_files", args: {} },
    ]);
    expect(results[0]!.is_error).toBe(true);
    expect(results[0]!.content).toMatch(/was stopped \(time limit 500 ms/);
    expect(results[1]!.content).toBe("(the workspace is empty)");
    const offered = (session.script.model.calls[session.script.offset]?.tools ?? []) as { name: string; description?: string }[];
    expect(offered.find((t) => t.name === "bash")?.description).toContain("NOT a Linux machine");
  });

  it("stops a busy loop at the shell's command count, well inside its time, and keeps none of its changes", async () => {
    // A fast machine runs the shell's 100,000 commands in well under a second: that limit, not the
    // time, stops the loop, and it is a stop like the time limit's (bash.ts `stopped`).
    setTestLimits({ shell_time_ms: 120_000 });
    const { results } = await run([
      { name: "bash", args: { command: "echo partial > p.txt; i=0; while true; do i=$((i+1)); done" } },
      { name: "list_files", args: {} },
    ]);
    expect(results[0]!.is_error).toBe(true);
    expect(results[0]!.content).toMatch(/was stopped/);
    expect(results[0]!.content).toMatch(/increase executionLimits\.max\w+/);
    expect(results[1]!.content).toBe("(the workspace is empty)");
  });
});

describe("the workspace follows the session tree", () => {
  it("a rewind restores the earlier tree; two branches hold different files", async () => {
    const first = await run([{ name: "write_file", args: { path: "f.txt", content: "v1" } }]);
    const session = first.session;
    const afterV1 = first.events.filter((e) => e.type === "message").at(-1)!.id; // the final answer of run 1
    await run(
      [
        { name: "write_file", args: { path: "f.txt", content: "v2" } },
        { name: "write_file", args: { path: "g.txt", content: "g" } },
      ],
      session,
    );
    const v2Leaf = (await doEvents(session.id, session.ws.id)).filter((e) => e.type === "message").at(-1)!.id;

    const rewound = await SessionClient.of(env, session.id).rewind(session.ws.id, afterV1, "test");
    expect(rewound.active_leaf).toBeTruthy();
    const onV1 = await run(
      [
        { name: "read_file", args: { path: "f.txt" } },
        { name: "list_files", args: {} },
      ],
      session,
    );
    expect(onV1.results[0]!.content).toBe("     1\tv1");
    expect(onV1.results[1]!.content).toBe("f.txt");
    // A change on this branch does not touch the other.
    await run([{ name: "write_file", args: { path: "h.txt", content: "h" } }], session);

    const switched = await SessionClient.of(env, session.id).branch(session.ws.id, v2Leaf, "test");
    expect(switched.active_leaf).toBeTruthy();
    const onV2 = await run(
      [
        { name: "read_file", args: { path: "f.txt" } },
        { name: "list_files", args: {} },
      ],
      session,
    );
    expect(onV2.results[0]!.content).toBe("     1\tv2");
    expect(onV2.results[1]!.content).toBe("f.txt\ng.txt");
  });
});

describe("workspace files API", () => {
  it("lists, serves and archives the tree at the leaf or at an event; 404 for other workspaces, events and paths", async () => {
    const first = await run([
      { name: "write_file", args: { path: "src/a.ts", content: "export const a = 1;\n" } },
      { name: "write_file", args: { path: "docs/read me.md", content: "# hi\n" } },
    ]);
    const s = first.session;
    const firstLeaf = first.events.filter((e) => e.type === "message").at(-1)!.id;
    await run([{ name: "bash", args: { command: "rm docs/read\\ me.md && echo 2 > two.txt" } }], s);
    const get = (path: string, token = s.ws.read) => call("GET", `/api/sessions/${s.id}${path}`, { token });

    const leaf = await json<{ files: { path: string; size: number }[]; file_count: number; tree_hash: string }>(await get("/files"));
    expect(leaf.files.map((f) => f.path)).toEqual(["src/a.ts", "two.txt"]);
    const earlier = await json<{ files: { path: string }[]; total_bytes: number }>(await get(`/files?event=${firstLeaf}`));
    expect(earlier.files.map((f) => f.path)).toEqual(["docs/read me.md", "src/a.ts"]);
    expect(earlier.total_bytes).toBe(25);

    const file = await get("/files/src%2Fa.ts");
    expect(file.status).toBe(200);
    const decoded = async (res: Response) => new TextDecoder().decode(await res.arrayBuffer());
    expect(await decoded(file)).toBe("export const a = 1;\n");
    expect(await decoded(await get(`/files/docs%2Fread%20me.md?event=${firstLeaf}`))).toBe("# hi\n");
    expect((await get("/files/docs%2Fread%20me.md")).status).toBe(404);
    expect((await get("/files/src")).status).toBe(404);
    expect((await get("/files/..%2F..%2Fetc%2Fpasswd")).status).toBe(404);
    expect((await get("/files?event=evt_nope")).status).toBe(404);

    const tgz = await get(`/files.tar.gz?event=${firstLeaf}`);
    expect(tgz.status).toBe(200);
    expect(tgz.headers.get("content-type")).toBe("application/gzip");
    const tar = new Uint8Array(await new Response(tgz.body!.pipeThrough(new DecompressionStream("gzip"))).arrayBuffer());
    const entries = await unpackTar(tar);
    expect(entries.map((e) => [e.header.name, new TextDecoder().decode(e.data)])).toEqual([
      ["docs/read me.md", "# hi\n"],
      ["src/a.ts", "export const a = 1;\n"],
    ]);

    const other = await newWorkspace();
    for (const path of ["/files", "/files/src%2Fa.ts", "/files.tar.gz"]) expect((await get(path, other.read)).status).toBe(404);
  });

  it("POST /messages with toolset code gives a chat run the workspace tools", async () => {
    const main = new ScriptedModel([
      toolCalls({ id: "w", name: "write_file", args: { path: "hello.txt", content: "hi" } }),
      text("written"),
    ]);
    const ws = await scriptedWorkspace(main);
    const id = (await createSession(env, { workspaceId: ws.id })).id;
    const res = await call("POST", `/api/sessions/${id}/messages?wait=true`, {
      token: ws.member,
      body: { content: "write", toolset: "code" },
    });
    expect(res.status).toBe(200);
    expect(await json(res)).toMatchObject({ status: "completed", output_text: "written" });
    const listing = await json<{ files: { path: string }[] }>(await call("GET", `/api/sessions/${id}/files`, { token: ws.read }));
    expect(listing.files.map((f) => f.path)).toEqual(["hello.txt"]);
    const bad = await call("POST", `/api/sessions/${id}/messages`, { token: ws.member, body: { content: "x", toolset: "toolchain" } });
    expect(bad.status).toBe(400);
  });
});
