/**
 * The HTTP edges of skills and plugins: every archive attack through both upload endpoints is
 * refused with the entry named and nothing stored (no R2 object, no D1 row); oversize and malformed
 * bodies; scopes; another workspace's objects answer 404 on every route; and no answer — success or
 * error — carries an R2 key or a server path.
 */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { workspacePrefix } from "../../../src/storage/blob/keys.ts";
import { tarGz, zip, type TarEntryInput } from "../../fixtures/skills/archives.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { pluginPackage, post, uploadPackage, type J } from "../../support/plugins.ts";

const r2Objects = async (ws: string) => (await env.BLOBS.list({ prefix: workspacePrefix(ws) })).objects.length;
const rows = async (table: string, ws: string) =>
  (await env.DB.prepare(`SELECT count(*) AS n FROM ${table} WHERE workspace_id = ?`).bind(ws).first<{ n: number }>())!.n;

const manifest = JSON.stringify({
  schema_version: 1,
  id: "evil",
  name: "Evil",
  version: "1",
  skills: [{ name: "evil", path: "skills/evil" }],
});
const skill = skillMd("evil", "Looks fine.");
/** Each attack as a plugin package (its SKILL.md is valid, so only the attack can reject it). */
const ATTACKS: [string, () => Promise<Uint8Array>, string][] = [
  [
    "symlink",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/passwd", type: "symlink", linkname: "/etc/passwd" },
      ]),
    "skills/evil/passwd",
  ],
  [
    "zip symlink",
    () =>
      zip([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/passwd", data: "/etc/passwd", unixMode: 0o120777 },
      ]),
    "skills/evil/passwd",
  ],
  [
    "hard link",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/copy", type: "link", linkname: "beaver.plugin.json" },
      ]),
    "skills/evil/copy",
  ],
  [
    "device",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/tty", type: "character-device" },
      ]),
    "skills/evil/tty",
  ],
  [
    "fifo",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/pipe", type: "fifo" },
      ]),
    "skills/evil/pipe",
  ],
  [
    "absolute path",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "/etc/cron.d/evil", data: "* * * * * root sh" },
      ]),
    "/etc/cron.d/evil",
  ],
  [
    "'..' escape",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "skills/evil/../../../escape.sh", data: "x" },
      ]),
    "skills/evil/../../../escape.sh",
  ],
  [
    "duplicate path",
    () =>
      tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: "./skills/evil/SKILL.md", data: skillMd("evil", "Shadow.") },
      ]),
    "skills/evil/SKILL.md",
  ],
];

describe("archive attacks through the upload endpoints", () => {
  for (const [label, build, entry] of ATTACKS) {
    it(`refuses a ${label} before anything is stored, naming '${entry}'`, async () => {
      const ws = await newWorkspace();
      const bytes = await build();
      const type = bytes[0] === 0x50 ? "application/zip" : "application/gzip";
      const asPlugin = await call("PUT", "/api/plugins/packages", { token: ws.admin, rawBody: bytes, headers: { "Content-Type": type } });
      const asSkill = await call("PUT", "/api/skills/evil/upload", { token: ws.member, rawBody: bytes, headers: { "Content-Type": type } });
      for (const res of [asPlugin, asSkill]) {
        expect(res.status).toBe(422);
        const body = await json<J>(res);
        expect(body.error?.code).toBe("unprocessable");
        expect(body.error?.message).toContain(entry);
        expect((body.error?.details as { problems: { path: string }[] }).problems.map((p) => p.path)).toContain(entry);
      }
      expect(await r2Objects(ws.id)).toBe(0);
      for (const table of ["plugins", "upstream_snapshots", "skills", "skill_versions", "skill_blobs", "skill_trees"])
        expect(await rows(table, ws.id), table).toBe(0);
    });
  }

  // Issue 25 item 3, the sweep's probes: names no file may have answer 400 through both endpoints, as JSON fields do.
  const BAD_NAMES: [string, string][] = [
    ["a percent-encoded segment", "skills/evil/%2e%2e/x"],
    ["a .git/ segment", "skills/evil/.git/config"],
    ["a case-only duplicate", "skills/evil/skill.md"],
  ];
  for (const [label, entry] of BAD_NAMES) {
    it(`answers ${label} in an archive with 400, storing nothing`, async () => {
      const ws = await newWorkspace();
      const bytes = await tarGz([
        { name: "beaver.plugin.json", data: manifest },
        { name: "skills/evil/SKILL.md", data: skill },
        { name: entry, data: "x" },
      ]);
      const headers = { "Content-Type": "application/gzip" };
      const asPlugin = await call("PUT", "/api/plugins/packages", { token: ws.admin, rawBody: bytes, headers });
      const asSkill = await call("PUT", "/api/skills/evil/upload", { token: ws.member, rawBody: bytes, headers });
      for (const res of [asPlugin, asSkill]) {
        expect(res.status).toBe(400);
        const body = await json<J>(res);
        expect(body.error?.code).toBe("bad_request");
        expect((body.error?.details as { problems: { path: string }[] }).problems.map((p) => p.path)).toContain(entry);
      }
      expect(await r2Objects(ws.id)).toBe(0);
      expect(await rows("skills", ws.id)).toBe(0);
    });
  }

  it("refuses too many files with the limit named, storing nothing", async () => {
    const ws = await newWorkspace();
    const many: TarEntryInput[] = [
      { name: "beaver.plugin.json", data: manifest },
      { name: "skills/evil/SKILL.md", data: skill },
    ];
    for (let i = 0; i < 2001; i++) many.push({ name: `skills/evil/f/${i}.md`, data: "x" });
    const tooMany = await uploadPackage(ws.admin, await tarGz(many));
    expect(tooMany.status).toBe(422);
    expect(tooMany.body.error?.message).toMatch(/too many files: 2003 \(limit 2000\)/);
    expect(await r2Objects(ws.id)).toBe(0);
    expect(await rows("plugins", ws.id)).toBe(0);
  });
});

describe("oversize and malformed bodies", () => {
  it("answers 413 for oversize package and skill bodies, 400 for bytes that are no archive, 415 for a wrong type", async () => {
    const ws = await newWorkspace();
    const huge = new Uint8Array(33 * 1024 * 1024);
    const pkg = await call("PUT", "/api/plugins/packages", {
      token: ws.admin,
      rawBody: huge,
      headers: { "Content-Type": "application/gzip" },
    });
    expect(pkg.status).toBe(413);
    expect((await json<J>(pkg)).error?.code).toBe("payload_too_large");
    const bigJson = await call("PUT", "/api/skills/big", {
      token: ws.member,
      rawBody: new Uint8Array(33 * 1024 * 1024).fill(0x20),
      headers: { "Content-Type": "application/json" },
    });
    expect(bigJson.status).toBe(413);
    const bigSync = await call("POST", "/api/plugins/sync", {
      token: ws.admin,
      rawBody: JSON.stringify({ plugin_id: "x".repeat(2 * 1024 * 1024) }),
      headers: { "Content-Type": "application/json" },
    });
    expect(bigSync.status).toBe(413);

    const garbage = await uploadPackage(ws.admin, new TextEncoder().encode("PK but not really a zip archive"));
    expect(garbage.status).toBe(400);
    expect(garbage.body.error?.message).toMatch(/Archive could not be read/);
    const truncated = (await pluginPackage("cut", "1", { cut: { "SKILL.md": skillMd("cut", "Cut.") } })).slice(0, 40);
    expect((await uploadPackage(ws.admin, truncated)).status).toBe(400);
    const wrongType = await call("PUT", "/api/plugins/packages", {
      token: ws.admin,
      rawBody: truncated,
      headers: { "Content-Type": "text/plain" },
    });
    expect(wrongType.status).toBe(415);

    const badJson = await call("PUT", "/api/skills/big", {
      token: ws.member,
      rawBody: "{ files: [",
      headers: { "Content-Type": "application/json" },
    });
    expect(badJson.status).toBe(400);
    const badDisable = await call("POST", "/api/plugins/x/disable", {
      token: ws.admin,
      rawBody: "{",
      headers: { "Content-Type": "application/json" },
    });
    expect(badDisable.status).toBe(400);
    expect(await r2Objects(ws.id)).toBe(0);
  });
});

async function enabledPlugin(ws: TestWorkspace): Promise<void> {
  await uploadPackage(ws.admin, await pluginPackage("mine", "1", { only: { "SKILL.md": skillMd("only", "Only.") } }));
  expect((await post(ws.admin, "/api/plugins/mine/enable")).status).toBe(200);
  await uploadPackage(ws.admin, await pluginPackage("mine", "2", { only: { "SKILL.md": skillMd("only", "Only, better.") } }));
  expect((await post(ws.admin, "/api/plugins/sync")).status).toBe(200);
}

describe("scopes and workspaces", () => {
  it("every plugin and skill route answers 404 for another workspace's objects", async () => {
    const a = await newWorkspace();
    const b = await newWorkspace();
    await enabledPlugin(a);
    const routes: [string, string, unknown?][] = [
      ["GET", "/api/skills/only"],
      ["GET", "/api/skills/only/versions"],
      ["GET", "/api/skills/only/versions/v0001"],
      ["GET", "/api/skills/only/versions/v0001/file?path=SKILL.md"],
      ["GET", "/api/skills/only/candidates"],
      ["POST", "/api/skills/only/rollback", { version: "v0001" }],
      ["POST", "/api/skills/only/disable"],
      ["POST", "/api/skills/only/enable"],
      ["POST", "/api/plugins/mine/enable"],
      ["POST", "/api/plugins/mine/pause"],
      ["POST", "/api/plugins/mine/resume"],
      ["POST", "/api/plugins/mine/disable", { disable_linked_skills: true }],
      ["POST", "/api/plugins/mine/skills/only/adopt"],
      ["POST", "/api/plugins/sync", { plugin_id: "mine" }],
      ["DELETE", "/api/plugins/packages/mine"],
    ];
    for (const [method, path, body] of routes) {
      const res = await call(method, path, { token: b.admin, ...(body !== undefined ? { body } : {}) });
      expect(res.status, `${method} ${path}`).toBe(404);
      expect((await json<J>(res)).error?.code).toBe("not_found");
    }
    // Nothing of a's leaked into b, and a is untouched.
    expect((await json<{ plugins: unknown[] }>(await call("GET", "/api/plugins", { token: b.read }))).plugins).toEqual([]);
    expect(await json(await call("GET", "/api/skills/only", { token: a.read }))).toMatchObject({ status: "active", source_kind: "plugin" });
  });

  it("read tokens read, members publish skills, only admins change plugins or roll back", async () => {
    const ws = await newWorkspace();
    await enabledPlugin(ws);
    for (const path of [
      "/api/plugins/sync",
      "/api/plugins/mine/pause",
      "/api/plugins/mine/resume",
      "/api/plugins/mine/skills/only/adopt",
      "/api/plugins/mine/enable",
    ]) {
      expect((await call("POST", path, { token: ws.member })).status, path).toBe(403);
      expect((await call("POST", path, { token: ws.read })).status, path).toBe(403);
    }
    expect((await call("POST", "/api/plugins/mine/disable", { token: ws.member, body: { disable_linked_skills: true } })).status).toBe(403);
    expect(
      (await call("PUT", "/api/skills/only", { token: ws.read, body: { files: [{ path: "SKILL.md", content: skillMd("only", "x") }] } }))
        .status,
    ).toBe(403);
    expect((await call("GET", "/api/skills/only/candidates", { token: ws.read })).status).toBe(200);
    expect((await call("GET", "/api/plugins", { token: null })).status).toBe(401);
    expect((await call("GET", "/api/skills/nothing-here/candidates", { token: ws.read })).status).toBe(404);
  });
});

describe("no storage keys or server paths in answers", () => {
  it("holds for every skill and plugin answer of a full flow, errors included", async () => {
    const ws = await newWorkspace();
    await enabledPlugin(ws);
    const answers: string[] = [];
    const record = async (res: Response) =>
      answers.push(`${res.status} ${[...res.headers.entries()].map(([k, v]) => `${k}: ${v}`).join("; ")} ${await res.text()}`);
    await record(await call("GET", "/api/plugins", { token: ws.read }));
    await record(await call("GET", "/api/plugins/sources", { token: ws.read }));
    await record(await call("GET", "/api/skills", { token: ws.read }));
    await record(await call("GET", "/api/skills/only", { token: ws.read }));
    await record(await call("GET", "/api/skills/only/versions", { token: ws.read }));
    await record(await call("GET", "/api/skills/only/versions/v0001", { token: ws.read }));
    await record(await call("GET", "/api/skills/only/candidates", { token: ws.read }));
    await record(await call("POST", "/api/plugins/sync", { token: ws.admin }));
    await record(await call("POST", "/api/plugins/mine/pause", { token: ws.admin }));
    await record(await call("POST", "/api/plugins/mine/resume", { token: ws.admin }));
    await record(await call("POST", "/api/plugins/mine/skills/only/adopt", { token: ws.admin }));
    await record(await call("POST", "/api/plugins/mine/disable", { token: ws.admin, body: { disable_linked_skills: true } }));
    await record(await call("POST", "/api/skills/_gc", { token: ws.admin, body: {} }));
    // Errors: missing file, missing version, bad archive, invalid package, attack.
    await record(await call("GET", "/api/skills/only/versions/v0001/file?path=nope.md", { token: ws.read }));
    await record(await call("GET", "/api/skills/only/versions/v0099", { token: ws.read }));
    await record(
      await call("PUT", "/api/plugins/packages", {
        token: ws.admin,
        rawBody: new Uint8Array([0x1f, 0x8b, 8, 0, 1, 2, 3]),
        headers: { "Content-Type": "application/gzip" },
      }),
    );
    await record(
      await call("PUT", "/api/plugins/packages", {
        token: ws.admin,
        rawBody: await tarGz([{ name: "beaver.plugin.json", data: "{}" }]),
        headers: { "Content-Type": "application/gzip" },
      }),
    );
    await record(
      await call("PUT", "/api/plugins/packages", {
        token: ws.admin,
        rawBody: await ATTACKS[0]![1](),
        headers: { "Content-Type": "application/gzip" },
      }),
    );
    expect(answers).toHaveLength(18);
    const keyPrefix = workspacePrefix(ws.id);
    for (const a of answers) {
      expect(a).not.toContain(keyPrefix);
      expect(a).not.toMatch(/\bws\/[^\s"]+\/(blobs|trees)\//);
      expect(a).not.toMatch(/\/(work|tmp|home|usr|var)\/|node_modules|file:\/\/|\.ts:\d+/);
    }
  });
});
