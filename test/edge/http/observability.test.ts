/** Request ids and structured logs: every answer carries `X-Request-Id`, and log lines carry the ids of the work. */
import { afterEach, describe, expect, it, vi } from "vitest";
import { SELF } from "cloudflare:test";
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

  it("writes one JSON access line per request with the request id and the caller's workspace", async () => {
    const ws = await newWorkspace();
    let requestId: string | null = null;
    const lines = await captureLogs(async () => {
      const res = await SELF.fetch("https://beaver.test/api/sessions", {
        headers: { Authorization: `Bearer ${ws.read}`, "X-Request-Id": "obs-test-1" },
      });
      requestId = res.headers.get("X-Request-Id");
      expect(res.status).toBe(200);
    });
    expect(requestId).toBe("obs-test-1");
    const access = lines.filter((l) => l.msg === "request" && l.request_id === "obs-test-1");
    expect(access).toHaveLength(1);
    expect(access[0]).toMatchObject({ level: "info", method: "GET", path: "/api/sessions", status: 200, workspace_id: ws.id });
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
