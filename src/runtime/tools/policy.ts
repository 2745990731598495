/**
 * The per-workspace tool policy (docs/approvals.md, "Tool policy"): `tool_policy` in the workspace
 * configuration is a list of `{ match, action }` rules; the first rule whose `match` (a tool name or a
 * picomatch glob such as `mcp__github__*`) fits a tool's name decides: `allow`, `deny` or
 * `require_approval`. No matching rule allows. The policy is applied through the extension interface
 * (`toolPolicyExtension`, a `beforeToolCall` registered first at the composition root), and denied
 * tools are also left out of the tools a run is offered (`offeredByPolicy`).
 */
import picomatch from "picomatch";
import { z } from "zod";
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { deepFreeze, memoByObject } from "../../kernel/memo.ts";
import type { Extension } from "../extensions.ts";

export const TOOL_POLICY_ACTIONS = ["allow", "deny", "require_approval"] as const;
export type ToolPolicyAction = (typeof TOOL_POLICY_ACTIONS)[number];

export const ToolPolicyRuleSchema = z.strictObject({
  /** A tool name or a glob over tool names (picomatch syntax: `*`, `?`, `{a,b}`, `[abc]`). */
  match: z.string().min(1).max(200),
  action: z.enum(TOOL_POLICY_ACTIONS),
});
export type ToolPolicyRule = z.infer<typeof ToolPolicyRuleSchema>;

/** The `tool_policy` config section; at most 100 rules. */
export const ToolPolicySchema = z.array(ToolPolicyRuleSchema).max(100);
export type ToolPolicy = z.infer<typeof ToolPolicySchema>;

export const TOOL_POLICY_KEY = "tool_policy";

/** The workspace's policy as stored (validated on write); anything unreadable is treated as no policy. */
export const toolPolicyOf: (config: WorkspaceConfig) => ToolPolicy = memoByObject((config) => {
  const parsed = ToolPolicySchema.safeParse((config as Record<string, unknown>)[TOOL_POLICY_KEY]);
  return deepFreeze(parsed.success ? parsed.data : []);
});

const matchers = new Map<string, (name: string) => boolean>();

function matcherFor(glob: string): (name: string) => boolean {
  let m = matchers.get(glob);
  if (!m) {
    // Tool names are not paths: `*` must also cross the `__` of MCP names and a `.` must not be special.
    const test = picomatch(glob, { dot: true, nonegate: true, noextglob: false });
    m = (name: string) => name === glob || test(name);
    if (matchers.size > 1_000) matchers.clear();
    matchers.set(glob, m);
  }
  return m;
}

/**
 * The one glob dialect over tool names (picomatch: `*`, `?`, `{a,b}`, `[abc]`; an exact name always
 * matches itself): the policy's `match` and MCP's `allow_tools`/`deny_tools` both use it.
 */
export function matchesToolName(name: string, glob: string): boolean {
  return matcherFor(glob)(name);
}

/** The first matching rule, or null when none matches (the tool is allowed). */
export function matchingRule(policy: ToolPolicy, toolName: string): ToolPolicyRule | null {
  for (const rule of policy) if (matcherFor(rule.match)(toolName)) return rule;
  return null;
}

export function policyAction(policy: ToolPolicy, toolName: string): ToolPolicyAction {
  return matchingRule(policy, toolName)?.action ?? "allow";
}

/** Whether a tool is offered to a run at all: tools the policy denies are left out. */
export function offeredByPolicy(policy: ToolPolicy, toolName: string): boolean {
  return policyAction(policy, toolName) !== "deny";
}

/** The policy as a `beforeToolCall`: deny blocks with the rule that decided, require_approval pauses the run. */
export function toolPolicyExtension(): Extension {
  return {
    name: "tool_policy",
    beforeToolCall(call, ctx) {
      const rule = matchingRule(toolPolicyOf(ctx.config), call.name);
      if (!rule || rule.action === "allow") return;
      if (rule.action === "deny")
        return {
          action: "block",
          code: "denied_by_policy",
          reason: `The workspace's tool policy does not allow '${call.name}' (rule match "${rule.match}": deny). Do not retry it; find another way or tell the user.`,
        };
      return { action: "require_approval", reason: `tool policy rule match "${rule.match}": require_approval` };
    },
  };
}
