/**
 * Support for delegation tests (docs/delegation.md): one scripted model answering a parent run and its
 * delegated children — told apart by the child's system prompt section — and readers for the
 * `delegate` tool's result.
 */
import type { LanguageModelV4CallOptions, LanguageModelV4StreamPart } from "@ai-sdk/provider";
import { registerToolset, toolCalls } from "./sessions.ts";
import { delegateTool } from "../../src/domains/team/delegate-tool.ts";
import type { ChildOutcome } from "../../src/domains/team/delegation.ts";

/** A tool set of the builtins plus `delegate`. */
export const delegationToolset = (name = "delegating") => registerToolset(name, [delegateTool]);

export const promptOf = (options: LanguageModelV4CallOptions) => JSON.stringify(options.prompt);

/** A delegated child's call (its system prompt has the delegated-task section). */
export const isChild = (options: LanguageModelV4CallOptions) => promptOf(options).includes("## Delegated task");

/** Whether the prompt already holds a result of `delegate` (the parent's second step). */
export const hasDelegateResult = (options: LanguageModelV4CallOptions) =>
  /"type":"tool-result"[^}]*"toolName":"delegate"/.test(promptOf(options));

/** A parent step calling `delegate` with `tasks`. */
export const delegateCall = (id: string, tasks: unknown[]): LanguageModelV4StreamPart[] =>
  toolCalls({ id, name: "delegate", args: { tasks } });

/** The children a `delegate` result names, or its error text. */
export function delegateResults(content: string): ChildOutcome[] {
  return (JSON.parse(content) as { results: ChildOutcome[] }).results;
}
