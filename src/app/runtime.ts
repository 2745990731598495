/**
 * Composition root, runtime: the tool sets domains register with the agent runtime and the model
 * factory it builds models with. The runtime sees only `RuntimeServices` (docs/layering.md).
 */
import { DEFAULT_TOOLSET, type RuntimeServices, type ToolsetFactory } from "../runtime/services.ts";
import { providerModel } from "../runtime/agent/providers.ts";
import { builtinTools } from "../runtime/tools/builtins/index.ts";
import { toolchainTools } from "../domains/toolchain/tools.ts";
import { mailTools } from "../domains/mail/tools.ts";

/** Tool sets by name: chat sessions get `default`; task runs ask for their domain's set. */
export function registeredToolsets(): Map<string, ToolsetFactory> {
  return new Map<string, ToolsetFactory>([
    [DEFAULT_TOOLSET, () => builtinTools()],
    ["toolchain", () => [...builtinTools(), ...toolchainTools()]],
    ["mail", () => [...builtinTools(), ...mailTools()]],
  ]);
}

export function runtimeServices(): RuntimeServices {
  return { toolsets: registeredToolsets(), modelFactory: providerModel };
}
