import { describe, expect, it } from "vitest";
import { env } from "cloudflare:workers";
import { builtinTools } from "../../../src/runtime/tools/builtins/index.ts";
import { describeTime } from "../../../src/runtime/tools/builtins/time-format.ts";
import { executeToolCall } from "../../../src/runtime/tools/executor.ts";
import { ToolRegistry } from "../../../src/runtime/tools/registry.ts";
import type { ToolContext } from "../../../src/runtime/tools/spec.ts";
import { saveConfig } from "../../../src/storage/config/store.ts";
import { WorkspaceConfigSchema } from "../../../src/app/config.ts";
import { newWorkspace } from "../../support/api.ts";

const registry = new ToolRegistry(builtinTools());

function ctx(workspaceId: string, timezone?: string): ToolContext {
  const c: ToolContext = {
    env,
    workspaceId,
    sessionId: "ses_b",
    runId: "run_b",
    toolCallId: "call_b",
    signal: new AbortController().signal,
    data: {},
    emitUpdate: () => {},
  };
  if (timezone) c.timezone = timezone;
  return c;
}

function field(content: string, name: string): string {
  const line = content.split("\n").find((l) => l.startsWith(`${name}: `));
  if (!line) throw new Error(`no ${name} line in ${content}`);
  return line.slice(name.length + 2);
}

describe("builtin tools", () => {
  it("registers echo and current_time, both idempotent", () => {
    expect(registry.names()).toEqual(["echo", "current_time"]);
    expect(registry.list().every((t) => t.idempotent)).toBe(true);
  });

  it("echo returns its text unchanged", async () => {
    const res = await executeToolCall(registry, { id: "e1", name: "echo", args: { text: "  héllo\nworld " } }, ctx("ws-none"));
    expect(res).toMatchObject({ ok: true, content: "  héllo\nworld " });
    expect((await executeToolCall(registry, { id: "e2", name: "echo", args: {} }, ctx("ws-none"))).error?.code).toBe("invalid_arguments");
  });

  it("current_time reports UTC now and the asked-for zone", async () => {
    const before = Date.now();
    const res = await executeToolCall(
      registry,
      { id: "t1", name: "current_time", args: { timezone: "Asia/Kolkata" } },
      ctx("ws-none", "Europe/Berlin"),
    );
    expect(res.ok).toBe(true);
    const utc = Date.parse(field(res.content, "utc"));
    expect(utc).toBeGreaterThanOrEqual(before - 1_000);
    expect(utc).toBeLessThanOrEqual(Date.now() + 1_000);
    expect(field(res.content, "timezone")).toBe("Asia/Kolkata (UTC+05:30)");
    expect(Date.parse(field(res.content, "local").split(" ")[0]!)).toBe(Math.floor(utc / 1000) * 1000);
  });

  it("current_time falls back to the run's zone, then to the workspace config", async () => {
    const fromCtx = await executeToolCall(registry, { id: "t2", name: "current_time", args: {} }, ctx("ws-none", "Asia/Tokyo"));
    expect(field(fromCtx.content, "timezone")).toBe("Asia/Tokyo (UTC+09:00)");

    const ws = await newWorkspace();
    await saveConfig(env, ws.id, WorkspaceConfigSchema.parse({ runtime: { timezone: "Asia/Kathmandu" } }));
    const fromConfig = await executeToolCall(registry, { id: "t3", name: "current_time", args: {} }, ctx(ws.id));
    expect(field(fromConfig.content, "timezone")).toBe("Asia/Kathmandu (UTC+05:45)");

    const other = await newWorkspace();
    const defaults = await executeToolCall(registry, { id: "t4", name: "current_time", args: {} }, ctx(other.id));
    expect(field(defaults.content, "timezone")).toBe("UTC (UTC+00:00)");
  });

  it("current_time rejects an unknown zone with invalid_arguments naming the field", async () => {
    const res = await executeToolCall(registry, { id: "t5", name: "current_time", args: { timezone: "Mars/Olympus" } }, ctx("ws-none"));
    expect(res.error?.code).toBe("invalid_arguments");
    expect(res.content).toContain("- timezone: must be an IANA time zone");
  });
});

describe("describeTime", () => {
  const instant = new Date("2026-05-26T03:18:35.123Z");
  it.each([
    ["UTC", "2026-05-26T03:18:35+00:00", "+00:00", "Tuesday"],
    ["Asia/Shanghai", "2026-05-26T11:18:35+08:00", "+08:00", "Tuesday"],
    ["America/New_York", "2026-05-25T23:18:35-04:00", "-04:00", "Monday"],
    ["Asia/Kolkata", "2026-05-26T08:48:35+05:30", "+05:30", "Tuesday"],
  ])("renders %s", (tz, local, offset, weekday) => {
    expect(describeTime(instant, tz)).toEqual({ utc: "2026-05-26T03:18:35.123Z", local, offset, weekday, timezone: tz });
  });

  it("follows daylight saving time", () => {
    expect(describeTime(new Date("2026-01-15T12:00:00Z"), "America/New_York").offset).toBe("-05:00");
  });
});
