/**
 * The `teams` section of the workspace configuration (docs/delegation.md, "Teams"): named teams of
 * agents with a coordinator and a mode. The schema checks the shape and that no team contains itself
 * (members may name other teams); `check` adds what needs the agent registry — every coordinator and
 * every member that is not a team must be an enabled agent. Both answer 400 naming the team and member.
 */
import { z } from "zod";
import type { ConfigSection, WorkspaceConfig } from "../../storage/config/schema.ts";
import { AgentIdSchema } from "../tasks/agents.ts";
import { listAgents } from "../tasks/agent-store.ts";

export const TEAM_MODES = ["delegate", "pipeline", "discussion"] as const;

export const TeamNameSchema = z.string().regex(/^[a-z0-9][a-z0-9_-]{0,63}$/, "must be 1-64 lower-case letters, digits, '_' or '-'");

export const TeamSchema = z.strictObject({
  name: TeamNameSchema,
  /** An agent: assigns work (`delegate`), decides when a discussion is done. */
  coordinator: AgentIdSchema,
  /** Agents, or other teams' names (a member team runs as one member's turn). */
  members: z.array(z.string().min(1).max(64)).min(1).max(16),
  mode: z.enum(TEAM_MODES),
  /** Rounds of a discussion at most (default 3). */
  max_rounds: z.number().int().min(1).max(20).optional(),
});
export type Team = z.infer<typeof TeamSchema>;

export const TeamsSchema = z
  .array(TeamSchema)
  .max(32)
  .superRefine((teams, ctx) => {
    const seen = new Set<string>();
    for (const [i, team] of teams.entries()) {
      if (seen.has(team.name)) ctx.addIssue({ code: "custom", path: [i, "name"], message: `team '${team.name}' is defined twice` });
      seen.add(team.name);
    }
    const cycle = teamCycle(teams);
    if (cycle) {
      const at = teams.findIndex((t) => t.name === cycle[0]);
      ctx.addIssue({ code: "custom", path: [at, "members"], message: `teams form a cycle: ${cycle.join(" → ")}` });
    }
  });

/** A cycle among teams that name each other as members (`a → b → a`), or null. */
export function teamCycle(teams: readonly Team[]): string[] | null {
  const byName = new Map(teams.map((t) => [t.name, t]));
  const state = new Map<string, "visiting" | "done">();
  const walk = (name: string, path: string[]): string[] | null => {
    if (state.get(name) === "visiting") return [...path.slice(path.indexOf(name)), name];
    if (state.get(name) === "done") return null;
    state.set(name, "visiting");
    for (const member of byName.get(name)?.members ?? []) {
      if (!byName.has(member)) continue;
      const found = walk(member, [...path, name]);
      if (found) return found;
    }
    state.set(name, "done");
    return null;
  };
  for (const team of teams) {
    const found = walk(team.name, []);
    if (found) return found;
  }
  return null;
}

/** Members and coordinators that are neither an enabled agent nor (for members) a team. */
export function unknownMembers(teams: readonly Team[], agents: ReadonlySet<string>): { path: string; message: string }[] {
  const names = new Set(teams.map((t) => t.name));
  const out: { path: string; message: string }[] = [];
  for (const [i, team] of teams.entries()) {
    if (!agents.has(team.coordinator))
      out.push({
        path: `teams.${i}.coordinator`,
        message: `team '${team.name}': unknown coordinator '${team.coordinator}' (not an enabled agent)`,
      });
    for (const [j, member] of team.members.entries())
      if (!agents.has(member) && !names.has(member))
        out.push({
          path: `teams.${i}.members.${j}`,
          message: `team '${team.name}': unknown member '${member}' (neither an enabled agent nor a team)`,
        });
  }
  return out;
}

export const teamsConfigSection: ConfigSection = {
  key: "teams",
  schema: TeamsSchema,
  async check(value, { env, workspaceId }) {
    const agents = await listAgents(env, workspaceId);
    return unknownMembers(value as Team[], new Set(agents.filter((a) => a.enabled).map((a) => a.id)));
  },
};

/** The workspace's teams (validated on write; an unreadable section reads as none). */
export function teamsOf(config: WorkspaceConfig): Team[] {
  const parsed = TeamsSchema.safeParse((config as Record<string, unknown>).teams ?? []);
  return parsed.success ? parsed.data : [];
}
