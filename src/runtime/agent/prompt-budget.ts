/**
 * Where each system-prompt section goes and what may be cut when the prompt is too big
 * (docs/agent-loop.md, "Prompt budget" and "Cacheable prefix"). One policy table gives every section
 * kind an order (stable kinds first, volatile ones last, so consecutive runs of a session share a
 * byte-identical prefix providers can cache), a priority (what is cut first) and whether it may be
 * shortened rather than dropped. `fitPromptToBudget` keeps the prompt within a share of the model's
 * context window: lowest priority first, a section is shortened with a marker when enough of it
 * fits, else dropped; `base` is never touched. Pure functions.
 */
import type { PromptBudgetReport } from "../session/events.ts";
import { charsForTokens, estimateTokens } from "./tokens.ts";

export type { PromptBudgetReport };

export type PromptSectionId =
  "base" | "system_reminder" | "tools" | "skills" | "workspace" | `extra_${number}` | "session" | "memory" | "runtime";

export interface PromptSection {
  /** Stable identifier, for tests and for callers that want to inspect or replace one section. */
  id: PromptSectionId;
  text: string;
}

export type SectionKind = PromptSectionId extends infer I ? (I extends `extra_${number}` ? "extra" : I) : never;

export interface SectionPolicy {
  /** Position in the prompt (ascending). */
  order: number;
  /** Higher survives longer under budget pressure; `base` is never cut. */
  priority: number;
  /** Part of the cacheable prefix: the same for every run of a session. */
  stable: boolean;
  /** May be truncated (with a marker) instead of dropped. */
  shortenable: boolean;
}

/** The policy of every section kind (`skills` is filled by skill selection; activated skills are messages, never a section). */
export const SECTION_POLICY: Record<SectionKind, SectionPolicy> = {
  base: { order: 0, priority: 100, stable: true, shortenable: false },
  system_reminder: { order: 1, priority: 95, stable: true, shortenable: false },
  tools: { order: 2, priority: 55, stable: true, shortenable: true },
  skills: { order: 3, priority: 40, stable: true, shortenable: true },
  workspace: { order: 4, priority: 60, stable: true, shortenable: true },
  extra: { order: 5, priority: 80, stable: true, shortenable: true },
  session: { order: 6, priority: 75, stable: true, shortenable: true },
  // Volatile from here on: they may change between runs of one session.
  memory: { order: 7, priority: 30, stable: false, shortenable: true },
  runtime: { order: 9, priority: 90, stable: false, shortenable: false },
};

/** Share of the context window the system prompt may take when `runtime.system_prompt_budget_share` is unset. */
export const DEFAULT_PROMPT_BUDGET_SHARE = 0.15;

/** A section is shortened only when at least this many tokens of it would remain; otherwise it is dropped. */
export const MIN_SHORTENED_TOKENS = 48;

export const SHORTENED_MARKER = "\n[… shortened to fit the system prompt budget]";

const SEPARATOR = "\n\n";

export function sectionKind(id: PromptSectionId): SectionKind {
  return id.startsWith("extra_") ? "extra" : (id as SectionKind);
}

export function policyOf(id: PromptSectionId): SectionPolicy {
  return SECTION_POLICY[sectionKind(id)];
}

/** Sections in prompt order (stable first, volatile last); sections of one kind keep their order. */
export function orderSections(sections: readonly PromptSection[]): PromptSection[] {
  return sections
    .map((section, index) => ({ section, index }))
    .sort((a, b) => policyOf(a.section.id).order - policyOf(b.section.id).order || a.index - b.index)
    .map((x) => x.section);
}

/**
 * Characters of the rendered prompt that belong to the stable prefix: every section up to the first
 * volatile one, with the separator after it when something follows.
 */
export function stablePrefixLength(sections: readonly PromptSection[]): number {
  let chars = 0;
  for (const [i, section] of sections.entries()) {
    if (!policyOf(section.id).stable) break;
    chars += section.text.length + (i < sections.length - 1 ? SEPARATOR.length : 0);
  }
  return chars;
}

/** The system prompt's token budget for a model with `contextWindow` tokens. */
export function promptBudgetTokens(contextWindow: number, share: number = DEFAULT_PROMPT_BUDGET_SHARE): number {
  return Math.max(1, Math.floor(contextWindow * share));
}

function estimate(sections: readonly PromptSection[]): number {
  return estimateTokens(sections.map((s) => s.text).join(SEPARATOR));
}

/** Cuts `text` to at most `tokens` estimated tokens, marker included, without splitting a surrogate pair. */
export function shortenText(text: string, tokens: number): string {
  let keep = charsForTokens(tokens) - SHORTENED_MARKER.length;
  if (keep <= 0) return SHORTENED_MARKER.trimStart();
  const code = text.charCodeAt(keep - 1);
  if (code >= 0xd800 && code <= 0xdbff) keep--;
  return text.slice(0, keep).trimEnd() + SHORTENED_MARKER;
}

/**
 * Keeps the sections within `budgetTokens`: cuts the lowest priority first (ties: the later section),
 * shortening a shortenable section when at least `MIN_SHORTENED_TOKENS` of it would remain, else
 * dropping it. `base` is never cut. Order is preserved.
 */
export function fitPromptToBudget(
  input: readonly PromptSection[],
  budgetTokens: number,
): { sections: PromptSection[]; report: PromptBudgetReport } {
  let sections = [...input];
  const before = estimate(sections);
  const report: PromptBudgetReport = {
    budget_tokens: budgetTokens,
    tokens_before: before,
    tokens_after: before,
    dropped: [],
    shortened: [],
    over_budget: false,
  };
  if (before <= budgetTokens) return { sections, report };

  const candidates = input
    .map((section, index) => ({ id: section.id, index, policy: policyOf(section.id) }))
    .filter((c) => c.id !== "base")
    .sort((a, b) => a.policy.priority - b.policy.priority || b.index - a.index);

  let total = before;
  for (const candidate of candidates) {
    if (total <= budgetTokens) break;
    const at = sections.findIndex((s) => s.id === candidate.id);
    const section = sections[at]!;
    const own = estimateTokens(section.text);
    const target = own - (total - budgetTokens);
    if (candidate.policy.shortenable && target >= MIN_SHORTENED_TOKENS) {
      // One token of slack: the joined prompt's estimate rounds up once, the parts' each.
      const text = shortenText(section.text, target - 1);
      sections = sections.map((s, i) => (i === at ? { ...s, text } : s));
      report.shortened.push({ id: section.id, tokens_before: own, tokens_after: estimateTokens(text) });
    } else {
      sections = sections.filter((_, i) => i !== at);
      report.dropped.push(section.id);
    }
    total = estimate(sections);
  }
  report.tokens_after = total;
  report.over_budget = total > budgetTokens;
  return { sections, report };
}
