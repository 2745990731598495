/**
 * The system prompt, assembled from sections kept as data (base prompt, the <system-reminder>
 * note, tools guidance, the skill catalog, workspace, task extras, session, memory, runtime; docs/agent-loop.md,
 * "The system prompt") so each section can be tested, snapshotted, budgeted and extended on its own.
 * Sections are ordered by the policy table in prompt-budget.ts: the stable ones first (a cacheable
 * prefix), the volatile ones (the clock) last. Pure: the same input and `now` always give the same text.
 */
import type { WorkspaceConfig } from "../../storage/config/schema.ts";
import { SYSTEM_REMINDER_NOTE } from "../session/system-reminder.ts";
import { isTimeZone } from "../../kernel/time-zone.ts";
import { describeTime } from "../tools/builtins/time-format.ts";
import {
  fitPromptToBudget,
  orderSections,
  promptBudgetTokens,
  stablePrefixLength,
  type PromptBudgetReport,
  type PromptSection,
} from "./prompt-budget.ts";

export type { PromptSection } from "./prompt-budget.ts";
import { renderSkillCatalog } from "../skills.ts";

export interface SystemPromptInput {
  now: Date;
  /** IANA zone (`runtime.timezone`); an unknown zone falls back to UTC rather than failing a run. */
  timezone: string;
  session: { id: string; title: string | null; metadata?: Record<string, unknown> };
  /** The workspace's `runtime.system_prompt`. */
  workspacePrompt?: string;
  /** A run's `system_prompt_extra` (task instructions): kept in order. */
  extraSections?: string[];
  /** How to use the run's tools, when a tool source has guidance beyond the declarations. */
  toolGuidance?: string;
  /** Curated memory as snapshotted when the run opened (docs/memory.md); volatile, so it goes after the stable prefix. */
  memory?: string;
  // --- skills (src/runtime/skills.ts; docs/skills-and-plugins.md, "Skills in a run") ---
  /** Every skill the run may use: listed compactly (section `skills`). */
  skillCatalog?: readonly { name: string; description: string }[];
}

export const BASE_PROMPT = [
  "You are Beaver, an agent that completes tasks for a team by reasoning step by step and calling the tools you are given.",
  "",
  "- Use a tool whenever it gives a better answer than guessing; never invent tool results.",
  "- Call tools with arguments that match their schemas. If a tool returns an error, read it, fix the call or change approach, and do not repeat the same failing call.",
  "- When you have what you need, answer directly and concisely. Say plainly when something could not be done and why.",
  "- For the current date and time, rely on the runtime context below or the current_time tool, not on your training data.",
].join("\n");

export function systemPromptSections(input: SystemPromptInput): PromptSection[] {
  const sections: PromptSection[] = [
    { id: "base", text: BASE_PROMPT },
    { id: "system_reminder", text: SYSTEM_REMINDER_NOTE },
    { id: "runtime", text: runtimeSection(input.now, input.timezone) },
    { id: "session", text: sessionSection(input.session) },
  ];
  const toolGuidance = input.toolGuidance?.trim();
  if (toolGuidance) sections.push({ id: "tools", text: `# Using your tools\n${toolGuidance}` });
  const workspacePrompt = input.workspacePrompt?.trim();
  if (workspacePrompt) sections.push({ id: "workspace", text: `# Workspace instructions\n${workspacePrompt}` });
  // --- skills: after the workspace, before extras ---
  const catalog = renderSkillCatalog(input.skillCatalog ?? []);
  if (catalog) sections.push({ id: "skills", text: catalog });
  (input.extraSections ?? []).forEach((extra, i) => {
    const text = extra.trim();
    if (text) sections.push({ id: `extra_${i}`, text });
  });
  const memory = input.memory?.trim();
  if (memory) sections.push({ id: "memory", text: `# Memory\n${memory}` });
  // Pushed in any order (other sources add theirs); the policy table decides where each goes.
  return orderSections(sections);
}

export function renderSystemPrompt(sections: PromptSection[]): string {
  return sections.map((s) => s.text).join("\n\n");
}

export function buildSystemPrompt(input: SystemPromptInput): string {
  return renderSystemPrompt(systemPromptSections(input));
}

export interface RunPromptArgs {
  now: Date;
  session: SystemPromptInput["session"];
  runtime: Pick<WorkspaceConfig["runtime"], "timezone" | "system_prompt"> &
    Partial<Pick<WorkspaceConfig["runtime"], "system_prompt_budget_share">>;
  /** The run's `system_prompt_extra`. */
  extra?: string | undefined;
  /** The main model's `context_window`; without it the prompt is not budgeted. */
  contextWindow?: number | undefined;
  /** The run's skill catalog (section `skills`); activated bodies are messages, never the prompt (docs/agent-loop.md, "Skill messages"). */
  skills?: { catalog: SystemPromptInput["skillCatalog"] } | undefined;
  /** The run's memory snapshot (section `memory`; docs/memory.md). */
  memory?: string | undefined;
}

/** A run's system prompt as snapshotted when the run opens. */
export interface SystemPromptSnapshot {
  text: string;
  /** Length of the stable prefix (docs/agent-loop.md, "Cacheable prefix"): identical across runs of a session. */
  stableChars: number;
  /** What the budget did, when the model's context window is known. */
  budget: PromptBudgetReport | null;
}

/**
 * The system prompt of a run opened at `now`: the one definition shared by the agent loop (which
 * snapshots it when the run opens) and `GET /context` (which shows what the next run would get).
 */
export function runSystemPromptSnapshot(args: RunPromptArgs): SystemPromptSnapshot {
  const sections = systemPromptSections({
    now: args.now,
    timezone: args.runtime.timezone,
    session: args.session,
    ...(args.runtime.system_prompt !== undefined ? { workspacePrompt: args.runtime.system_prompt } : {}),
    ...(args.extra !== undefined ? { extraSections: [args.extra] } : {}),
    ...(args.skills ? { skillCatalog: args.skills.catalog ?? [] } : {}),
    ...(args.memory ? { memory: args.memory } : {}),
  });
  if (args.contextWindow === undefined) {
    return { text: renderSystemPrompt(sections), stableChars: stablePrefixLength(sections), budget: null };
  }
  const fitted = fitPromptToBudget(sections, promptBudgetTokens(args.contextWindow, args.runtime.system_prompt_budget_share));
  return { text: renderSystemPrompt(fitted.sections), stableChars: stablePrefixLength(fitted.sections), budget: fitted.report };
}

export function runSystemPrompt(args: RunPromptArgs): string {
  return runSystemPromptSnapshot(args).text;
}

function runtimeSection(now: Date, timezone: string): string {
  const t = describeTime(now, isTimeZone(timezone) ? timezone : "UTC");
  return [
    "# Runtime context",
    `Current time (UTC): ${t.utc}`,
    `Local time: ${t.local} (${t.weekday})`,
    `Time zone: ${t.timezone} (UTC${t.offset})`,
  ].join("\n");
}

function sessionSection(session: SystemPromptInput["session"]): string {
  const lines = ["# Session", `Session id: ${session.id}`, `Title: ${session.title ?? "(untitled)"}`];
  if (session.metadata && Object.keys(session.metadata).length > 0) lines.push(`Metadata: ${stableJson(session.metadata)}`);
  return lines.join("\n");
}

/** JSON with object keys sorted, so the same metadata always renders the same prompt. */
function stableJson(value: unknown): string {
  return JSON.stringify(value, (_key, v: unknown) =>
    v && typeof v === "object" && !Array.isArray(v)
      ? Object.fromEntries(Object.entries(v).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
      : v,
  );
}
