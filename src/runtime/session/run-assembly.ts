/**
 * What a run is given when it opens, decided once and frozen (docs/agent-loop.md, "Prompt budget",
 * "Tool assembly", "History window"): the system prompt within its budget, the assembled tool set,
 * and, per step, how many tokens of history fit the model's context window. Kept apart from the
 * loop (run-executor.ts) so the loop only calls these and records what they decided.
 */
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import type { SubmitRunInput } from "./contract.ts";
import type { SystemPromptSnapshottedEvent } from "./events.ts";
import type { ToolSpec } from "../tools/spec.ts";
import type { ResolvedModels } from "../agent/providers.ts";
import { runSystemPromptSnapshot, type RunPromptArgs, type SystemPromptInput, type SystemPromptSnapshot } from "../agent/prompt.ts";
import { assembleTools, type ToolAssembly } from "../tools/assemble.ts";
import { estimateTokens, estimateToolTokens } from "../agent/tokens.ts";

export interface RunOpening {
  prompt: SystemPromptSnapshot;
  tools: ToolAssembly;
}

/** The prompt and tools of a run opened at `now`. */
export function openRun(args: {
  now: Date;
  session: SystemPromptInput["session"];
  config: WorkspaceConfig;
  input: SubmitRunInput;
  /** The run's whole tool set. */
  specs: readonly ToolSpec<unknown>[];
  /** Embedding similarity of each tool to the message (tool-similarity.ts); absent = keyword ranking. */
  similarity?: ReadonlyMap<string, number> | null;
  /** Tools named by activated skills' `allowed-tools` (skill selection feeds these). */
  hintedTools?: readonly string[];
  /** The skills that named each hinted tool (recorded as the tool choice's `hinted_by`). */
  hintedBy?: ReadonlyMap<string, readonly string[]>;
  /** The run's skill catalog (section `skills`). */
  skills?: RunPromptArgs["skills"];
  /** The run's memory snapshot (section `memory`; docs/memory.md). */
  memory?: string;
}): RunOpening {
  const { config, input } = args;
  const prompt = runSystemPromptSnapshot({
    now: args.now,
    session: args.session,
    runtime: config.runtime,
    extra: input.system_prompt_extra,
    contextWindow: (input.model_override ?? config.model)?.context_window,
    ...(args.skills ? { skills: args.skills } : {}),
    ...(args.memory ? { memory: args.memory } : {}),
  });
  const tools = assembleTools(args.specs, {
    query: input.content,
    maxTools: config.runtime.max_tools,
    budgetTokens: config.runtime.tool_budget_tokens,
    alwaysTools: config.runtime.always_tools,
    ...(args.similarity ? { similarity: args.similarity } : {}),
    ...(args.hintedTools ? { hintedTools: args.hintedTools } : {}),
    ...(args.hintedBy ? { hintedBy: args.hintedBy } : {}),
  });
  return { prompt, tools };
}

/** The run facts `system_prompt_snapshotted` carries besides the prompt. */
export function openingFacts(
  opening: RunOpening,
  config: WorkspaceConfig,
): Pick<SystemPromptSnapshottedEvent, "prompt_budget" | "stable_chars" | "tools"> {
  return {
    stable_chars: opening.prompt.stableChars,
    ...(opening.prompt.budget ? { prompt_budget: opening.prompt.budget } : {}),
    tools: {
      chosen: opening.tools.choices,
      left_out: opening.tools.left_out,
      tokens: opening.tools.tokens,
      max_tools: config.runtime.max_tools,
      budget_tokens: config.runtime.tool_budget_tokens,
    },
  };
}

/** The run's frozen tools: the names chosen when it opened; a run opened before assembly existed gets the whole set. */
export function frozenTools(specs: readonly ToolSpec<unknown>[], names: readonly string[] | undefined): ToolSpec<unknown>[] {
  if (names === undefined) return [...specs];
  const chosen = new Set(names);
  return specs.filter((s) => chosen.has(s.name));
}

/** Output reserved in the window when the model entry sets no `max_tokens`. */
export const DEFAULT_OUTPUT_RESERVE = 4_096;

/**
 * Tokens of history that fit the smallest context window among the models that may answer, after
 * the system prompt, the tool declarations and the output reserve; undefined when no window is known.
 */
export function historyBudgetTokens(models: ResolvedModels, system: string, tools: readonly ToolSpec<unknown>[]): number | undefined {
  const handles = [models.main, ...(models.fallback ? [models.fallback] : [])].filter((h) => h.contextWindow !== undefined);
  if (handles.length === 0) return undefined;
  const limits = handles.map((h) => {
    const window = h.contextWindow!;
    const reserve = h.maxTokens ?? Math.min(DEFAULT_OUTPUT_RESERVE, Math.floor(window / 4));
    return window - reserve;
  });
  return Math.max(1, Math.min(...limits) - fixedPromptTokens(system, tools));
}

/** Estimated tokens a request carries besides its messages: the system prompt and the tool declarations. */
export function fixedPromptTokens(system: string, tools: readonly { name: string; description: string }[]): number {
  return estimateTokens(system) + tools.reduce((n, t) => n + estimateToolTokens(t), 0);
}
