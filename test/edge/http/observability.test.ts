/** Request ids and structured logs: every answer carries `X-Request-Id`, and log lines carry the ids of the work. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SELF } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { createApp } from "../../../src/edge/http/app.ts";
import { SLOW_REQUEST_MS, wantsAccessLine } from "../../../src/edge/http/request-context.ts";
import type { Env } from "../../../src/storage/env.ts";
import { newWorkspace } from "../../support/api.ts";
import { log, withLogContext } from "../../../src/kernel/log.ts";
import { logUnexpected } from "../../../src/kernel/outcome.ts";

afterEach(() => vi.restoreAllMocks());

/** Captures the JSON lines written to the console while `fn` runs. */
async function captureLogs(fn: () => Promise<unknown>): Promise<Record<string, unknown>[]> {
  const lines: Record<string, unknown>[] = [];
  const keep = (...args: unknown[]) => {
    if (typeof args[0] !== "string") return;
    try {
      lines.push(JSON.parse(args[0]) as Record<string, unknown>);
    } catch {
      // not one of ours
    }
  };
  for (const level of ["log", "warn", "error"] as const) vi.spyOn(console, level).mockImplementation(keep);
  await fn();
  return lines;
}

describe("request ids", () => {
  it("gives every answer an X-Request-Id, keeps a sane one the caller sent and replaces anything else", async () => {
    const fresh = await SELF.fetch("https://beaver.test/api/ping");
    expect(fresh.headers.get("X-Request-Id")).toMatch(/^req_[a-z0-9]{20}$/);
    const kept = await SELF.fetch("https://beaver.test/api/ping", { headers: { "X-Request-Id": "trace-42.a:b" } });
    expect(kept.headers.get("X-Request-Id")).toBe("trace-42.a:b");
    const replaced = await SELF.fetch("https://beaver.test/api/ping", { headers: { "X-Request-Id": "no spaces <allowed>" } });
    expect(replaced.headers.get("X-Request-Id")).toMatch(/^req_/);
    const notFound = await SELF.fetch("https://beaver.test/api/nowhere", { headers: { Authorization: "Bearer test-admin-token" } });
    expect(notFound.status).toBe(404);
    expect(notFound.headers.get("X-Request-Id")).toMatch(/^req_/);
  });

  it("writes an access line for an error answer, with the request id and the caller's workspace, and none for a fast success", async () => {
    const ws = await newWorkspace();
    const lines = await captureLogs(async () => {
      const ok = await SELF.fetch("https://beaver.test/api/sessions", {
        headers: { Authorization: `Bearer ${ws.read}`, "X-Request-Id": "obs-test-ok" },
      });
      expect(ok.status).toBe(200);
      expect(ok.headers.get("X-Request-Id")).toBe("obs-test-ok");
      const missing = await SELF.fetch("https://beaver.test/api/sessions/ses_nothing_here", {
        headers: { Authorization: `Bearer ${ws.read}`, "X-Request-Id": "obs-test-404" },
      });
      expect(missing.status).toBe(404);
    });
    expect(lines.filter((l) => l.msg === "request" && l.request_id === "obs-test-ok")).toHaveLength(0);
    const access = lines.filter((l) => l.msg === "request" && l.request_id === "obs-test-404");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({
      level: "info",
      method: "GET",
      path: "/api/sessions/ses_nothing_here",
      status: 404,
      workspace_id: ws.id,
    });
  });

  it("writes one for every request with BEAVER_ACCESS_LOG=all", async () => {
    const ws = await newWorkspace();
    const vars: Env = { ...(env as unknown as Env), BEAVER_ACCESS_LOG: "all" };
    const lines = await captureLogs(async () => {
      const res = await createApp().request(
        "https://beaver.test/api/sessions",
        { headers: { Authorization: `Bearer ${ws.read}`, "X-Request-Id": "obs-test-all" } },
        vars,
      );
      expect(res.status).toBe(200);
    });
    const access = lines.filter((l) => l.msg === "request" && l.request_id === "obs-test-all");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ level: "info", method: "GET", path: "/api/sessions", status: 200, workspace_id: ws.id });
  });

  it("counts a slow answer as worth a line whatever its status", () => {
    expect(wantsAccessLine(undefined, 200, SLOW_REQUEST_MS)).toBe(true);
    expect(wantsAccessLine(undefined, 200, SLOW_REQUEST_MS - 1)).toBe(false);
    expect(wantsAccessLine(undefined, 429, 0)).toBe(true);
    expect(wantsAccessLine(" ALL ", 204, 0)).toBe(true);
    expect(wantsAccessLine("errors", 204, 0)).toBe(false);
  });
});

describe("structured logs", () => {
  it("add the context's ids to every line, nested contexts merging", async () => {
    const lines = await captureLogs(async () => {
      await withLogContext({ workspace_id: "w1", session_id: "s1" }, async () => {
        await withLogContext({ run_id: "r1" }, async () => log.warn("inside", { extra: 1 }));
        log.info("outside the run");
      });
    });
    expect(lines).toEqual([
      expect.objectContaining({ level: "warn", msg: "inside", workspace_id: "w1", session_id: "s1", run_id: "r1", extra: 1 }),
      expect.objectContaining({ level: "info", msg: "outside the run", workspace_id: "w1", session_id: "s1" }),
    ]);
    expect(lines[1]).not.toHaveProperty("run_id");
  });

  it("log an unexpected error once, with the id its answer carries and without leaking its text to the answer", async () => {
    let wire: ReturnType<typeof logUnexpected> | undefined;
    const lines = await captureLogs(async () => {
      wire = withLogContext({ request_id: "req-x" }, () => logUnexpected("test", new Error("secret detail")));
    });
    expect(wire).toMatchObject({ code: "internal", message: "Internal error", details: { error_id: expect.stringMatching(/^err_/) } });
    expect(JSON.stringify(wire)).not.toContain("secret detail");
    const errors = lines.filter((l) => l.level === "error");
    expect(errors).toHaveLength(1);
    expect(errors[0]).toMatchObject({ request_id: "req-x", where: "test", error_id: (wire?.details as { error_id: string }).error_id });
    expect(String(errors[0]?.error)).toContain("secret detail");
  });
});
