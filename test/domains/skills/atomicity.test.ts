/**
 * Nothing half-written becomes visible: a publish that dies after the blobs (or inside the D1 batch,
 * between the version row and the `current` switch) leaves the previous state, and the orphan
 * collector removes what it left behind while keeping everything still referenced.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace } from "../../support/api.ts";
import { storeTree } from "../../../src/storage/blob/store.ts";
import { blobKey, workspacePrefix } from "../../../src/storage/blob/keys.ts";
import { runLocked, runLockedMeasured, storeEpoch } from "../../../src/domains/governance/client.ts";
import { withR2WriteCounter } from "../../../src/storage/blob/counting.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";

const enc = (s: string) => new TextEncoder().encode(s);
const r2Count = async (ws: string) => (await env.BLOBS.list({ prefix: workspacePrefix(ws) })).objects.length;
const put = (token: string, d: string, extra: { path: string; content: string }[] = []) =>
  call("PUT", "/api/skills/atom", { token, body: { files: [{ path: "SKILL.md", content: skillMd("atom", d) }, ...extra] } });
const gc = (ws: string, now = Date.now() + 1000) => runLocked(env, ws, { kind: "collect_garbage", now, graceMs: 0 });
/** What the Worker hands the lock for a tree it stored itself (the tests play that Worker). */
const publishInput = (treeHash: string, description: string, fileCount: number) => ({
  skillName: "atom",
  treeHash,
  contentHash: "c".repeat(64),
  frontmatter: { name: "atom", description },
  provenance: { kind: "manual" },
  safety: { level: "pass" as const, findings: [] },
  fileCount,
  totalBytes: fileCount,
  actor: "t",
});

describe("atomic publication and orphan collection", () => {
  it("content stored by a publish that never committed stays invisible and is collected", async () => {
    const ws = await newWorkspace();
    await put(ws.member, "Kept.", [{ path: "shared.md", content: "shared" }]);
    const objectsBefore = await r2Count(ws.id);
    // Crash after storing blobs and manifest, before the locked commit.
    const stored = await storeTree(env, ws.id, [
      { path: "SKILL.md", bytes: enc(skillMd("atom", "Never published.")), executable: false },
      { path: "shared.md", bytes: enc("shared"), executable: false },
      { path: "orphan.md", bytes: enc("only here"), executable: false },
    ]);
    expect(stored.blobsWritten).toBe(2); // shared.md already existed
    expect(await json(await call("GET", "/api/skills/atom", { token: ws.read }))).toMatchObject({
      current_version: "v0001",
      description: "Kept.",
    });
    expect(await r2Count(ws.id)).toBe(objectsBefore + 3);

    // Within the grace window nothing is collected.
    expect(await runLocked(env, ws.id, { kind: "collect_garbage", now: Date.now(), graceMs: 3_600_000 })).toEqual({
      treesDeleted: 0,
      blobsDeleted: 0,
      unindexedDeleted: 0,
    });
    const report = await gc(ws.id);
    expect(report).toEqual({ treesDeleted: 1, blobsDeleted: 2, unindexedDeleted: 0 });
    expect(await r2Count(ws.id)).toBe(objectsBefore);
    const file = await call("GET", "/api/skills/atom/versions/v0001/file?path=shared.md", { token: ws.read });
    expect(await file.text()).toBe("shared");
  });

  it("a failure inside the commit batch (version row written, current switch fails) rolls back whole", async () => {
    const ws = await newWorkspace();
    await put(ws.member, "One.");
    const trigger = `fail_switch_${ws.id.replace(/[^a-z0-9]/g, "_")}`;
    await env.DB.prepare(
      `CREATE TRIGGER ${trigger} BEFORE UPDATE OF current_version_no ON skills WHEN NEW.workspace_id = '${ws.id}' BEGIN SELECT RAISE(ABORT, 'injected failure at the current switch'); END`,
    ).run();
    try {
      const res = await put(ws.member, "Two.");
      expect(res.status).toBe(500);
    } finally {
      await env.DB.prepare(`DROP TRIGGER ${trigger}`).run();
    }
    const versions = await json<{ versions: { version: string }[]; current_version: string }>(
      await call("GET", "/api/skills/atom/versions", { token: ws.read }),
    );
    expect(versions).toMatchObject({ current_version: "v0001", versions: [{ version: "v0001" }] });
    expect((await call("GET", "/api/skills/atom/versions/v0002", { token: ws.read })).status).toBe(404);
    expect(await gc(ws.id)).toMatchObject({ treesDeleted: 1, blobsDeleted: 1 });
    // The number is free again; the next publish gets v0002 and works.
    expect(await json(await put(ws.member, "Two."))).toMatchObject({ version: "v0002", created: true });
  });

  it("sweeps R2 objects that never reached the index, and re-verifies content the collector may have taken", async () => {
    const ws = await newWorkspace();
    await env.BLOBS.put(`${workspacePrefix(ws.id)}blobs/ab/${"ab".repeat(32)}`, "stray");
    expect(await gc(ws.id)).toEqual({ treesDeleted: 0, blobsDeleted: 0, unindexedDeleted: 1 });

    // Content stored, then collected before its publish took the lock: the publish notices and refuses.
    const epoch = await storeEpoch(env, ws.id);
    const stored = await storeTree(env, ws.id, [{ path: "SKILL.md", bytes: enc(skillMd("atom", "Late.")), executable: false }]);
    await gc(ws.id);
    const input = publishInput(stored.treeHash, "Late.", 1);
    await expect(runLocked(env, ws.id, { kind: "publish_skill", epoch, input })).rejects.toMatchObject({
      code: "conflict",
      message: expect.stringContaining("send it again"),
    });
    // Sent again (stored anew), it publishes.
    const epoch2 = await storeEpoch(env, ws.id);
    await storeTree(env, ws.id, [{ path: "SKILL.md", bytes: enc(skillMd("atom", "Late.")), executable: false }]);
    expect(await runLocked(env, ws.id, { kind: "publish_skill", epoch: epoch2, input })).toMatchObject({ version: "v0001", created: true });
  });

  it("content found missing at publish is dropped from the index, so sending it again really stores it", async () => {
    const ws = await newWorkspace();
    const files = [
      { path: "SKILL.md", bytes: enc(skillMd("atom", "Raced.")), executable: false },
      { path: "ref.md", bytes: enc("raced reference"), executable: false },
    ];
    const epoch = await storeEpoch(env, ws.id);
    const stored = await storeTree(env, ws.id, files);
    // The collector raced this store: it deleted an R2 object after the store had re-indexed it.
    const refSha = stored.manifest.files.find((f) => f.path === "ref.md")!.sha256;
    await env.BLOBS.delete(blobKey(ws.id, refSha));
    await runLocked(env, ws.id, { kind: "collect_garbage", now: Date.now(), graceMs: 3_600_000 });
    const input = (treeHash: string) => publishInput(treeHash, "Raced.", 2);
    await expect(runLocked(env, ws.id, { kind: "publish_skill", epoch, input: input(stored.treeHash) })).rejects.toMatchObject({
      code: "conflict",
    });
    // Sent again: the store must write the missing blob instead of trusting a stale index row.
    const epoch2 = await storeEpoch(env, ws.id);
    const again = await storeTree(env, ws.id, files);
    expect(again.blobsWritten).toBeGreaterThanOrEqual(1);
    expect(await runLocked(env, ws.id, { kind: "publish_skill", epoch: epoch2, input: input(again.treeHash) })).toMatchObject({
      version: "v0001",
      created: true,
    });
    const file = await call("GET", "/api/skills/atom/versions/v0001/file?path=ref.md", { token: ws.read });
    expect(file.status).toBe(200);
    expect(await file.text()).toBe("raced reference");
  });

  it("the admin endpoint runs the collector", async () => {
    const ws = await newWorkspace();
    const res = await call("POST", "/api/skills/_gc", { token: ws.admin, body: { grace_seconds: 3600 } });
    expect(await json(res)).toEqual({ trees_deleted: 0, blobs_deleted: 0, unindexed_deleted: 0 });
    expect((await call("POST", "/api/skills/_gc", { token: ws.member, body: {} })).status).toBe(403);
  });

  it("measures R2 writes: storing content counts, locked operations write none", async () => {
    const ws = await newWorkspace();
    const counted = withR2WriteCounter(env);
    const stored = await storeTree(counted.env, ws.id, [
      { path: "SKILL.md", bytes: enc(skillMd("atom", "Counted.")), executable: false },
      { path: "a.md", bytes: enc("a"), executable: false },
    ]);
    expect(counted.writes()).toBe(3);
    expect(stored.r2Writes).toBe(3);
    await storeTree(counted.env, ws.id, [
      { path: "SKILL.md", bytes: enc(skillMd("atom", "Counted.")), executable: false },
      { path: "a.md", bytes: enc("a"), executable: false },
    ]);
    expect(counted.writes()).toBe(3);
    const input = publishInput(stored.treeHash, "Counted.", 2);
    const published = await runLockedMeasured(env, ws.id, { kind: "publish_skill", epoch: await storeEpoch(env, ws.id), input });
    expect(published).toMatchObject({ value: { version: "v0001" }, r2Writes: 0 });
  });
});
