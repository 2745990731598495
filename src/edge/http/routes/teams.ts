/**
 * `/api/teams`: the workspace's teams (config `teams`) and their runs (docs/delegation.md, "Teams").
 * `POST /api/teams/:name/runs {message}` starts a run in a session of its own and answers 202 at once;
 * `GET /api/teams/:name/runs/:id` reads where it stands (status, answer, finished turns), and the
 * session's own stream (`GET /api/sessions/:id/stream`) carries its progress live.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { TEAM_MODES, TeamNameSchema, TeamSchema, teamsOf } from "../../../domains/team/teams.ts";
import { startTeamRun, teamRunView } from "../../../domains/team/team-service.ts";
import { SESSION_ID_PATTERN, assertMessageSize } from "../../../runtime/index.ts";
import { limitsOf } from "../../../storage/limits.ts";

const TeamDoc = TeamSchema.openapi("Team");

const TeamRunDoc = z
  .object({
    team: z.string(),
    mode: z.enum(TEAM_MODES),
    session_id: z.string().describe("The team run's session: its stream shows the run's progress"),
    run_id: z.string(),
    status: z.enum(["queued", "running", "completed", "failed", "cancelled"]),
    output_text: z.string(),
    finish_reason: z.string(),
    turns: z.array(z.record(z.string(), z.unknown())).describe("Finished member turns in order (member, session_id, status, answer…)"),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  })
  .openapi("TeamRun");

const NameParam = z.object({ name: TeamNameSchema });

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["teams"],
  summary: "List the workspace's teams (config `teams`)",
  middleware: [requireScope("read")] as const,
  responses: { 200: jsonResponse(z.object({ teams: z.array(TeamDoc) }), "Teams"), ...errorResponses() },
});

const start = createRoute({
  method: "post",
  path: "/{name}/runs",
  tags: ["teams"],
  summary: "Start a team run with a message; answers at once, the run goes on in its own session",
  middleware: [requireScope("member")] as const,
  request: { params: NameParam, body: jsonBody(z.strictObject({ message: z.string().min(1) })) },
  responses: { 202: jsonResponse(TeamRunDoc, "Started"), ...errorResponses(404, 413, 415) },
});

const get = createRoute({
  method: "get",
  path: "/{name}/runs/{id}",
  tags: ["teams"],
  summary: "Where a team run stands: status, answer and the turns finished so far",
  middleware: [requireScope("read")] as const,
  request: { params: NameParam.extend({ id: z.string().regex(SESSION_ID_PATTERN).describe("The team run's session id") }) },
  responses: { 200: jsonResponse(TeamRunDoc, "Team run"), ...errorResponses(404) },
});

export const teamRoutes = newRouter()
  .openapi(list, async (c) => c.json({ teams: teamsOf(await loadConfig(c.env, c.get("principal").workspaceId)) }, 200))
  .openapi(start, async (c) => {
    const { message } = c.req.valid("json");
    assertMessageSize(message, limitsOf(c.env).message_bytes);
    const p = c.get("principal");
    return c.json(await startTeamRun(c.env, p.workspaceId, c.req.valid("param").name, message, p.tokenId), 202);
  })
  .openapi(get, async (c) => {
    const { name, id } = c.req.valid("param");
    return c.json(await teamRunView(c.env, c.get("principal").workspaceId, name, id), 200);
  });
