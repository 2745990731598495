/**
 * The per-workspace tool policy (docs/approvals.md): rule matching by name or glob, first match wins,
 * what is offered, and the policy as the first beforeToolCall extension.
 */
import { describe, expect, it } from "vitest";
import {
  ToolPolicySchema,
  matchingRule,
  offeredByPolicy,
  policyAction,
  toolPolicyExtension,
  toolPolicyOf,
  type ToolPolicy,
} from "../../../src/runtime/tools/policy.ts";
import { DEFAULT_CONFIG } from "../../../src/storage/config/schema.ts";
import { WorkspaceConfigSchema } from "../../../src/app/config.ts";
import type { HookContext } from "../../../src/runtime/extensions.ts";

const policy: ToolPolicy = [
  { match: "web_fetch", action: "deny" },
  { match: "mcp__github__create_*", action: "require_approval" },
  { match: "mcp__github__*", action: "allow" },
  { match: "mcp__*", action: "deny" },
  { match: "{schedule,memory}", action: "require_approval" },
];

describe("tool policy matching", () => {
  it("matches exact names and globs, first match wins, nothing matching allows", () => {
    expect(policyAction(policy, "web_fetch")).toBe("deny");
    expect(policyAction(policy, "web_fetch_more")).toBe("allow");
    expect(policyAction(policy, "mcp__github__create_issue")).toBe("require_approval");
    expect(policyAction(policy, "mcp__github__list_issues")).toBe("allow");
    expect(policyAction(policy, "mcp__everything__echo")).toBe("deny");
    expect(policyAction(policy, "schedule")).toBe("require_approval");
    expect(policyAction(policy, "memory")).toBe("require_approval");
    expect(policyAction(policy, "echo")).toBe("allow");
    expect(matchingRule(policy, "mcp__github__create_pr")).toEqual({ match: "mcp__github__create_*", action: "require_approval" });
    expect(matchingRule([], "echo")).toBeNull();
  });

  it("order decides: the same rules the other way round give the other answer", () => {
    const reversed: ToolPolicy = [
      { match: "mcp__*", action: "deny" },
      { match: "mcp__github__*", action: "allow" },
    ];
    expect(policyAction(reversed, "mcp__github__list_issues")).toBe("deny");
    expect(policyAction([...reversed].reverse(), "mcp__github__list_issues")).toBe("allow");
  });

  it("a glob's characters in a rule are glob syntax; names with dots are matched too", () => {
    expect(policyAction([{ match: "tool.*", action: "deny" }], "tool.read")).toBe("deny");
    expect(policyAction([{ match: "echo?", action: "deny" }], "echo1")).toBe("deny");
    expect(policyAction([{ match: "echo?", action: "deny" }], "echo")).toBe("allow");
    expect(policyAction([{ match: "*", action: "require_approval" }], "anything_at_all")).toBe("require_approval");
  });

  it("denied tools are not offered; approval-bound ones are", () => {
    expect(offeredByPolicy(policy, "web_fetch")).toBe(false);
    expect(offeredByPolicy(policy, "schedule")).toBe(true);
    expect(offeredByPolicy(policy, "echo")).toBe(true);
  });
});

describe("tool policy config", () => {
  it("is a registered config section, checked strictly on write", () => {
    expect(WorkspaceConfigSchema.safeParse({ tool_policy: policy }).success).toBe(true);
    const bad = WorkspaceConfigSchema.safeParse({ tool_policy: [{ match: "x", action: "maybe" }] });
    expect(bad.success).toBe(false);
    expect(WorkspaceConfigSchema.safeParse({ tool_policy: [{ match: "", action: "deny" }] }).success).toBe(false);
    expect(WorkspaceConfigSchema.safeParse({ tool_policy: [{ match: "x", action: "deny", extra: 1 }] }).success).toBe(false);
    expect(ToolPolicySchema.safeParse(Array.from({ length: 101 }, () => ({ match: "x", action: "deny" }))).success).toBe(false);
  });

  it("reads the stored section; absent or unreadable is no policy", () => {
    expect(toolPolicyOf({ ...DEFAULT_CONFIG, tool_policy: policy })).toEqual(policy);
    expect(toolPolicyOf(DEFAULT_CONFIG)).toEqual([]);
    expect(toolPolicyOf({ ...DEFAULT_CONFIG, tool_policy: "deny everything" })).toEqual([]);
  });

  it("has a configurable approval timeout with a default", () => {
    expect(DEFAULT_CONFIG.runtime.approval_timeout_ms).toBe(15 * 60_000);
    expect(WorkspaceConfigSchema.safeParse({ runtime: { approval_timeout_ms: 500 } }).success).toBe(false);
    expect(WorkspaceConfigSchema.safeParse({ runtime: { approval_timeout_ms: 60_000 } }).success).toBe(true);
  });
});

describe("the policy as a beforeToolCall", () => {
  const ctx = (tool_policy: ToolPolicy): HookContext => ({
    env: {} as HookContext["env"],
    workspaceId: "ws",
    sessionId: "ses",
    runId: "run",
    config: { ...DEFAULT_CONFIG, tool_policy },
    data: {},
  });
  const ext = toolPolicyExtension();
  const call = (name: string) => ({ toolCallId: "c1", name, args: {} });

  it("blocks denied calls with the rule, asks approval for the others, says nothing for allowed ones", async () => {
    expect(await ext.beforeToolCall!(call("web_fetch"), ctx(policy))).toMatchObject({
      action: "block",
      code: "denied_by_policy",
      reason: expect.stringContaining('"web_fetch": deny'),
    });
    expect(await ext.beforeToolCall!(call("schedule"), ctx(policy))).toMatchObject({ action: "require_approval" });
    expect(await ext.beforeToolCall!(call("echo"), ctx(policy))).toBeUndefined();
    expect(await ext.beforeToolCall!(call("web_fetch"), ctx([]))).toBeUndefined();
  });
});
