/**
 * The pure decisions of delegation and teams (docs/delegation.md): the `delegate` plan's rules in
 * order, derived child ids, team cycles and unknown members, and reading a coordinator's verdict.
 */
import { describe, expect, it } from "vitest";
import { childSessionId, planDelegation, treeUsage } from "../../../src/domains/team/delegation.ts";
import { teamCycle, unknownMembers, type Team } from "../../../src/domains/team/teams.ts";
import { pipelineMessage, readVerdict } from "../../../src/domains/team/team-prompts.ts";

const scope = { depth: 0, maxDepth: 2, maxParallel: 3, parentTools: ["echo", "delegate", "web_fetch"], agents: new Set(["rev"]) };

describe("planDelegation", () => {
  it("gives each child the parent's tools, or the subset it asked for", () => {
    const plan = planDelegation({ tasks: [{ task: "a" }, { task: "b", tools: ["echo"], agent: "rev" }] }, scope);
    expect(plan).toEqual({
      ok: true,
      children: [
        { index: 0, task: { task: "a" }, tools: ["echo", "delegate", "web_fetch"] },
        { index: 1, task: { task: "b", tools: ["echo"], agent: "rev" }, tools: ["echo"] },
      ],
    });
  });

  it("drops `delegate` from a child at the depth limit and refuses a call at the limit", () => {
    const plan = planDelegation({ tasks: [{ task: "a" }] }, { ...scope, depth: 1 });
    expect(plan.ok && plan.children[0]!.tools).toEqual(["echo", "web_fetch"]);
    expect(planDelegation({ tasks: [{ task: "a" }] }, { ...scope, depth: 2 })).toMatchObject({ ok: false, code: "delegation_depth" });
  });

  it("refuses too many tasks, an unknown agent and tools the parent lacks", () => {
    const four = { tasks: [1, 2, 3, 4].map((n) => ({ task: `t${n}` })) };
    expect(planDelegation(four, scope)).toMatchObject({ ok: false, code: "too_many_tasks" });
    expect(planDelegation({ tasks: [{ task: "x", agent: "ghost" }] }, scope)).toMatchObject({
      ok: false,
      code: "unknown_agent",
      message: expect.stringContaining("Agents: rev"),
    });
    expect(planDelegation({ tasks: [{ task: "x", tools: ["bash"] }] }, scope)).toMatchObject({
      ok: false,
      code: "tools_not_allowed",
      message: expect.stringContaining("'bash'"),
    });
  });

  it("derives the same child id from the same run, call and index, and another from any other", async () => {
    const id = await childSessionId("run_1", "call_1", 0);
    expect(id).toMatch(/^dlg_[0-9a-f]{32}$/);
    expect(await childSessionId("run_1", "call_1", 0)).toBe(id);
    expect(new Set([id, await childSessionId("run_1", "call_1", 1), await childSessionId("run_2", "call_1", 0)]).size).toBe(3);
  });

  it("adds the children's own and delegated usage", () => {
    const u = (n: number) => ({ input_tokens: n, output_tokens: n, total_tokens: 2 * n });
    const result = (usage: ReturnType<typeof u>, delegated?: ReturnType<typeof u>) =>
      ({ usage, ...(delegated ? { delegated_usage: delegated } : {}) }) as Parameters<typeof treeUsage>[0][number];
    expect(treeUsage([result(u(1)), result(u(2), u(3))])).toEqual(u(6));
  });
});

describe("teams", () => {
  const team = (name: string, members: string[]): Team => ({ name, coordinator: "c", members, mode: "pipeline" });

  it("finds a cycle of teams naming each other, and none in a tree", () => {
    expect(teamCycle([team("a", ["x", "b"]), team("b", ["c2"]), team("c2", ["a"])])).toEqual(["a", "b", "c2", "a"]);
    expect(teamCycle([team("a", ["a"])])).toEqual(["a", "a"]);
    expect(teamCycle([team("a", ["b", "x"]), team("b", ["x"])])).toBeNull();
  });

  it("names members that are neither an agent nor a team, and unknown coordinators", () => {
    expect(unknownMembers([team("a", ["x", "b", "ghost"]), team("b", ["x"])], new Set(["x", "c"]))).toEqual([
      { path: "teams.0.members.2", message: expect.stringContaining("unknown member 'ghost'") },
    ]);
    expect(unknownMembers([team("a", ["x"])], new Set(["x"]))[0]).toMatchObject({ path: "teams.0.coordinator" });
  });

  it("reads the coordinator's verdict and hands the previous step on", () => {
    expect(readVerdict("DONE\nWe agree.")).toEqual({ done: true, answer: "We agree." });
    expect(readVerdict("done: yes")).toEqual({ done: true, answer: "yes" });
    expect(readVerdict("CONTINUE, nobody is DONE")).toEqual({ done: false });
    expect(pipelineMessage("req", null)).toBe("req");
    expect(pipelineMessage("req", { member: "a", text: "out" })).toContain("Output of the previous step (a)\nout");
  });
});
