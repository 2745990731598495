/**
 * Which of a tool set's tools a run is offered (docs/agent-loop.md, "Tool assembly"; seed
 * tools-blueprint): every tool marked `always` and every tool `runtime.always_tools` names, then the
 * tools named by hints (activated skills' `allowed-tools` / `tools`), then the most relevant of the
 * rest to the run's user message — by embedding similarity when the caller has it, else by keywords —
 * up to `max_tools` and a token budget for the declarations. Always, configured and hinted tools are
 * never cut by either limit. The choice, with the reason
 * for each tool, is recorded as a run fact and frozen in the run's state, so a resumed run is offered
 * the same tools. Pure: the same specs, hints and message always give the same choice.
 */
import type { ToolSpec } from "./spec.ts";
import type { ToolChoice } from "../session/events.ts";
import { estimateToolTokens } from "../agent/tokens.ts";

export type { ToolChoice };

export interface AssemblyOptions {
  /** The run's user message: relevance is measured against it. */
  query: string;
  /** Names every run gets (`runtime.always_tools`); names the tool set lacks are ignored. */
  alwaysTools?: readonly string[];
  /**
   * Embedding similarity of each candidate tool's description to the message (name → cosine), when an
   * embedding model is configured; candidates are ranked by it instead of keywords.
   */
  similarity?: ReadonlyMap<string, number>;
  /** Tool names a hint asks for (activated skills' `allowed-tools`); unknown names are ignored. */
  hintedTools?: readonly string[];
  /** Who asked for each hinted tool (the activated skills' names), recorded with the choice. */
  hintedBy?: ReadonlyMap<string, readonly string[]>;
  /** At most this many tools in all (`runtime.max_tools`). */
  maxTools: number;
  /** Estimated tokens the declarations may take (`runtime.tool_budget_tokens`). */
  budgetTokens: number;
}

type ToolChoiceReason = ToolChoice["reason"];

export interface ToolAssembly {
  /** The chosen tools, in tool-set order (the order the model sees is stable across runs). */
  specs: ToolSpec<unknown>[];
  choices: ToolChoice[];
  /** Tools of the set left out, in tool-set order. */
  left_out: string[];
  /** Estimated tokens of the chosen declarations. */
  tokens: number;
}

/** Lower-case words of at least two letters; snake_case and camelCase names split into their words. */
export function terms(text: string): string[] {
  return text
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .toLowerCase()
    .split(/[^\p{L}\p{N}]+/u)
    .filter((t) => t.length >= 2 && !STOPWORDS.has(t));
}

const STOPWORDS = new Set([
  "the",
  "a",
  "an",
  "and",
  "or",
  "of",
  "to",
  "in",
  "on",
  "for",
  "is",
  "it",
  "this",
  "that",
  "with",
  "me",
  "my",
  "please",
  "can",
  "you",
]);

/**
 * A BM25-style score of each tool's name and description against the query: rare query terms count
 * more (inverse document frequency over the candidate tools), a match in the name counts double.
 */
export function relevanceScores(tools: readonly { name: string; description: string }[], query: string): number[] {
  const queryTerms = [...new Set(terms(query))];
  if (queryTerms.length === 0) return tools.map(() => 0);
  const docs = tools.map((t) => ({ name: new Set(terms(t.name)), body: terms(t.description) }));
  const avgLen = docs.reduce((n, d) => n + d.body.length, 0) / Math.max(1, docs.length) || 1;
  const idf = new Map(
    queryTerms.map((q) => {
      const df = docs.filter((d) => d.name.has(q) || d.body.includes(q)).length;
      return [q, Math.log(1 + (docs.length - df + 0.5) / (df + 0.5))];
    }),
  );
  const k1 = 1.2;
  const b = 0.75;
  return docs.map((d) => {
    let score = 0;
    for (const q of queryTerms) {
      const tf = d.body.filter((t) => t === q).length + (d.name.has(q) ? 2 : 0);
      if (tf === 0) continue;
      score += idf.get(q)! * ((tf * (k1 + 1)) / (tf + k1 * (1 - b + (b * d.body.length) / avgLen)));
    }
    return Math.round(score * 1000) / 1000;
  });
}

const round = (n: number) => Math.round(n * 1000) / 1000;

/** The text a tool is embedded as for ranking (its name's words and its description). */
export function toolEmbeddingText(tool: { name: string; description: string }): string {
  return `${tool.name.replace(/[_-]+/g, " ")}\n${tool.description}`.trim();
}

export function assembleTools(specs: readonly ToolSpec<unknown>[], opts: AssemblyOptions): ToolAssembly {
  const hinted = new Set(opts.hintedTools ?? []);
  const configured = new Set(opts.alwaysTools ?? []);
  const reasons = new Map<string, ToolChoice>();
  let tokens = 0;
  for (const spec of specs) {
    const reason: ToolChoiceReason | null = spec.always
      ? "always"
      : configured.has(spec.name)
        ? "configured"
        : hinted.has(spec.name)
          ? "hinted"
          : null;
    if (!reason) continue;
    const by = reason === "hinted" ? opts.hintedBy?.get(spec.name) : undefined;
    reasons.set(spec.name, { name: spec.name, reason, ...(by && by.length > 0 ? { hinted_by: [...by] } : {}) });
    tokens += estimateToolTokens(spec);
  }

  const rest = specs.filter((s) => !reasons.has(s.name));
  const similarity = opts.similarity;
  const rankedBy = similarity ? "embedding" : "keywords";
  const scores = similarity ? rest.map((s) => round(similarity.get(s.name) ?? 0)) : relevanceScores(rest, opts.query);
  // Highest score first; ties keep tool-set order, so tools nothing points at still fill free slots.
  const ranked = rest.map((spec, i) => ({ spec, score: scores[i]!, i })).sort((a, b) => b.score - a.score || a.i - b.i);
  for (const { spec, score } of ranked) {
    if (reasons.size >= opts.maxTools) break;
    const cost = estimateToolTokens(spec);
    if (tokens + cost > opts.budgetTokens) continue;
    reasons.set(spec.name, { name: spec.name, reason: "relevant", score, ranked_by: rankedBy });
    tokens += cost;
  }

  const chosen = specs.filter((s) => reasons.has(s.name));
  return {
    specs: chosen,
    choices: chosen.map((s) => reasons.get(s.name)!),
    left_out: specs.filter((s) => !reasons.has(s.name)).map((s) => s.name),
    tokens,
  };
}
