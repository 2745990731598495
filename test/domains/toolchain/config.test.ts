import { describe, expect, it } from "vitest";
import { call, json, newWorkspace } from "../../support/api.ts";

type Err = { error: { code: string; details?: { path: string; message: string }[] } };

describe("the toolchain section of /api/config", () => {
  it("applies defaults and keeps what the workspace sets", async () => {
    const ws = await newWorkspace();
    const put = await call("PUT", "/api/config", {
      token: ws.admin,
      body: {
        toolchain: {
          gitea_base_url: "https://git.example.org",
          webhook_secret: "HOOK",
          routing: { deploy_failure: ["ops"] },
          retry: { max_attempts: 5 },
        },
      },
    });
    expect(put.status).toBe(200);
    const got = await json<{ toolchain: Record<string, unknown> }>(await call("GET", "/api/config", { token: ws.read }));
    expect(got.toolchain).toMatchObject({
      gitea_base_url: "https://git.example.org",
      webhook_secret: "HOOK",
      routing: { deploy_failure: ["ops"] },
      deploy_pattern: "^deploy",
      retry: { max_attempts: 5, business_failures_before_system: 3, backoff_ms: 60_000 },
      timeouts: { gitea_request_ms: 10_000, report_window_ms: 1_800_000 },
      concurrency: { max_working: 2, dispatch_on_intake: true },
    });
  });

  it("rejects bad values with the field path", async () => {
    const ws = await newWorkspace();
    const cases: [Record<string, unknown>, string][] = [
      [{ deploy_pattern: "([unclosed" }, "toolchain.deploy_pattern"],
      [{ webhook_secret: "not a name!" }, "toolchain.webhook_secret"],
      [{ gitea_base_url: "ftp://git.example.org" }, "toolchain.gitea_base_url"],
      [{ routing: { merge_conflict: ["ops"] } }, "toolchain.routing.merge_conflict"],
      [{ timeouts: { gitea_request_ms: 5 } }, "toolchain.timeouts.gitea_request_ms"],
      [{ concurrency: { max_working: 0 } }, "toolchain.concurrency.max_working"],
      [{ surprise: true }, "toolchain.surprise"],
    ];
    for (const [toolchain, path] of cases) {
      const res = await call("PUT", "/api/config", { token: ws.admin, body: { toolchain } });
      expect(res.status, path).toBe(400);
      expect(
        (await json<Err>(res)).error.details?.map((d) => d.path),
        path,
      ).toContain(path);
    }
  });
});
