/**
 * Compaction (docs/sessions.md, "Compaction"): when a session's history would outgrow its token
 * window, the older part of the path since the last compaction is summarised by the auxiliary model
 * (the main model when none is set) and a `compact` event records the summary and the last event it
 * covers (`compacted_through`). Context building then opens with the summary and goes on with the
 * events kept after `compacted_through` (build-context.ts). Nothing is deleted: the compact event is
 * a node of the tree, so a rewind to before it or a branch elsewhere never sees it.
 *
 * The plan (`planCompaction`) and the transcript for the summary are pure; `compactSession` makes the
 * one model call and appends the event. A failed summary call appends nothing and says why: the caller
 * falls back to the token window (trimming).
 */
import type { AssistantMessage, CompactEvent, Message } from "./events.ts";
import type { SessionTree } from "./tree.ts";
import type { SessionLog } from "./session-log.ts";
import type { ModelHandle, ResolvedModels } from "../agent/providers.ts";
import { assembleMessages, opensGroup, pathSinceCompaction, type PathContribution } from "./build-context.ts";
import { charsForTokens, estimateMessageTokens, estimateTokens } from "../agent/tokens.ts";
import { anchorsUsage } from "../agent/context-size.ts";
import { COMPACTION_SYSTEM, compactionPrompt } from "../agent/summary-prompts.ts";
import { redactSecrets } from "../agent/providers.ts";
import { errorFields, log as logger } from "../../kernel/log.ts";
import { aiSdk } from "../agent/ai-sdk-loader.ts";

/** Share of the history budget kept verbatim after a compaction (the newest whole groups). */
export const KEEP_SHARE = 0.25;
/** Kept verbatim by an on-demand compaction when no context window is known and the caller names no amount. */
export const DEFAULT_KEEP_TOKENS = 8_000;
/** A summary longer than this many characters is cut (a runaway answer must not refill the window). */
export const MAX_SUMMARY_CHARS = 24_000;
/** Each tool result is cut to this many characters in the transcript the summariser reads. */
const MAX_RESULT_CHARS = 2_000;
/** The transcript sent for summarising is cut (oldest part first) to this many tokens when the summariser's window is unknown. */
const DEFAULT_MAX_INPUT_TOKENS = 60_000;

export interface CompactionPlan {
  /** The active leaf the plan was made for (the compact event's parent). */
  leafId: string;
  /** What the summary replaces, oldest first: the previous summary (if any), then the summarised messages. */
  summarised: Message[];
  /** The last summarised event: the compact event's `compacted_through`. */
  through: string;
  /** The first event kept verbatim after the summary. */
  firstKeptEventId: string;
  /** Estimated tokens of the whole history before compacting, and of the part kept verbatim. */
  tokensBefore: number;
  keptTokens: number;
}

function contributionTokens(item: PathContribution): number {
  return item.action.action === "include" ? estimateMessageTokens(item.action.message) : estimateTokens(item.action.content) + 4;
}

/**
 * What to summarise so that at most `keepTokens` of the newest whole groups (an assistant message
 * with its tool results, or one message) stay verbatim; the newest group is always kept. Null when
 * there is nothing older than the kept part to summarise.
 */
export function planCompaction(tree: SessionTree, leafId: string | null, keepTokens: number): CompactionPlan | null {
  if (leafId === null) return null;
  const { summary, items } = pathSinceCompaction(tree, leafId);
  // Group starts: an included message that is not a tool result opens one; the first item always does.
  const starts: number[] = [];
  items.forEach((item, i) => {
    if (i === 0 || (item.action.action === "include" && opensGroup(item.action.message))) starts.push(i);
  });
  const tokens = items.map(contributionTokens);
  const total = tokens.reduce((a, b) => a + b, 0) + (summary === null ? 0 : estimateMessageTokens(summary));
  let keepFrom = items.length;
  let kept = 0;
  for (let g = starts.length - 1; g >= 0; g--) {
    const start = starts[g]!;
    const cost = tokens.slice(start, keepFrom).reduce((a, b) => a + b, 0);
    if (keepFrom < items.length && kept + cost > keepTokens) break;
    kept += cost;
    keepFrom = start;
  }
  if (keepFrom === 0) return null;
  const firstKept = items[keepFrom]!;
  if (firstKept.parentId === null) return null;
  const summarised = assembleMessages(items.slice(0, keepFrom).map((i) => i.action));
  return {
    leafId,
    summarised: summary === null ? summarised : [summary, ...summarised],
    through: firstKept.parentId,
    firstKeptEventId: firstKept.eventId,
    tokensBefore: total,
    keptTokens: kept,
  };
}

/** Events walked back from the leaf looking for a usage anchor before the estimate alone decides. */
const ANCHOR_SEARCH_EVENTS = 200;

/**
 * The assistant message whose reported usage anchors the context size (context-size.ts): the newest
 * one on the active path after the newest compaction — usage reported before a compaction described
 * a context the summary has since replaced. Null when there is none close to the leaf.
 */
export function usageAnchor(tree: SessionTree, leafId: string | null): AssistantMessage | null {
  let walked = 0;
  for (const event of tree.ancestors(leafId)) {
    if (event.type === "compact" || ++walked > ANCHOR_SEARCH_EVENTS) return null;
    if (event.type === "message" && anchorsUsage(event.message)) return event.message;
  }
  return null;
}

/**
 * The trigger (docs/agent-loop.md, "History window"): only with a known window (`budgetTokens`), when
 * the history's estimate exceeds `share` of it.
 */
export function shouldCompact(tokens: number, budgetTokens: number | undefined, share: number): boolean {
  return budgetTokens !== undefined && tokens > budgetTokens * share;
}

function clip(text: string, max: number): string {
  return text.length <= max ? text : `${text.slice(0, max)}… [${text.length - max} more characters]`;
}

/** The summariser's input: one line block per message, oldest first, cut from the oldest end to `maxChars`. */
export function renderTranscript(messages: readonly Message[], maxChars: number): string {
  const blocks = messages.map((m) => {
    switch (m.role) {
      case "user":
        return `[user]\n${m.content}`;
      case "assistant": {
        const calls = m.tool_calls.map((c) => `→ called ${c.name}(${clip(JSON.stringify(c.args) ?? "", 500)})`);
        return [`[assistant]`, m.text, ...calls].filter((l) => l.length > 0).join("\n");
      }
      case "tool_result":
        return `[tool_result ${m.tool_name}${m.is_error ? " (error)" : ""}]\n${clip(m.content, MAX_RESULT_CHARS)}`;
    }
  });
  const text = blocks.join("\n\n");
  if (text.length <= maxChars) return text;
  return `[… the oldest part is omitted …]\n${text.slice(text.length - maxChars)}`;
}

/** The model that summarises: the auxiliary model, else the main model. */
export function summariserOf(models: ResolvedModels): ModelHandle {
  return models.auxiliary ?? models.main;
}

/** One summary call; throws what the provider threw. */
export async function summarise(handle: ModelHandle, messages: readonly Message[], signal?: AbortSignal): Promise<string> {
  const inputTokens = handle.contextWindow !== undefined ? Math.floor(handle.contextWindow * 0.6) : DEFAULT_MAX_INPUT_TOKENS;
  // The `ai` SDK loads on first use, not at the Worker's startup (docs/performance.md, "Startup, third pass").
  const { generateText } = await aiSdk();
  const { text } = await generateText({
    model: handle.model,
    system: COMPACTION_SYSTEM,
    prompt: compactionPrompt(renderTranscript(messages, charsForTokens(inputTokens))),
    maxRetries: 1,
    ...(signal ? { abortSignal: signal } : {}),
  });
  const summary = text.trim();
  if (summary.length === 0) throw new Error("the summariser answered with an empty summary");
  return clip(summary, MAX_SUMMARY_CHARS);
}

export type CompactionOutcome =
  | { status: "compacted"; event: CompactEvent }
  | { status: "nothing_to_compact" }
  /** The active leaf moved while the summary was written (a run opened): nothing was appended. */
  | { status: "moved" }
  | { status: "failed"; reason: string };

export interface CompactArgs {
  log: SessionLog;
  summariser: ModelHandle;
  keepTokens: number;
  runId: string | null;
  clientId: string;
  signal?: AbortSignal;
}

/**
 * Plans, summarises and appends the compact event (parent: the leaf it was planned for). A failed
 * summary call, or a leaf that moved while the summary was written, appends nothing and says why.
 */
export async function compactSession(args: CompactArgs): Promise<CompactionOutcome> {
  const { log } = args;
  const plan = planCompaction(log.tree, log.leaf, args.keepTokens);
  if (plan === null) return { status: "nothing_to_compact" };
  let summary: string;
  try {
    summary = await summarise(args.summariser, plan.summarised, args.signal);
  } catch (err) {
    if (args.signal?.aborted) throw err;
    const reason = redactSecrets(args.summariser, err instanceof Error ? err.message : String(err));
    logger.warn("compaction: the summary call failed; the history window trims instead", {
      session_id: log.session.id,
      model: args.summariser.modelId,
      ...errorFields(err),
      error: reason,
    });
    return { status: "failed", reason };
  }
  if (log.leaf !== plan.leafId) return { status: "moved" };
  const tokensAfter = estimateTokens(summary) + plan.keptTokens;
  const event = log.appendOne({
    type: "compact",
    run_id: args.runId,
    client_id: args.clientId,
    parent_id: plan.leafId,
    summary,
    compacted_through: plan.through,
    tokens_before: plan.tokensBefore,
    tokens_after: tokensAfter,
  });
  return { status: "compacted", event: event as CompactEvent };
}
