/**
 * Composition root, runtime: the tool sets domains register with the agent runtime and the model
 * factory it builds models with. The runtime sees only `RuntimeServices` (docs/layering.md).
 */
import { DEFAULT_TOOLSET, type RuntimeServices, type ToolsetFactory } from "../runtime/services.ts";
import type { ToolSpec } from "../runtime/tools/spec.ts";
import { providerModel } from "../runtime/agent/providers.ts";
import { builtinTools } from "../runtime/tools/builtins/index.ts";
import { toolchainTools } from "../domains/toolchain/tools.ts";
import { mailTools } from "../domains/mail/tools.ts";

/**
 * Tool sets by name: chat sessions get `default`; task runs ask for their domain's set. Within a
 * domain's set its own tools are `always` offered, so per-run tool assembly (docs/agent-loop.md,
 * "Tool assembly") never leaves a toolchain run without its report and Gitea tools.
 */
export function registeredToolsets(): Map<string, ToolsetFactory> {
  return new Map<string, ToolsetFactory>([
    [DEFAULT_TOOLSET, () => builtinTools()],
    ["toolchain", () => [...builtinTools(), ...alwaysOffered(toolchainTools())]],
    ["mail", () => [...builtinTools(), ...alwaysOffered(mailTools())]],
  ]);
}

/** The same tools, marked to be offered to every run of the set. */
export function alwaysOffered(specs: ToolSpec<unknown>[]): ToolSpec<unknown>[] {
  return specs.map((spec) => ({ ...spec, always: true }));
}

export function runtimeServices(): RuntimeServices {
  return { toolsets: registeredToolsets(), modelFactory: providerModel };
}
