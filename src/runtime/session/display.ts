/**
 * Transcripts for clients, built only through the handlers' `convertToDisplay`: the conversation
 * along the active path (with notices where rewinds and branch switches landed), or the whole log
 * in seq order (every branch, every notice where it happened).
 */
import type { PersistentEvent, VisibleEvent } from "./events.ts";
import type { DisplayItem } from "./display-item.ts";
import { convertToDisplay, type DisplayContext } from "./event-handlers.ts";
import type { SessionTree } from "./tree.ts";

export type { DisplayItem } from "./display-item.ts";

export interface TranscriptOptions {
  /** Only the most recent items; the walk stops once it has them. */
  limit?: number;
}

function contextOf(tree: SessionTree): DisplayContext {
  return { lookup: (id) => tree.get(id) };
}

function checkLimit(limit: number | undefined): void {
  if (limit !== undefined && (!Number.isInteger(limit) || limit < 1)) {
    throw new RangeError(`limit must be a positive integer, got ${limit}`);
  }
}

/**
 * The conversation the active leaf sees, root → leaf. A rewind or branch switch that landed on an
 * event of the path, and after which the path went on, is shown right after that event (the
 * rewind itself hangs off the abandoned branch, so it is not on the path).
 */
export function buildTranscript(tree: SessionTree, leafId: string | null, opts: TranscriptOptions = {}): DisplayItem[] {
  checkLimit(opts.limit);
  const ctx = contextOf(tree);
  const onPath = new Set<string>();
  const newestFirst: DisplayItem[][] = [];
  let count = 0;
  let next: VisibleEvent | undefined;
  for (const event of tree.ancestors(leafId)) {
    onPath.add(event.id);
    // A navigation belongs to this path only if the path went on from here after it happened.
    const continuation = next;
    const landed = tree
      .navigationsTo(event.id)
      .filter((marker) => !onPath.has(marker.id) && (continuation === undefined || continuation.seq > marker.seq));
    const group = [event, ...landed].map((e) => convertToDisplay(e, ctx)).filter((item): item is DisplayItem => item !== null);
    newestFirst.push(group);
    count += group.length;
    next = event;
    if (opts.limit !== undefined && count >= opts.limit) break;
  }
  const items = newestFirst.reverse().flat();
  return opts.limit === undefined ? items : items.slice(-opts.limit);
}

/** Every visible event of the session in seq order, all branches included. */
export function buildLogTranscript(tree: SessionTree, opts: { afterSeq?: number } & TranscriptOptions = {}): DisplayItem[] {
  checkLimit(opts.limit);
  const { afterSeq } = opts;
  const events = afterSeq === undefined ? tree.events() : tree.events().filter((event) => event.seq > afterSeq);
  const items = toDisplayItems(events, (id) => tree.get(id));
  return opts.limit === undefined ? items : items.slice(0, opts.limit);
}

/**
 * Display items for any list of stored events (a page read from D1, say), in the order given;
 * hidden events yield nothing. `lookup` resolves rewind/branch targets for their notice text.
 */
export function toDisplayItems(
  events: Iterable<PersistentEvent>,
  lookup: (id: string) => VisibleEvent | undefined = () => undefined,
): DisplayItem[] {
  const ctx: DisplayContext = { lookup };
  const items: DisplayItem[] = [];
  for (const event of events) {
    const item = convertToDisplay(event, ctx);
    if (item !== null) items.push(item);
  }
  return items;
}
