/**
 * A team run (docs/delegation.md, "Teams"): the `team` run driver. A team run is a session of its own
 * whose run this driver executes instead of the agent loop; every member's turn is a child session
 * (runChild) under an id derived from the run and the turn, so when the session resumes the run after
 * a restart the driver replays from the start, collects turns that already ended and starts none twice.
 * Each finished turn is recorded as a `custom` event (`team:turn`) on the team session: its progress on
 * the session's stream. Each agent turn is recorded as started (`team:turn_started`) before its child
 * is submitted, so a team run that ends cancelled — also in an instance that resumed it after an
 * eviction — cancels the turns it started that have no result (`onRunCancelled`).
 * `delegate` mode is no driver at all: the coordinator's own run with `delegate`.
 */
import { AppError } from "../../kernel/errors.ts";
import type { RunDriver, RunDriverCancelContext, RunDriverContext, RunResult } from "../../runtime/index.ts";
import { listAgents } from "../tasks/agent-store.ts";
import type { Agent } from "../tasks/agents.ts";
import { cancelChild, runChild } from "./child-run.ts";
import { childSessionId, treeUsage } from "./delegation.ts";
import { TeamSchema, type Team } from "./teams.ts";
import {
  coordinatorInstructions,
  discussionInstructions,
  discussionMessage,
  pipelineInstructions,
  pipelineMessage,
  readVerdict,
  verdictInstructions,
  type Said,
} from "./team-prompts.ts";
import { sentByOf } from "../../kernel/sent-by.ts";

export const TEAM_DRIVER = "team";

/** Rounds of a discussion when the team names none. */
export const DEFAULT_MAX_ROUNDS = 3;

/** Characters of a turn's answer kept in its `team:turn` event (the whole answer is in the member's session). */
const TURN_EXCERPT_CHARS = 2_000;

/** What a team run carries in its `tool_data`: the team and the workspace's teams, frozen when it was started. */
export interface TeamRunData {
  team: Team;
  teams: Team[];
}

function dataOf(data: Readonly<Record<string, unknown>>): TeamRunData {
  const team = TeamSchema.safeParse(data.team);
  const teams = TeamSchema.array().safeParse(data.teams ?? []);
  if (!team.success || !teams.success) throw new AppError("bad_request", "This run names no team");
  return { team: team.data, teams: teams.data };
}

async function driveTeam(ctx: RunDriverContext) {
  const { team, teams } = dataOf(ctx.data);
  const agents = new Map((await listAgents(ctx.env, ctx.workspaceId)).filter((a) => a.enabled).map((a) => [a.id, a]));
  const turns = new Turns(ctx, agents, new Map(teams.map((t) => [t.name, t])));
  const out = await runTeam(turns, team, ctx.content, "");
  return { output_text: out.text, finish_reason: out.finishReason, usage: treeUsage(turns.results) };
}

/**
 * The team run ended cancelled: cancel every agent turn recorded as started and not as ended, by its
 * derived session id and idempotency key (docs/delegation.md, "Cancel"). A cancelled turn's own run
 * then tells its open `delegate` calls in turn.
 */
async function cancelOpenTurns(ctx: RunDriverCancelContext): Promise<void> {
  const ended = new Set(ctx.records.filter((r) => r.kind === "turn").map((r) => r.key));
  const open = ctx.records.filter((r) => r.kind === "turn_started" && !ended.has(r.key));
  await Promise.all(
    open.map(async (r) => {
      const child = await turnChild(ctx.runId, r.key);
      await cancelChild(ctx.env, ctx.workspaceId, child.sessionId, child.idempotencyKey);
    }),
  );
}

export const teamDriver: RunDriver = Object.assign(driveTeam, { onRunCancelled: cancelOpenTurns });

/** The child session and idempotency key of the team run's agent turn `key`. */
async function turnChild(runId: string, key: string): Promise<{ sessionId: string; idempotencyKey: string }> {
  return { sessionId: await childSessionId(runId, `team:${key}`, 0), idempotencyKey: `team:${runId}/${key}` };
}

interface TeamOutcome {
  text: string;
  finishReason: string;
}

async function runTeam(turns: Turns, team: Team, message: string, prefix: string): Promise<TeamOutcome> {
  switch (team.mode) {
    case "pipeline": {
      let previous: { member: string; text: string } | null = null;
      for (const [i, member] of team.members.entries()) {
        const text = await turns.take(member, `${prefix}p${i}`, pipelineMessage(message, previous), pipelineInstructions(team, i), {
          step: i,
        });
        previous = { member, text };
      }
      return { text: previous?.text ?? "", finishReason: "stop" };
    }
    case "discussion": {
      const maxRounds = team.max_rounds ?? DEFAULT_MAX_ROUNDS;
      const said: Said[] = [];
      let last = "";
      for (let round = 1; round <= maxRounds; round++) {
        for (const [j, member] of team.members.entries()) {
          const text = await turns.take(
            member,
            `${prefix}r${round}.m${j}`,
            discussionMessage(message, said),
            discussionInstructions(team, member, round, maxRounds),
            { round },
          );
          said.push({ member, round, text });
        }
        last = await turns.take(
          team.coordinator,
          `${prefix}r${round}.c`,
          discussionMessage(message, said),
          verdictInstructions(team, round, maxRounds),
          {
            round,
            verdict: true,
          },
        );
        const verdict = readVerdict(last);
        if (verdict.done) return { text: verdict.answer, finishReason: "done" };
      }
      return { text: last, finishReason: "max_rounds" };
    }
    case "delegate":
      // A member team in delegate mode: its coordinator's run, with `delegate` (team-routes.ts starts a top-level one directly).
      return {
        text: await turns.take(team.coordinator, `${prefix}coord`, message, coordinatorInstructions(team), { coordinator: true }),
        finishReason: "stop",
      };
  }
}

/** Member turns of one team run: each an agent's child session, or a member team run inline. */
class Turns {
  readonly results: RunResult[] = [];

  constructor(
    readonly ctx: RunDriverContext,
    readonly agents: ReadonlyMap<string, Agent>,
    readonly teams: ReadonlyMap<string, Team>,
  ) {}

  /** The member's answer to `content`; a failed or cancelled turn fails the team run. */
  async take(member: string, key: string, content: string, instructions: string, facts: Record<string, unknown>): Promise<string> {
    const { ctx } = this;
    const subTeam = this.teams.get(member);
    if (subTeam) {
      const out = await runTeam(this, subTeam, content, `${key}/`);
      ctx.record("turn", key, { member, team: subTeam.name, ...facts, status: "completed", answer: excerpt(out.text) });
      return out.text;
    }
    const agent = this.agents.get(member);
    if (!agent) throw new AppError("unprocessable", `Team member '${member}' is no longer an enabled agent`);
    const { sessionId, idempotencyKey } = await turnChild(ctx.runId, key);
    // Before the child exists: whichever instance ends this run cancelled knows the turn to cancel.
    ctx.record("turn_started", key, { member, ...facts, session_id: sessionId });
    const result = await runChild(
      {
        env: ctx.env,
        workspaceId: ctx.workspaceId,
        sessionId,
        title: `${member}: ${key}`,
        metadata: { parent_session_id: ctx.sessionId, parent_run_id: ctx.runId, team_turn: key, agent: member, delegation_depth: 1 },
        content,
        systemPrompt: instructions,
        idempotencyKey,
        mark: { depth: 1, parent_session_id: ctx.sessionId, parent_run_id: ctx.runId },
        model: agent.model,
        ...(agent.skills ? { skills: agent.skills } : {}),
        channel: { channel: "team", device_id: ctx.sessionId, external_id: `${ctx.runId}/${key}` },
        sentBy: sentByOf(ctx.data),
      },
      ctx.signal,
    );
    this.results.push(result);
    ctx.record("turn", key, {
      member,
      ...facts,
      session_id: sessionId,
      run_id: result.run_id,
      status: result.status,
      answer: excerpt(result.output_text),
    });
    if (result.status !== "completed")
      throw new AppError(
        "unprocessable",
        `Team member '${member}' (turn ${key}) ended ${result.status}${result.error ? `: ${result.error.message}` : ""}`,
      );
    return result.output_text;
  }
}

const excerpt = (text: string) => (text.length > TURN_EXCERPT_CHARS ? `${text.slice(0, TURN_EXCERPT_CHARS)}…` : text);
