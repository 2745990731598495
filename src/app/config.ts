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

export const CONFIG_SECTIONS: readonly ConfigSection[] = [
  toolchainConfigSection,
  learningConfigSection,
  evaluationConfigSection,
  mcpConfigSection,
];

export const WorkspaceConfigSchema = composeConfigSchema(CONFIG_SECTIONS);

/** A configuration as a client writes it (defaults not yet applied). */
export type WorkspaceConfigInput = z.input<typeof WorkspaceConfigSchema>;
