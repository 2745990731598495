/**
 * Curated memory's vocabulary (docs/memory.md): two stores per scope — `notes` about the work and
 * `profile` of the user and team — each with a character budget from the operator's limits
 * (docs/limits.md); scopes are the workspace and each toolchain agent (a run's agent is its
 * `tool_data.agent_id`, set by the task dispatchers). Entry text is checked with the kernel's prompt
 * guard (kernel/prompt-guard.ts, shared with skills), because it is pasted into system prompts: on
 * write, and again when a run's snapshot is built. Pure helpers; storage is in store.ts.
 */
import { z } from "zod";
import type { Env } from "../../storage/env.ts";
import { limitsOf } from "../../storage/limits.ts";
import { AppError } from "../../kernel/errors.ts";
import { AgentIdSchema } from "../tasks/agents.ts";
import { guardFindings, type GuardFinding } from "../../kernel/prompt-guard.ts";

export const MEMORY_STORES = ["notes", "profile"] as const;
export type MemoryStoreName = (typeof MEMORY_STORES)[number];
export const MemoryStoreSchema = z.enum(MEMORY_STORES);

/** What the stores are for (tool description, prompt headings). */
export const STORE_PURPOSE: Record<MemoryStoreName, string> = {
  notes: "about the work: conventions, decisions, facts about systems and projects",
  profile: "of the user and team: who they are, preferences, how they like to work",
};

/** An entry's text, as accepted from the tool or the API (its store's budget is the real bound). */
export const ENTRY_MAX_CHARS = 4_000;
export const EntryTextSchema = z.string().min(1).max(ENTRY_MAX_CHARS);

/** A memory scope: the workspace's, or one agent's of that workspace. */
export interface MemoryScope {
  workspaceId: string;
  agentId: string | null;
}

export const scopeKey = (scope: MemoryScope): string => (scope.agentId ? `agent:${scope.agentId}` : "workspace");

/** The scope a run writes and remembers: its agent's when the dispatcher named one in `tool_data`. */
export function runScope(workspaceId: string, data: Readonly<Record<string, unknown>>): MemoryScope {
  const parsed = AgentIdSchema.safeParse(data.agent_id);
  return { workspaceId, agentId: parsed.success ? parsed.data : null };
}

/** Who changed memory: an API token, or a run (with its session). */
export type MemoryActor = { kind: "token"; id: string } | { kind: "run"; id: string; sessionId: string };

export interface MemoryEntry {
  id: string;
  text: string;
  created_at: number;
  updated_at: number;
}

export interface StoreView {
  store: MemoryStoreName;
  entries: MemoryEntry[];
  used_chars: number;
  budget_chars: number;
  /** "62% of 2,200 chars used". */
  usage: string;
}

export function budgetOf(env: Env, store: MemoryStoreName): number {
  const limits = limitsOf(env);
  return store === "notes" ? limits.memory_notes_chars : limits.memory_profile_chars;
}

/** Characters as the budget counts them (code points, so an emoji is one). */
export const charCount = (text: string): number => [...text].length;

export const usedChars = (texts: readonly string[]): number => texts.reduce((n, t) => n + charCount(t), 0);

export const formatCount = (n: number): string => String(n).replace(/\B(?=(\d{3})+(?!\d))/g, ",");

export function usageLine(used: number, budget: number): string {
  return `${Math.round((used * 100) / budget)}% of ${formatCount(budget)} chars used`;
}

/** The form duplicates are compared in: NFKC, case-folded, whitespace collapsed, trailing punctuation dropped. */
export function normalizeEntry(text: string): string {
  return text
    .normalize("NFKC")
    .toLowerCase()
    .replace(/\s+/g, " ")
    .trim()
    .replace(/[\s.!?;:,]+$/u, "");
}

/**
 * Why `text` cannot go into a system prompt: every prompt-guard finding, at any level (a skill is only
 * flagged for a soft phrasing such as "you are now"; memory is pasted into every run's system prompt).
 */
export function entryHazards(text: string): GuardFinding[] {
  return guardFindings(text);
}

/** The trimmed text, or an AppError saying why it cannot be remembered. */
export function checkEntryText(text: string): string {
  const trimmed = text.trim();
  if (!trimmed) throw new AppError("validation_failed", "A memory entry cannot be empty");
  if (normalizeEntry(trimmed) === "") throw new AppError("validation_failed", "A memory entry needs some words, not only punctuation");
  const findings = entryHazards(trimmed);
  if (findings.length > 0) {
    const reasons = [...new Set(findings.map((f) => `${f.rule.replace("_", " ")}: ${f.message}`))];
    throw new AppError("unprocessable", `Refused: memory entries must not contain ${reasons.join("; ")}`, {
      details: { findings: findings.map((f) => ({ rule: f.rule, message: f.message })) },
    });
  }
  return trimmed;
}

/** Refuses a store whose entries would pass the budget, naming the budget and what is used now. */
export function assertWithinBudget(store: MemoryStoreName, current: number, next: number, budget: number): void {
  if (next <= budget) return;
  throw new AppError(
    "unprocessable",
    `Over budget: ${store} would hold ${formatCount(next)} of ${formatCount(budget)} chars (${formatCount(next - budget)} too many; ` +
      `now ${usageLine(current, budget)}). Remove or shorten entries first.`,
    { details: { store, budget_chars: budget, used_chars: current, would_use_chars: next } },
  );
}

/** One entry as a prompt or tool line (continuation lines indented). */
export const entryLine = (text: string): string => `- ${text.replace(/\n/g, "\n  ")}`;

/** A store as the tool and the prompt show it: a heading with its usage, then its entries. */
export function renderStore(view: StoreView, label: string): string {
  const lines = [`## ${label} (${view.usage})`];
  if (view.entries.length === 0) lines.push("(empty)");
  for (const e of view.entries) lines.push(entryLine(e.text));
  return lines.join("\n");
}

export const shorten = (text: string, max = 80): string => (charCount(text) > max ? `${[...text].slice(0, max - 1).join("")}…` : text);
