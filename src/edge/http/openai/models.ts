/**
 * What the `model` of an OpenAI request names (docs/openai-api.md, "Models"): `beaver` is the
 * workspace's own agent — its configured `model`, then `fallback_model`, with Beaver's tools and
 * skills — and the configured main model's id is accepted as another name for it, so a client set up
 * with that name works unchanged. `agent:<id>` is an enabled toolchain agent: its own model (or the
 * workspace's) and its pinned skills, with the chat tools (not its Gitea task tools). Anything else is
 * 404, so a client never silently talks to a model it did not ask for.
 */
import type { Env } from "../../../storage/env.ts";
import type { ModelEntry } from "../../../storage/config/schema.ts";
import { loadConfig } from "../../../storage/config/store.ts";
import { getAgent, listAgents } from "../../../domains/tasks/agent-store.ts";
import { AppError } from "../../../kernel/errors.ts";

export const BEAVER_MODEL = "beaver";
const AGENT_PREFIX = "agent:";

export interface ModelTarget {
  id: string;
  /** Unix seconds, as OpenAI's model objects carry it (0 when Beaver has no date for it). */
  created: number;
  owned_by: string;
  /** What the name runs, for people reading `/v1/models`. */
  description: string;
  model_override?: ModelEntry;
  pinned_skills?: string[];
}

function beaverTarget(id: string, main: ModelEntry | undefined): ModelTarget {
  const answers = main
    ? `${main.provider} model '${main.id}'`
    : "Workers AI when bound, else no model (configure one with PUT /api/config)";
  return { id, created: 0, owned_by: "beaver", description: `The workspace's agent with Beaver's tools; answers with its ${answers}` };
}

/** Every name `/v1/chat/completions` and `/v1/responses` accept in this workspace, `beaver` first. */
export async function listModelTargets(env: Env, workspaceId: string): Promise<ModelTarget[]> {
  const [config, agents] = await Promise.all([loadConfig(env, workspaceId), listAgents(env, workspaceId)]);
  const out = [beaverTarget(BEAVER_MODEL, config.model)];
  if (config.model && config.model.id !== BEAVER_MODEL) out.push(beaverTarget(config.model.id, config.model));
  for (const agent of agents.filter((a) => a.enabled)) {
    out.push({
      id: `${AGENT_PREFIX}${agent.id}`,
      created: Math.floor(agent.createdAt / 1000),
      owned_by: "beaver",
      description: `Toolchain agent '${agent.id}' (${agent.roles.join(", ")}) with the chat tools`,
      ...(agent.model ? { model_override: agent.model } : {}),
      ...(agent.skills && agent.skills.length > 0 ? { pinned_skills: agent.skills } : {}),
    });
  }
  return out;
}

/** The target a request's `model` names; 404 (OpenAI's `model_not_found` situation) for any other name. */
export async function resolveModel(env: Env, workspaceId: string, name: string): Promise<ModelTarget> {
  if (name.startsWith(AGENT_PREFIX)) {
    const agent = await getAgent(env, workspaceId, name.slice(AGENT_PREFIX.length));
    if (agent?.enabled) {
      return {
        id: name,
        created: Math.floor(agent.createdAt / 1000),
        owned_by: "beaver",
        description: `Toolchain agent '${agent.id}'`,
        ...(agent.model ? { model_override: agent.model } : {}),
        ...(agent.skills && agent.skills.length > 0 ? { pinned_skills: agent.skills } : {}),
      };
    }
  } else {
    if (name === BEAVER_MODEL) return beaverTarget(name, undefined);
    const config = await loadConfig(env, workspaceId);
    if (config.model?.id === name) return beaverTarget(name, config.model);
  }
  throw new AppError("not_found", `The model '${name}' does not exist in this workspace; GET /v1/models lists the names it accepts`, {
    details: { param: "model" },
  });
}
