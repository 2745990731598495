/**
 * Who gets a scenario: reviewers for review requests and updates, the PR author's agent for review
 * results, review comments, CI failures and merges, the assignee's agent for assigned issues, infra for
 * deploy failures, the mentioned agent for mentions
 * (docs/toolchain.md, "Scenarios, action types and `must_haves`").
 * A workspace may name the agents for an action type explicitly (`toolchain.routing`).
 * An agent never gets a task for its own action, so Beaver's agents cannot feed each other loops. Pure:
 * agents and config in, agents out.
 */
import type { Agent } from "../tasks/agents.ts";
import type { ToolchainConfig } from "./config.ts";
import type { Scenario } from "./scenarios.ts";

export type RouteResult = { agents: Agent[]; ignored: null } | { agents: []; ignored: string };

export interface RoutingInput {
  agents: Agent[];
  routing: ToolchainConfig["routing"];
  /** Gitea login of whoever caused the event. */
  actor: string | null;
}

const key = (name: string | null | undefined) => (name ?? "").toLowerCase();

function byUsername(agents: Agent[]): Map<string, Agent> {
  return new Map(agents.map((a) => [key(a.giteaUsername), a]));
}

function withRole(agents: Agent[], role: Agent["roles"][number]): Agent[] {
  return agents.filter((a) => a.roles.includes(role));
}

function namedAgents(agents: Agent[], names: string[]): Agent[] {
  const map = byUsername(agents);
  const out: Agent[] = [];
  for (const n of names) {
    const a = map.get(key(n));
    if (a && !out.includes(a)) out.push(a);
  }
  return out;
}

/** Scenarios caused by a check (CI, deploy) are not anyone's "own action", even if they pushed. */
const CHECK_KINDS = new Set<Scenario["kind"]>(["ci_failure", "deploy_failure"]);

function defaultAgents(s: Scenario, enabled: Agent[]): { agents: Agent[]; none: string } {
  switch (s.kind) {
    case "review_request":
    case "review_updated": {
      const author = key(s.pr.author);
      const candidates = enabled.filter((a) => key(a.giteaUsername) !== author);
      if (s.kind === "review_request" && s.trigger === "review_requested") {
        return {
          agents: namedAgents(candidates, s.requested ? [s.requested] : []),
          none: `requested reviewer '${s.requested ?? "?"}' is not an enabled agent`,
        };
      }
      const requested = namedAgents(candidates, s.pr.requestedReviewers);
      return { agents: requested.length ? requested : withRole(candidates, "reviewer"), none: "no enabled agent with the reviewer role" };
    }
    case "review_result":
    case "review_comment":
    case "review_merged":
      return {
        agents: namedAgents(enabled, s.pr.author ? [s.pr.author] : []),
        none: `PR author '${s.pr.author ?? "?"}' is not an enabled agent`,
      };
    case "ci_failure":
      if (!s.pr) return { agents: [], none: `no pull request found for commit ${s.sha.slice(0, 12)}` };
      return {
        agents: namedAgents(enabled, s.pr.author ? [s.pr.author] : []),
        none: `PR author '${s.pr.author ?? "?"}' is not an enabled agent`,
      };
    case "issue_assigned":
      return { agents: namedAgents(enabled, s.assignees), none: `no assignee (${s.assignees.join(", ")}) is an enabled agent` };
    case "deploy_failure":
      return { agents: withRole(enabled, "infra"), none: "no enabled agent with the infra role" };
    case "mention":
      return { agents: namedAgents(enabled, s.mentioned), none: `no mentioned user (${s.mentioned.join(", ")}) is an enabled agent` };
  }
}

/** The agents a scenario goes to, or why it goes to nobody. */
export function routeScenario(s: Scenario, input: RoutingInput): RouteResult {
  const enabled = input.agents.filter((a) => a.enabled);
  // A scenario's kind is its action type.
  const override = input.routing[s.kind];
  let chosen: Agent[];
  let none: string;
  if (override) {
    chosen = override.map((id) => enabled.find((a) => a.id === id)).filter((a): a is Agent => Boolean(a));
    none = `routing for '${s.kind}' names no enabled agent (${override.join(", ")})`;
  } else {
    ({ agents: chosen, none } = defaultAgents(s, enabled));
  }
  if (!chosen.length) return { agents: [], ignored: none };
  if (CHECK_KINDS.has(s.kind)) return { agents: chosen, ignored: null };
  const actor = key(input.actor);
  const others = chosen.filter((a) => key(a.giteaUsername) !== actor);
  if (!others.length) return { agents: [], ignored: `own action of agent '${chosen[0]!.id}' (no task for itself)` };
  return { agents: others, ignored: null };
}

/** The agent that takes system failures: `routing.system_failure`, else the first supervisor. */
export function supervisorOf(agents: Agent[], routing: ToolchainConfig["routing"]): Agent | null {
  return pickRoleAgent(agents, routing.system_failure, "supervisor");
}

/** The agent that takes infrastructure failures: `routing.infrastructure_failure`, else the first infra agent. */
export function infraAgentOf(agents: Agent[], routing: ToolchainConfig["routing"]): Agent | null {
  return pickRoleAgent(agents, routing.infrastructure_failure, "infra");
}

function pickRoleAgent(agents: Agent[], ids: string[] | undefined, role: Agent["roles"][number]): Agent | null {
  const enabled = agents.filter((a) => a.enabled);
  if (ids) return ids.map((id) => enabled.find((a) => a.id === id)).find((a): a is Agent => Boolean(a)) ?? null;
  return withRole(enabled, role).sort((a, b) => a.id.localeCompare(b.id))[0] ?? null;
}
