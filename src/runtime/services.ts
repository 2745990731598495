/**
 * What the runtime is handed by the composition root (src/app/, docs/layering.md): the tool sets
 * domains registered, how model objects are made, and fault injection for replication. The runtime
 * only sees these interfaces and never imports a domain; tests build the services they need.
 */
import type { ToolSpec } from "./tools/spec.ts";
import type { ModelFactory } from "./agent/providers.ts";
import type { ReplicationFault } from "./session/replicator.ts";
import type { SkillProvider } from "./skills.ts";
import type { MemoryProvider } from "./memory.ts";
import type { Extension } from "./extensions.ts";

/** Builds the tools of one run (fresh objects per run). */
export type ToolsetFactory = () => ToolSpec<unknown>[];

/** The tool set every run gets unless it names another. */
export const DEFAULT_TOOLSET = "default";

export interface RuntimeServices {
  /** Named tool sets a run may ask for (`SubmitRunInput.toolset`); must hold `default`. */
  toolsets: ReadonlyMap<string, ToolsetFactory>;
  /** Turns a configured model entry into an `ai` SDK model (the provider packages in production). */
  modelFactory: ModelFactory;
  /** Makes a replication attempt fail as if D1 were down; only chaos and durability tests set it. */
  replicationFault?: ReplicationFault;
  /** Chooses each run's skills when it opens (src/runtime/skills.ts); absent = runs get no skills. */
  skills?: SkillProvider;
  /** Renders each run's frozen memory snapshot when it opens (src/runtime/memory.ts); absent = no memory section. */
  memory?: MemoryProvider;
  /**
   * Hooks around tool calls and the model's context, and event subscribers, in registration order
   * (src/runtime/extensions.ts, docs/extensions.md); absent = none.
   */
  extensions?: readonly Extension[];
}

/** The tools for a run's named tool set; an unknown name gets the default set. */
export function toolsFor(services: RuntimeServices, name: string | undefined): ToolSpec<unknown>[] {
  const make = services.toolsets.get(name ?? DEFAULT_TOOLSET) ?? services.toolsets.get(DEFAULT_TOOLSET);
  return make ? make() : [];
}
