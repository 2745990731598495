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
import type { Env } from "../storage/env.ts";
import type { WorkspaceConfig } from "../storage/config/schema.ts";
import type { Usage } from "./session/events.ts";
import { errorFields, log } from "../kernel/log.ts";
import { enabledExtensions, type Extension } from "./extensions.ts";

/** Builds the tools of one run (fresh objects per run). */
export type ToolsetFactory = () => ToolSpec<unknown>[];

/** What a tool source is told when a run opens (or resumes). */
export interface ToolSourceRequest {
  env: Env;
  workspaceId: string;
  /** The workspace configuration the run uses. */
  config: WorkspaceConfig;
  /** The tool set the run named (`default` when it named none). */
  toolset: string;
  /** The run's per-run data (`tool_data`). */
  data: Readonly<Record<string, unknown>>;
  /** Aborted when the run is cancelled. */
  signal?: AbortSignal;
}

/**
 * Tools found at run time rather than declared (MCP servers, docs/mcp.md): asked when a run opens,
 * before tool assembly, so its tools compete for the run's slots like any other. A source that
 * fails contributes nothing; the run goes on.
 */
export type ToolSource = (request: ToolSourceRequest) => Promise<ToolSpec<unknown>[]>;

/** The tool set every run gets unless it names another. */
export const DEFAULT_TOOLSET = "default";

/**
 * Embeds texts with the workspace's `embedding_model` (one vector per text, in order), or answers null
 * when none is configured. Tool assembly ranks tools with it (tools/tool-similarity.ts).
 */
export type TextEmbedder = (req: {
  env: Env;
  workspaceId: string;
  config: WorkspaceConfig;
  texts: readonly string[];
  signal?: AbortSignal;
}) => Promise<number[][] | null>;

/** What a run driver is handed (docs/delegation.md, "Teams"). */
export interface RunDriverContext {
  env: Env;
  workspaceId: string;
  sessionId: string;
  runId: string;
  /** The run's message. */
  content: string;
  /** The run's per-run data (`tool_data`). */
  data: Readonly<Record<string, unknown>>;
  config: WorkspaceConfig;
  /** Aborted when the run is cancelled. */
  signal: AbortSignal;
  /**
   * Appends a `custom` event (kind `<driver>:<kind>`) to the run's log once per `key`: a driver replayed
   * after a restart records nothing twice.
   */
  record(kind: string, key: string, data: Record<string, unknown>): void;
}

export interface RunDriverOutcome {
  output_text: string;
  finish_reason?: string;
  /** Tokens the driver's child runs spent (the run's `delegated_usage`). */
  usage?: Usage;
}

/** One record a driver wrote with `RunDriverContext.record` (`kind` without the `<driver>:` prefix). */
export interface RunDriverRecord {
  kind: string;
  key: string;
  data: Record<string, unknown>;
}

/** What `RunDriver.onRunCancelled` is handed: the run, and the records its driver wrote, in log order. */
export interface RunDriverCancelContext {
  env: Env;
  workspaceId: string;
  sessionId: string;
  runId: string;
  data: Readonly<Record<string, unknown>>;
  records: readonly RunDriverRecord[];
}

/**
 * A run driven by code instead of the agent loop (a team's pipeline or discussion): it opens and ends
 * like any run, and is run again from the start when the session resumes it after a restart, so
 * whatever it starts must be idempotent (child sessions under derived ids).
 */
export interface RunDriver {
  (ctx: RunDriverContext): Promise<RunDriverOutcome>;
  /**
   * The run ended `cancelled` — also in an instance that resumed it after an eviction only to end it,
   * where no driver is running to see its signal abort: stop what it started elsewhere (its records
   * say what). The driver-level twin of `ToolSpec.onRunCancelled` (docs/delegation.md, "Cancel"); at
   * most a few seconds, errors logged and ignored.
   */
  onRunCancelled?(ctx: RunDriverCancelContext): Promise<void>;
}

export interface RuntimeServices {
  /** Named tool sets a run may ask for (`SubmitRunInput.toolset`); must hold `default`. */
  toolsets: ReadonlyMap<string, ToolsetFactory>;
  /** Turns a configured model entry into an `ai` SDK model (the provider packages in production). */
  modelFactory: ModelFactory;
  /** Makes a replication attempt fail as if D1 were down; only chaos and durability tests set it. */
  replicationFault?: ReplicationFault;
  /** Chooses each run's skills when it opens (src/runtime/skills.ts); absent = runs get no skills. */
  skills?: SkillProvider;
  /** Asynchronous tool sources whose tools join every tool set when a run opens; absent = none. */
  toolSources?: readonly ToolSource[];
  /** Renders each run's frozen memory snapshot when it opens (src/runtime/memory.ts); absent = no memory section. */
  memory?: MemoryProvider;
  /**
   * Hooks around tool calls and the model's context, and event subscribers, in registration order
   * (src/runtime/extensions.ts, docs/extensions.md); absent = none.
   */
  extensions?: readonly Extension[];
  /** Embeds texts for tool ranking (absent, or no `embedding_model`: keyword ranking). */
  embedder?: TextEmbedder;
  /** Run drivers by name (`SubmitRunInput.driver`); absent = none. */
  drivers?: ReadonlyMap<string, RunDriver>;
}

/** The tools for a run's named tool set; an unknown name gets the default set. */
export function toolsFor(services: RuntimeServices, name: string | undefined): ToolSpec<unknown>[] {
  const make = services.toolsets.get(name ?? DEFAULT_TOOLSET) ?? services.toolsets.get(DEFAULT_TOOLSET);
  return make ? make() : [];
}

/**
 * A run's whole tool set: the named set's tools, then every tool source's. A failing source is
 * logged and skipped, and a sourced tool whose name is already taken is left out (the first wins).
 */
export async function runToolset(
  services: RuntimeServices,
  request: Omit<ToolSourceRequest, "toolset"> & { toolset?: string | undefined },
): Promise<ToolSpec<unknown>[]> {
  // Tools the workspace's enabled extensions add (docs/extensions.md) join every set.
  const declared = [
    ...toolsFor(services, request.toolset),
    ...enabledExtensions(services.extensions ?? [], request.config).flatMap((e) => e.tools ?? []),
  ];
  const sources = services.toolSources ?? [];
  if (sources.length === 0) return declared;
  const toolset = request.toolset ?? DEFAULT_TOOLSET;
  const found = await Promise.all(
    sources.map((source) =>
      source({ ...request, toolset }).catch((err: unknown) => {
        log.warn("a tool source failed; the run goes on without its tools", errorFields(err));
        return [];
      }),
    ),
  );
  const taken = new Set(declared.map((s) => s.name));
  const out = [...declared];
  for (const spec of found.flat()) {
    if (taken.has(spec.name)) continue;
    taken.add(spec.name);
    out.push(spec);
  }
  return out;
}
