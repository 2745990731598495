/**
 * `/api/agents`: the workspace's toolchain agents (Gitea user, roles, model override, enabled). The
 * model override's size and the number of agents are the operator's limits (docs/limits.md); its
 * `base_url` must pass the egress policy (storage/egress.ts), else 422 `egress_refused`.
 */
import { createRoute, z } from "@hono/zod-openapi";
import { newRouter, jsonBody, jsonResponse, errorResponses } from "../router.ts";
import { requireScope } from "../auth.ts";
import { notFound } from "../../../kernel/errors.ts";
import { assertUrlFields, egressPolicy } from "../../../storage/egress.ts";
import { AGENT_ROLES, AgentIdSchema, CreateAgentSchema, PatchAgentSchema, agentView } from "../../../domains/tasks/agents.ts";
import { createAgent, getAgent, listAgents, patchAgent } from "../../../domains/tasks/agent-store.ts";
import { assertFieldSize } from "../../../storage/limits.ts";
import { enforceQuota } from "../../../storage/quotas.ts";

const AgentDoc = z
  .object({
    id: z.string(),
    gitea_username: z.string(),
    roles: z.array(z.enum(AGENT_ROLES)),
    model: z.record(z.string(), z.unknown()).nullable(),
    gitea_token_secret: z.string().nullable(),
    skills: z.array(z.string()).describe("Skills pinned to every run of this agent"),
    enabled: z.boolean(),
    created_at: z.number(),
    updated_at: z.number(),
  })
  .openapi("Agent");
const IdParam = z.object({ id: AgentIdSchema });

const create = createRoute({
  method: "post",
  path: "/",
  tags: ["agents"],
  summary: "Register an agent (Gitea user, roles, optional model override)",
  middleware: [requireScope("admin")] as const,
  request: { body: jsonBody(CreateAgentSchema) },
  responses: { 201: jsonResponse(AgentDoc, "Created"), ...errorResponses(409, 413, 415, 422, 429) },
});

const list = createRoute({
  method: "get",
  path: "/",
  tags: ["agents"],
  summary: "List agents",
  middleware: [requireScope("read")] as const,
  responses: { 200: jsonResponse(z.object({ agents: z.array(AgentDoc) }), "Agents"), ...errorResponses() },
});

const get = createRoute({
  method: "get",
  path: "/{id}",
  tags: ["agents"],
  summary: "Get an agent",
  middleware: [requireScope("read")] as const,
  request: { params: IdParam },
  responses: { 200: jsonResponse(AgentDoc, "Agent"), ...errorResponses(404) },
});

const patch = createRoute({
  method: "patch",
  path: "/{id}",
  tags: ["agents"],
  summary: "Change an agent (roles, Gitea user, model override, enabled)",
  middleware: [requireScope("admin")] as const,
  request: { params: IdParam, body: jsonBody(PatchAgentSchema) },
  responses: { 200: jsonResponse(AgentDoc, "Updated"), ...errorResponses(404, 409, 413, 415, 422) },
});

export const agentRoutes = newRouter()
  .openapi(create, async (c) => {
    const body = c.req.valid("json");
    assertFieldSize(c.env, "model", body.model, "agent_model_bytes");
    await enforceQuota(c.env, c.get("principal").workspaceId, "agents");
    assertUrlFields(body, egressPolicy(c.env, new URL(c.req.url).host));
    const agent = await createAgent(c.env, c.get("principal").workspaceId, body);
    return c.json(agentView(agent), 201);
  })
  .openapi(list, async (c) => c.json({ agents: (await listAgents(c.env, c.get("principal").workspaceId)).map(agentView) }, 200))
  .openapi(get, async (c) => {
    const { id } = c.req.valid("param");
    const agent = await getAgent(c.env, c.get("principal").workspaceId, id);
    if (!agent) throw notFound(`Agent '${id}'`);
    return c.json(agentView(agent), 200);
  })
  .openapi(patch, async (c) => {
    const body = c.req.valid("json");
    assertFieldSize(c.env, "model", body.model, "agent_model_bytes");
    assertUrlFields(body, egressPolicy(c.env, new URL(c.req.url).host));
    const agent = await patchAgent(c.env, c.get("principal").workspaceId, c.req.valid("param").id, body);
    return c.json(agentView(agent), 200);
  });
