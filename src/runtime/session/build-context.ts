/**
 * The model's context for a run: walk from the active leaf toward the root through the handler registry
 * (docs/sessions.md, "Building the model's context") and assemble the messages. The walk knows only
 * handler actions, never event types; where a `merge_prev` lands is decided by the shape of the
 * assembled messages.
 *
 * With `maxMessages` the walk stops as soon as enough whole groups are in hand, so the per-turn cost
 * is bounded by the window, not by the length of the session.
 */
import type { Message, PersistentEvent, ToolResultMessage } from "./events.ts";
import { convertToLlm, type LlmAction, type LlmConvertContext } from "./event-handlers.ts";
import { appendReminder } from "./system-reminder.ts";
import type { SessionTree } from "./tree.ts";
import { estimateMessageTokens } from "../agent/tokens.ts";

export interface BuildContextOptions {
  /**
   * Keep only the most recent messages, dropping whole groups (an assistant message with its tool
   * results) so the model never sees a tool result without its call. The newest group is always
   * kept, even when it alone is longer than this.
   */
  maxMessages?: number;
  /**
   * Keep only as many of the most recent whole groups as fit this many estimated tokens (the model's
   * context window minus the system prompt, tools and output; docs/agent-loop.md, "History window").
   * Applied after `maxMessages`; the newest group is always kept.
   */
  maxTokens?: number;
}

export interface ContextResult {
  messages: Message[];
  /** The compact event whose summary opens the context, when the walk stopped at one. */
  barrierEventId: string | null;
  /** The walk reached the root or a compact barrier (false: it stopped early at the window). */
  reachedStart: boolean;
  /** Messages assembled but left out by the `maxMessages` or `maxTokens` window. */
  trimmed: number;
  /** Path events the walk converted (bounded by the window, the barrier or the root). */
  eventsVisited: number;
}

type Contribution = Exclude<LlmAction, { action: "skip" }>;
type Merge = Extract<LlmAction, { action: "merge_prev" }>;

/** A message that opens a group: anything but a tool result (which belongs to the call before it). */
export function opensGroup(message: Message): boolean {
  return message.role !== "tool_result";
}

function checkMax(maxMessages: number | undefined): void {
  if (maxMessages !== undefined && (!Number.isInteger(maxMessages) || maxMessages < 1)) {
    throw new RangeError(`maxMessages must be a positive integer, got ${maxMessages}`);
  }
}

/** Context plus facts about how it was built (for telemetry and compaction decisions). */
export function contextForRun(tree: SessionTree, leafId: string | null, opts: BuildContextOptions = {}): ContextResult {
  const { maxMessages } = opts;
  checkMax(maxMessages);
  const newestFirst: Contribution[] = [];
  let included = 0;
  let eventsVisited = 0;
  let reachedStart = true;
  const mark: CompactionMark = { barrierEventId: null, summary: null, through: null };

  for (const { event, action } of walkSinceCompaction(tree, leafId, mark, () => eventsVisited++)) {
    newestFirst.push(action);
    if (action.action === "include") {
      included++;
      // Everything older would fall outside the window: stop at a group boundary.
      if (maxMessages !== undefined && included >= maxMessages && opensGroup(action.message)) {
        reachedStart = event.parent_id === null || event.parent_id === mark.through;
        break;
      }
    }
  }
  const { barrierEventId, summary } = mark;

  const rest = assembleMessages(newestFirst.reverse());
  const assembled = summary === null ? rest : [summary, ...rest];
  // The summary counts as a message for `maxMessages` (a window that ends before it leaves it out);
  // when the count window keeps it, it always opens the context and the token window trims what
  // follows it (docs/sessions.md, "Compaction").
  const byCount = maxMessages === undefined ? assembled : trimToRecent(assembled, maxMessages);
  const messages = opts.maxTokens === undefined ? byCount : trimWithSummary(byCount, summary, opts.maxTokens);
  return { messages, barrierEventId, reachedStart, trimmed: assembled.length - messages.length, eventsVisited };
}

function trimWithSummary(messages: Message[], summary: Message | null, maxTokens: number): Message[] {
  if (summary === null || messages[0] !== summary) return trimToTokens(messages, maxTokens);
  const budget = Math.max(1, maxTokens - estimateMessageTokens(summary));
  return messages.length === 1 ? messages : [summary, ...trimToTokens(messages.slice(1), budget)];
}

/** One contribution of the path since the newest compaction, with the event it came from. */
export interface PathContribution {
  eventId: string;
  parentId: string | null;
  action: Exclude<Contribution, { action: "barrier" }>;
}

/**
 * The whole path from the active leaf back to the newest compaction (or the root), oldest first,
 * without any window: what a compaction may summarise (compaction.ts). `summary` is the newest
 * compaction's message, when there is one.
 */
export function pathSinceCompaction(
  tree: SessionTree,
  leafId: string | null,
): { summary: Message | null; barrierEventId: string | null; items: PathContribution[] } {
  const mark: CompactionMark = { barrierEventId: null, summary: null, through: null };
  const newestFirst: PathContribution[] = [];
  for (const { event, action } of walkSinceCompaction(tree, leafId, mark)) {
    newestFirst.push({ eventId: event.id, parentId: event.parent_id, action });
  }
  return { summary: mark.summary, barrierEventId: mark.barrierEventId, items: newestFirst.reverse() };
}

/** What the walk learned of the newest compaction on the path (filled in as it passes it). */
interface CompactionMark {
  barrierEventId: string | null;
  summary: Message | null;
  /** The last event the compaction summarised: the kept part ends just after it. */
  through: string | null;
}

/**
 * Walks the path from `leafId` toward the root, newest first, yielding each event that reaches the
 * model, and stops where the newest compaction's summary takes over (recorded in `mark`). Lazy, so a
 * windowed caller stops converting as soon as it has enough. `onVisit` counts converted events.
 */
function* walkSinceCompaction(
  tree: SessionTree,
  leafId: string | null,
  mark: CompactionMark,
  onVisit: () => void = () => undefined,
): Generator<{ event: PersistentEvent; action: Exclude<Contribution, { action: "barrier" }> }> {
  const ctx: LlmConvertContext = { lookup: (id) => tree.get(id) };
  for (const event of tree.ancestors(leafId)) {
    // The newest compaction summarised everything up to `through`: the kept part ends here.
    if (event.id === mark.through) return;
    onVisit();
    const action = convertToLlm(event, ctx);
    if (action.action === "skip") continue;
    if (action.action === "barrier") {
      // An older compaction inside the kept part cannot happen (its summary is folded into the
      // newer one); should a log hold one anyway, the walk ends there.
      if (mark.barrierEventId !== null) return;
      mark.barrierEventId = event.id;
      mark.summary = action.summary;
      mark.through = action.through;
      continue;
    }
    yield { event, action };
  }
}

/** The messages the model sees for a run whose active leaf is `leafId`. */
export function buildContext(tree: SessionTree, leafId: string | null, opts: BuildContextOptions = {}): Message[] {
  return contextForRun(tree, leafId, opts).messages;
}

function withReminders(result: ToolResultMessage, merges: Merge[]): ToolResultMessage {
  return { ...result, content: merges.reduce((content, merge) => appendReminder(content, merge.content), result.content) };
}

function standaloneOf(merge: Merge): Message {
  return merge.standalone ?? { role: "user", content: merge.content };
}

/**
 * Turns contributions (oldest first) into messages. A `merge_prev` joins the tool_result just
 * before it (a steer written during a tool loop; docs/sessions.md, "Building the model's context");
 * right after an assistant message whose tool results have not arrived yet it waits for the first of
 * them (a standalone user message there would split the call from its results); anywhere else it
 * becomes a standalone message.
 */
export function assembleMessages(oldestFirst: readonly Contribution[]): Message[] {
  const out: Message[] = [];
  let waiting: Merge[] = [];
  for (const item of oldestFirst) {
    const last = out.at(-1);
    if (item.action === "merge_prev") {
      if (last?.role === "tool_result") out[out.length - 1] = withReminders(last, [item]);
      else if (last?.role === "assistant" && last.tool_calls.length > 0) waiting.push(item);
      else out.push(standaloneOf(item));
      continue;
    }
    const message = item.action === "include" ? item.message : item.summary;
    if (message.role === "tool_result") {
      out.push(waiting.length > 0 ? withReminders(message, waiting) : message);
    } else {
      out.push(...waiting.map(standaloneOf), message);
    }
    waiting = [];
  }
  out.push(...waiting.map(standaloneOf));
  return out;
}

/**
 * The most recent messages, at most `maxMessages` of them, dropping whole groups from the oldest
 * end; the newest group is kept even when it alone exceeds the limit.
 */
export function trimToRecent(messages: readonly Message[], maxMessages: number): Message[] {
  checkMax(maxMessages);
  let start = messages.length;
  while (start > 0) {
    let groupStart = start - 1;
    while (groupStart > 0 && !opensGroup(messages[groupStart]!)) groupStart--;
    const kept = messages.length - start;
    if (kept > 0 && kept + (start - groupStart) > maxMessages) break;
    start = groupStart;
  }
  return messages.slice(start);
}

/** Start of the group that ends just before `end` (an assistant message with its tool results, or one message). */
function groupStartBefore(messages: readonly Message[], end: number): number {
  let start = end - 1;
  while (start > 0 && !opensGroup(messages[start]!)) start--;
  return start;
}

/**
 * The most recent whole groups whose estimated tokens fit `maxTokens`, dropped from the oldest end
 * so a tool result never loses its call; the newest group is kept even when it alone is larger. A
 * window that then starts mid-turn (with an assistant message) is opened with a user note by
 * model-messages.ts, as for `maxMessages`.
 */
export function trimToTokens(messages: readonly Message[], maxTokens: number): Message[] {
  if (!Number.isFinite(maxTokens) || maxTokens < 1) throw new RangeError(`maxTokens must be a positive number, got ${maxTokens}`);
  let start = messages.length;
  let used = 0;
  while (start > 0) {
    const groupStart = groupStartBefore(messages, start);
    let cost = 0;
    for (let i = groupStart; i < start; i++) cost += estimateMessageTokens(messages[i]!);
    if (start < messages.length && used + cost > maxTokens) break;
    used += cost;
    start = groupStart;
  }
  return messages.slice(start);
}
