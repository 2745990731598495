/**
 * Starting and reading team runs (docs/delegation.md, "Teams"), for the `/api/teams` routes. A team run
 * is a session of its own (`team_…`, metadata `team`, `team_mode`): in `delegate` mode its run is the
 * coordinator's agent run with `delegate`; in `pipeline` and `discussion` mode the `team` run driver
 * (team-run.ts) runs it. Its progress is its log: one `team:turn` event per finished turn.
 */
import type { Env } from "../../storage/env.ts";
import { loadConfig } from "../../storage/config/store.ts";
import { notFound } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";
import { SessionClient, type RunResult, type SubmitRunInput } from "../../runtime/index.ts";
import { getAgent } from "../tasks/agent-store.ts";
import { teamsOf, type Team } from "./teams.ts";
import { TEAM_DRIVER, type TeamRunData } from "./team-run.ts";
import { coordinatorInstructions } from "./team-prompts.ts";
import { sentByData } from "../../kernel/sent-by.ts";

export interface TeamRunView {
  team: string;
  mode: Team["mode"];
  session_id: string;
  run_id: string;
  status: RunResult["status"];
  output_text: string;
  finish_reason: string;
  /** Finished turns in order (`team:turn` events of the team session). */
  turns: Record<string, unknown>[];
  error?: { code: string; message: string };
}

/** The workspace's team `name` (404 when it has none of that name). */
export async function findTeam(env: Env, workspaceId: string, name: string): Promise<{ team: Team; teams: Team[] }> {
  const teams = teamsOf(await loadConfig(env, workspaceId));
  const team = teams.find((t) => t.name === name);
  if (!team) throw notFound(`Team '${name}'`);
  return { team, teams };
}

/** Starts a run of team `name` with `message` in a new session; answers at once (the run goes on in its session). */
export async function startTeamRun(
  env: Env,
  workspaceId: string,
  name: string,
  message: string,
  /** Who sent it (kernel/sent-by.ts): the member turns and a coordinator's children work on their behalf. */
  sentBy: string | null = null,
): Promise<TeamRunView> {
  const { team, teams } = await findTeam(env, workspaceId, name);
  const { client } = await SessionClient.create(env, {
    workspaceId,
    id: newId("team"),
    title: `Team ${team.name}: ${message.replace(/\s+/g, " ").slice(0, 50)}`,
    metadata: { team: team.name, team_mode: team.mode },
  });
  const submitted = await client.submit(await teamSubmission(env, workspaceId, team, teams, message, sentBy));
  return teamRunView(env, workspaceId, name, client.id, submitted.run_id);
}

async function teamSubmission(
  env: Env,
  workspaceId: string,
  team: Team,
  teams: Team[],
  message: string,
  sentBy: string | null,
): Promise<SubmitRunInput> {
  const sent = sentBy ? sentByData(sentBy) : {};
  const base = { workspace_id: workspaceId, content: message, client_id: "team" };
  if (team.mode !== "delegate") {
    const data: TeamRunData = { team, teams };
    return { ...base, driver: TEAM_DRIVER, tool_data: { ...data, ...sent } };
  }
  // The coordinator's own run: its model and skills, its instructions, `delegate` in its tool set.
  const coordinator = await getAgent(env, workspaceId, team.coordinator);
  return {
    ...base,
    tool_data: sent,
    system_prompt_extra: coordinatorInstructions(team),
    ...(coordinator?.model ? { model_override: coordinator.model } : {}),
    ...(coordinator?.skills && coordinator.skills.length > 0 ? { pinned_skills: coordinator.skills } : {}),
  };
}

/** Where a team run stands: its run's status and answer, and the turns finished so far. */
export async function teamRunView(env: Env, workspaceId: string, name: string, sessionId: string, runId?: string): Promise<TeamRunView> {
  const client = SessionClient.of(env, sessionId);
  const session = await client.view(workspaceId);
  if (session.metadata.team !== name) throw notFound(`Team run '${sessionId}'`);
  const runs = await client.listRuns(workspaceId, 50);
  const run = runId !== undefined ? runs.find((r) => r.id === runId) : runs[0];
  if (!run) throw notFound(`Team run '${sessionId}'`);
  const events = await client.events(workspaceId, 0, 10_000, false);
  const turns = events
    .filter((e) => e.type === "custom" && e.kind === `${TEAM_DRIVER}:turn`)
    .map((e) => (e as { data: Record<string, unknown> }).data);
  return {
    team: name,
    mode: session.metadata.team_mode as Team["mode"],
    session_id: sessionId,
    run_id: run.id,
    status: run.status,
    output_text: run.result.output_text,
    finish_reason: run.result.finish_reason,
    turns,
    ...(run.result.error ? { error: run.result.error } : {}),
  };
}
