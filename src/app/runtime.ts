/**
 * Composition root, runtime: the tool sets domains register with the agent runtime, the model
 * factory it builds models with, and the skill provider that chooses each run's skills. The runtime
 * sees only `RuntimeServices` (docs/layering.md).
 */
import { DEFAULT_TOOLSET, type RuntimeServices, type ToolsetFactory } from "../runtime/services.ts";
import { providerModel } from "../runtime/agent/providers.ts";
import { builtinTools } from "../runtime/tools/builtins/index.ts";
import { toolchainTools } from "../domains/toolchain/tools.ts";
import { mailTools } from "../domains/mail/tools.ts";
import { skillProvider, type SkillProviderOptions } from "../domains/skills/provider.ts";
import { skillViewTool } from "../domains/skills/skill-view.ts";

/** Tool sets by name: chat sessions get `default`; task runs ask for their domain's set. Every set can read skills. */
export function registeredToolsets(): Map<string, ToolsetFactory> {
  return new Map<string, ToolsetFactory>([
    [DEFAULT_TOOLSET, () => [...builtinTools(), skillViewTool]],
    ["toolchain", () => [...builtinTools(), skillViewTool, ...toolchainTools()]],
    ["mail", () => [...builtinTools(), skillViewTool, ...mailTools()]],
  ]);
}

export function runtimeServices(options: { skills?: SkillProviderOptions } = {}): RuntimeServices {
  return { toolsets: registeredToolsets(), modelFactory: providerModel, skills: skillProvider(options.skills) };
}
