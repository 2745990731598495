/**
 * Agents as the toolchain sees them: a Gitea user with roles and an optional model of its own.
 * Only the shape and the input schemas live here; storage is `agent-store.ts`.
 */
import { z } from "zod";
import { ModelEntrySchema, SecretNameSchema, type ModelEntry } from "../../storage/config/schema.ts";

export const AGENT_ROLES = ["reviewer", "developer", "infra", "supervisor"] as const;
export type AgentRole = (typeof AGENT_ROLES)[number];

export interface Agent {
  id: string;
  giteaUsername: string;
  roles: AgentRole[];
  model: ModelEntry | null;
  giteaTokenSecret: string | null;
  /** Skills pinned to every run of this agent (docs/skills-and-plugins.md, "Skills in a run"). */
  skills?: string[];
  enabled: boolean;
  createdAt: number;
  updatedAt: number;
}

export const AgentIdSchema = z.string().regex(/^[a-z0-9][a-z0-9_.-]{0,63}$/, "must be 1-64 lower-case letters, digits, '.', '_' or '-'");
/** Gitea's own rule for user names (alphanumerics, '-', '_', '.'; no leading/trailing punctuation). */
export const GiteaUsernameSchema = z
  .string()
  .min(1)
  .max(40)
  .regex(/^[A-Za-z0-9](?:[A-Za-z0-9_.-]*[A-Za-z0-9])?$/, "must be a Gitea user name");

/** Skill names pinned to an agent's runs (checked against the catalog when a run opens). */
export const SkillNamesSchema = z
  .array(
    z
      .string()
      .regex(/^[a-z0-9]+(-[a-z0-9]+)*$/, "must be a skill name")
      .max(64),
  )
  .max(8);

export const CreateAgentSchema = z.strictObject({
  id: AgentIdSchema,
  gitea_username: GiteaUsernameSchema,
  roles: z.array(z.enum(AGENT_ROLES)).min(1).max(4),
  model: ModelEntrySchema.nullish(),
  gitea_token_secret: SecretNameSchema.nullish(),
  skills: SkillNamesSchema.optional(),
  enabled: z.boolean().default(true),
});
export type CreateAgentInput = z.infer<typeof CreateAgentSchema>;

export const PatchAgentSchema = z.strictObject({
  gitea_username: GiteaUsernameSchema.optional(),
  roles: z.array(z.enum(AGENT_ROLES)).min(1).max(4).optional(),
  model: ModelEntrySchema.nullable().optional(),
  gitea_token_secret: SecretNameSchema.nullable().optional(),
  skills: SkillNamesSchema.optional(),
  enabled: z.boolean().optional(),
});
export type PatchAgentInput = z.infer<typeof PatchAgentSchema>;

/** The HTTP shape of an agent (snake_case). */
export function agentView(a: Agent) {
  return {
    id: a.id,
    gitea_username: a.giteaUsername,
    roles: a.roles,
    model: a.model,
    gitea_token_secret: a.giteaTokenSecret,
    skills: a.skills ?? [],
    enabled: a.enabled,
    created_at: a.createdAt,
    updated_at: a.updatedAt,
  };
}
