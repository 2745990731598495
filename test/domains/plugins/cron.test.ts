/** Automatic sync from the cron tick: only workspaces whose packages changed, and never waiting for the lock. */
import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { newWorkspace } from "../../support/api.ts";
import { runPluginTick } from "../../../src/domains/governance/plugin-cron.ts";
import { workspaceStub } from "../../../src/domains/governance/client.ts";
import { skillMd } from "../../fixtures/skills/bundles.ts";
import { candidates, pluginPackage, post, uploadPackage } from "../../support/plugins.ts";
import { workspaceLock } from "../../support/test-services.ts";

describe("plugin cron", () => {
  it("syncs a changed package, defers a busy workspace, and leaves unchanged ones alone", async () => {
    const ws = await newWorkspace();
    await uploadPackage(ws.admin, await pluginPackage("auto", "1", { autosk: { "SKILL.md": skillMd("autosk", "One.") } }));
    await post(ws.admin, "/api/plugins/auto/enable");
    const quiet = await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 0));
    expect(quiet.synced).not.toContain(ws.id); // enabling mirrored the package as it is: nothing to sync
    await uploadPackage(ws.admin, await pluginPackage("auto", "2", { autosk: { "SKILL.md": skillMd("autosk", "Two.") } }));

    const stub = workspaceStub(env, ws.id);
    const lock = workspaceLock(stub.id);
    expect(await lock.acquire(0)).toBe(true);
    try {
      const busy = await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 1));
      expect(busy.deferred).toContain(ws.id);
      expect((await candidates(ws.read, "autosk")).candidates).toEqual([]);
    } finally {
      lock.release();
    }
    const tick = await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 2));
    expect(tick.synced).toContain(ws.id);
    expect((await candidates(ws.read, "autosk")).candidates).toHaveLength(1);
    const again = await runPluginTick(env, Date.UTC(2026, 0, 1, 0, 3));
    expect(again.synced).not.toContain(ws.id);
  });
});
