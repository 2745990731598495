/**
 * Composition root, configuration: the sections domains add to the workspace configuration, and the
 * one strict schema a `PUT /api/config` is checked against (docs/layering.md).
 */
import type { z } from "zod";
import { composeConfigSchema, type ConfigSection } from "../storage/config/schema.ts";
import { toolchainConfigSection } from "../domains/toolchain/config.ts";
import { learningConfigSection } from "../domains/learning/config.ts";
import { mcpConfigSection } from "../domains/mcp/config.ts";
import { evaluationConfigSection } from "../domains/learning/evaluation/config.ts";
import { teamsConfigSection } from "../domains/team/teams.ts";

import { CHANNELS_KEY, ChannelsSchema, TOOL_POLICY_KEY, ToolPolicySchema } from "../runtime/index.ts";

/** `tool_policy`: the runtime's per-workspace tool rules (docs/approvals.md), read by the policy extension. */
const toolPolicySection: ConfigSection = { key: TOOL_POLICY_KEY, schema: ToolPolicySchema };

/** `channels`: outbound webhooks bound sessions post run results to (docs/channels.md). */
const channelsSection: ConfigSection = { key: CHANNELS_KEY, schema: ChannelsSchema };

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  toolchainConfigSection,
  learningConfigSection,
  evaluationConfigSection,
  mcpConfigSection,
  toolPolicySection,
  channelsSection,
  teamsConfigSection,
];

export const WorkspaceConfigSchema = composeConfigSchema(CONFIG_SECTIONS);

/** A configuration as a client writes it (defaults not yet applied). */
export type WorkspaceConfigInput = z.input<typeof WorkspaceConfigSchema>;
