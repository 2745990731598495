/**
 * Plugin sources on Gitea: configuration, the archive fetch (URL, auth, size cap, 404 → missing),
 * `recordUpstreamFromArchive`, and the push hook with a real Gitea push payload. Gitea itself is an
 * in-test fake reached through an injected fetch (or a spy on the global fetch for the route).
 */
import { afterEach, describe, expect, it, vi } from "vitest";
import { env } from "cloudflare:workers";
import { call, json, newWorkspace, type TestWorkspace } from "../../support/api.ts";
import { fetchSource, handleGiteaPushForPlugins, recordUpstreamFromArchive } from "../../../src/domains/governance/plugin-sources.ts";
import { archiveUrl, fetchGiteaArchive } from "../../../src/domains/plugins/gitea-archive.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { candidates, plugin, pluginPackage, post, uploadPackage } from "../../support/plugins.ts";
import hookPush from "../../fixtures/upstream/gitea/webhooks/HookPush.json";
import { hmacSha256Hex } from "../../../src/kernel/hash.ts";
import { runPluginTick } from "../../../src/domains/governance/plugin-cron.ts";
import { workspaceStub } from "../../../src/domains/governance/client.ts";
import { testEnv, testServices, workspaceLock } from "../../support/test-services.ts";

const V1 = { "SKILL.md": skillMd("reviewer", "Reviews pull requests.") };
const V2 = { "SKILL.md": skillMd("reviewer", "Reviews pull requests.", "# Steps\n\n1. Read the diff twice.\n") };

interface FakeGitea {
  fetch: (input: RequestInfo | URL, init?: RequestInit) => Promise<Response>;
  requests: { url: string; auth: string | null }[];
  archives: Map<string, Uint8Array>;
}

function fakeGitea(): FakeGitea {
  const archives = new Map<string, Uint8Array>();
  const requests: FakeGitea["requests"] = [];
  return {
    archives,
    requests,
    fetch: async (input, init) => {
      const url = typeof input === "string" ? input : input instanceof URL ? input.href : input.url;
      requests.push({ url, auth: new Headers(init?.headers).get("Authorization") });
      const bytes = archives.get(url);
      return bytes
        ? new Response(bytes, { headers: { "Content-Type": "application/octet-stream" } })
        : new Response('{"message":"not found"}', { status: 404 });
    },
  };
}

async function configure(ws: TestWorkspace): Promise<void> {
  expect(
    (
      await call("PUT", "/api/config", {
        token: ws.admin,
        body: { toolchain: { gitea_base_url: "https://gitea.test/", gitea_token_secret: "GITEA_TOKEN" } },
      })
    ).status,
  ).toBe(200);
  expect((await call("PUT", "/api/secrets/GITEA_TOKEN", { token: ws.admin, body: { value: "gitea-secret-token" } })).status).toBe(200);
  const src = await call("PUT", "/api/plugins/sources/team-skills", {
    token: ws.admin,
    body: { owner: "gordon", repo: "hello-world", ref: "main" },
  });
  expect(await json(src)).toEqual({ id: "team-skills", owner: "gordon", repo: "hello-world", ref: "main", created: true });
}

const url = (ref: string) => archiveUrl({ baseUrl: "https://gitea.test", owner: "gordon", repo: "hello-world", ref });

afterEach(() => vi.restoreAllMocks());

describe("Gitea plugin sources", () => {
  it("configures sources with validation, lists and deletes them", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    expect((await call("PUT", "/api/plugins/sources/bad", { token: ws.admin, body: { owner: "a/b", repo: "r" } })).status).toBe(400);
    expect((await call("PUT", "/api/plugins/sources/bad", { token: ws.admin, body: { owner: "a", repo: "r", ref: "../x" } })).status).toBe(
      400,
    );
    expect((await call("PUT", "/api/plugins/sources/x", { token: ws.member, body: { owner: "a", repo: "r" } })).status).toBe(403);
    const listed = await json<{ sources: unknown[] }>(await call("GET", "/api/plugins/sources", { token: ws.read }));
    expect(listed.sources).toEqual([
      {
        id: "team-skills",
        owner: "gordon",
        repo: "hello-world",
        ref: "main",
        last_fetched_at: null,
        last_commit: null,
        last_status: null,
        last_error: null,
      },
    ]);
    expect((await call("DELETE", "/api/plugins/sources/team-skills", { token: ws.admin })).status).toBe(200);
    expect((await call("DELETE", "/api/plugins/sources/team-skills", { token: ws.admin })).status).toBe(404);
  });

  it("fetches the archive through Gitea's API with the token and records the plugin as gitea-origin", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    const gitea = fakeGitea();
    gitea.archives.set(url("main"), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    const r = await fetchSource(env, ws.id, "team-skills", { actor: "t", fetchImpl: gitea.fetch });
    expect("recorded" in r && r.recorded.plugins).toEqual([{ id: "review-kit", packageStatus: "present", changed: true, enabled: false }]);
    expect(gitea.requests).toEqual([
      { url: "https://gitea.test/api/v1/repos/gordon/hello-world/archive/main.tar.gz", auth: "token gitea-secret-token" },
    ]);
    const p = await plugin(ws.read, "review-kit");
    expect(p).toMatchObject({ state: "discovered", discovered_version: "1.0.0" });
    expect(JSON.stringify(p)).not.toContain("gitea-secret-token");
    // An upload may not take over a plugin id that a Gitea source provides.
    const hijack = await uploadPackage(ws.admin, await pluginPackage("review-kit", "9.9.9", { reviewer: V1 }));
    expect(hijack.status).toBe(409);
    expect(hijack.body.error?.message).toContain("Gitea source 'team-skills'");
  });

  it("a push to the watched branch records the pushed commit and syncs at once", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    const gitea = fakeGitea();
    gitea.archives.set(url("main"), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    await fetchSource(env, ws.id, "team-skills", { actor: "t", fetchImpl: gitea.fetch });
    expect((await post(ws.admin, "/api/plugins/review-kit/enable")).status).toBe(200);

    // The real payload pushes `after` to refs/heads/main of gordon/hello-world.
    expect(hookPush.repository.full_name).toBe("gordon/hello-world");
    gitea.archives.set(url(hookPush.after), await pluginPackage("review-kit", "1.1.0", { reviewer: V2 }, { prefix: "hello-world" }));
    const handled = await handleGiteaPushForPlugins(env, ws.id, hookPush, gitea.fetch);
    expect(handled).toEqual([{ sourceId: "team-skills", outcome: "recorded" }]);
    expect(gitea.requests.at(-1)?.url).toBe(url(hookPush.after));
    const c = (await candidates(ws.read, "reviewer")).candidates;
    expect(c).toHaveLength(1);
    expect(c[0]).toMatchObject({ status: "drafted", merge_mode: "fast_forward", evidence: { plugin_version: "1.1.0" } });
    const src = await json<{ sources: { last_commit: string; last_status: string }[] }>(
      await call("GET", "/api/plugins/sources", { token: ws.read }),
    );
    expect(src.sources[0]).toMatchObject({ last_commit: hookPush.after, last_status: "ok" });

    // Other repositories, other branches and branch deletions are not ours.
    expect(await handleGiteaPushForPlugins(env, ws.id, { ...hookPush, ref: "refs/heads/feature" }, gitea.fetch)).toEqual([]);
    expect(await handleGiteaPushForPlugins(env, ws.id, { ...hookPush, repository: { full_name: "someone/else" } }, gitea.fetch)).toEqual(
      [],
    );
    expect(await handleGiteaPushForPlugins(env, ws.id, { ...hookPush, after: "0".repeat(40) }, gitea.fetch)).toEqual([]);
  });

  it("a push that meets a busy workspace is kept as deferred and recorded by the next cron tick", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    const gitea = fakeGitea();
    gitea.archives.set(url(hookPush.after), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    const stub = workspaceStub(env, ws.id);
    const lock = workspaceLock(stub.id);
    testServices.lockWaitMs = 50;
    expect(await lock.acquire(0)).toBe(true);
    try {
      // testEnv: the caller's wait bound follows testServices.lockWaitMs.
      const handled = await handleGiteaPushForPlugins(testEnv(env), ws.id, hookPush, gitea.fetch);
      expect(handled).toEqual([{ sourceId: "team-skills", outcome: "error", message: expect.stringContaining("busy") }]);
      const src = await json<{ sources: { last_status: string; last_commit: string }[] }>(
        await call("GET", "/api/plugins/sources", { token: ws.read }),
      );
      expect(src.sources[0]).toMatchObject({ last_status: "deferred", last_commit: hookPush.after });
      // Still busy at the next tick: cron only tries, and keeps it deferred.
      vi.spyOn(globalThis, "fetch").mockImplementation(gitea.fetch);
      expect((await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 1))).deferred).toContain(ws.id);
    } finally {
      lock.release();
      testServices.lockWaitMs = null;
    }
    const tick = await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 2));
    expect(tick.fetched).toContain(ws.id);
    expect(await plugin(ws.read, "review-kit")).toMatchObject({ state: "discovered", discovered_version: "1.0.0" });
    expect(gitea.requests.map((r) => r.url)).toEqual([url(hookPush.after), url(hookPush.after), url(hookPush.after)]);
    const src = await json<{ sources: { last_status: string }[] }>(await call("GET", "/api/plugins/sources", { token: ws.read }));
    expect(src.sources[0]!.last_status).toBe("ok");
    expect((await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 3))).fetched).not.toContain(ws.id);
  });

  it("a repository that is gone or no longer holds a manifest marks its plugins missing; skills stay active", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    const gitea = fakeGitea();
    gitea.archives.set(url("main"), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    await fetchSource(env, ws.id, "team-skills", { actor: "t", fetchImpl: gitea.fetch });
    await post(ws.admin, "/api/plugins/review-kit/enable");
    gitea.archives.clear();
    const gone = await fetchSource(env, ws.id, "team-skills", { actor: "t", fetchImpl: gitea.fetch });
    expect(gone).toMatchObject({ missing: { missing: ["review-kit"] } });
    expect(await plugin(ws.read, "review-kit")).toMatchObject({ state: "missing", skills: [{ skill_status: "active" }] });

    // Back, then the manifest is removed from the repository.
    gitea.archives.set(url("main"), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    await fetchSource(env, ws.id, "team-skills", { actor: "t", fetchImpl: gitea.fetch });
    expect((await plugin(ws.read, "review-kit")).state).toBe("enabled");
    const { tarGz } = await import("../../fixtures/skills/archives.ts");
    const noManifest = await tarGz([{ name: "hello-world/README.md", data: "moved elsewhere" }]);
    const r = await recordUpstreamFromArchive(env, ws.id, "team-skills", noManifest, { commit: "abc", actor: "t" });
    expect(r.recorded.missing).toEqual(["review-kit"]);
    expect((await plugin(ws.read, "review-kit")).state).toBe("missing");
  });

  it("caps the archive size and reports Gitea failures as upstream errors", async () => {
    const big = new Uint8Array(2048);
    const tooBig = fetchGiteaArchive(
      { baseUrl: "https://gitea.test", owner: "o", repo: "r", ref: "main", maxBytes: 1024, timeoutMs: 1000 },
      async () => new Response(big),
    );
    await expect(tooBig).rejects.toMatchObject({ code: "payload_too_large" });
    const down = fetchGiteaArchive(
      { baseUrl: "https://gitea.test", owner: "o", repo: "r", ref: "main", maxBytes: 1024, timeoutMs: 1000 },
      async () => new Response("boom", { status: 502 }),
    );
    await expect(down).rejects.toMatchObject({
      code: "upstream_unavailable",
      message: expect.stringContaining("GET /repos/o/r/archive/main.tar.gz"),
    });
    const offline = fetchGiteaArchive(
      { baseUrl: "https://gitea.test", owner: "o", repo: "r", ref: "main", maxBytes: 1024, timeoutMs: 1000 },
      async () => {
        throw new TypeError("network down");
      },
    );
    await expect(offline).rejects.toMatchObject({ code: "upstream_unavailable" });
  });

  it("the fetch route needs a configured Gitea, and uses Gitea's archive endpoint when there is one", async () => {
    const ws = await newWorkspace();
    await call("PUT", "/api/plugins/sources/s1", { token: ws.admin, body: { owner: "gordon", repo: "hello-world" } });
    const unconfigured = await call("POST", "/api/plugins/sources/s1/fetch", { token: ws.admin });
    expect(unconfigured.status).toBe(422);
    expect((await json<{ error: { message: string } }>(unconfigured)).error.message).toContain("toolchain.gitea_base_url");
    await configure(ws);
    const gitea = fakeGitea();
    gitea.archives.set(url("main"), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    vi.spyOn(globalThis, "fetch").mockImplementation(gitea.fetch);
    const res = await call("POST", "/api/plugins/sources/team-skills/fetch", { token: ws.admin });
    expect(await json(res)).toMatchObject({
      source_id: "team-skills",
      outcome: "recorded",
      recorded: [{ id: "review-kit", package_status: "present", changed: true }],
    });
    expect((await call("POST", "/api/plugins/sources/nope/fetch", { token: ws.admin })).status).toBe(404);
  });

  it("a signed push delivery to the webhook target reaches the plugin hook; an unsigned one does not", async () => {
    const ws = await newWorkspace();
    await configure(ws);
    await call("PUT", "/api/config", {
      token: ws.admin,
      body: { toolchain: { gitea_base_url: "https://gitea.test/", gitea_token_secret: "GITEA_TOKEN", webhook_secret: "HOOK_SECRET" } },
    });
    await call("PUT", "/api/secrets/HOOK_SECRET", { token: ws.admin, body: { value: "hook-secret" } });
    const gitea = fakeGitea();
    gitea.archives.set(url(hookPush.after), await pluginPackage("review-kit", "1.0.0", { reviewer: V1 }, { prefix: "hello-world" }));
    vi.spyOn(globalThis, "fetch").mockImplementation(gitea.fetch);
    const body = JSON.stringify(hookPush);
    const deliver = async (signature: string, id: string) =>
      call("POST", `/webhooks/gitea/${ws.id}`, {
        token: null,
        rawBody: body,
        headers: {
          "Content-Type": "application/json",
          "X-Gitea-Event-Type": "push",
          "X-Gitea-Delivery": id,
          "X-Gitea-Signature": signature,
        },
      });
    expect((await deliver("0".repeat(64), "d-unsigned")).status).toBe(401);
    expect(gitea.requests).toEqual([]);
    expect((await deliver(await hmacSha256Hex("hook-secret", body), "d-1")).status).toBe(202);
    let state = "";
    for (let i = 0; i < 250 && state !== "discovered"; i++) {
      await new Promise((r) => setTimeout(r, 20));
      const list = await json<{ plugins: { id: string; state: string }[] }>(await call("GET", "/api/plugins", { token: ws.read }));
      state = list.plugins.find((p) => p.id === "review-kit")?.state ?? "";
    }
    expect(state).toBe("discovered");
    expect(gitea.requests.map((r) => r.url)).toEqual([url(hookPush.after)]);
  });
});
