/**
 * The session's event tree, kept in memory by the SessionDO for the life of the object.
 *
 * Nodes are the visible persistent events linked by `parent_id`; hidden run facts are only
 * remembered by id (so a rewind to one can be refused as `hidden`). `add` is O(1) and the walks
 * are O(depth), so a long session never re-reads or re-walks its whole log per turn. Which events
 * are navigation markers (rewind, branch) comes from the handlers, not from type checks here.
 */
import { isHidden, type PersistentEvent, type VisibleEvent } from "./events.ts";
import { leafAfter, navigationTarget } from "./event-handlers.ts";

export type SessionTreeErrorReason =
  /** A visible event names a parent the tree has not seen. */
  | "unknown_parent"
  /** A visible event names a hidden run fact as its parent (hidden events are not nodes). */
  | "hidden_parent"
  /** The same id arrived twice with different seqs. */
  | "duplicate_id"
  /** A walk started from an id the tree does not hold. */
  | "unknown_event";

export class SessionTreeError extends Error {
  constructor(
    readonly reason: SessionTreeErrorReason,
    readonly eventId: string,
  ) {
    super(`session tree: ${reason} (${eventId})`);
    this.name = "SessionTreeError";
  }
}

interface TreeNode {
  event: VisibleEvent;
  children: VisibleEvent[];
  /** Rewind/branch events that navigate to this node. */
  navigatedFrom: VisibleEvent[];
  marker: boolean;
}

export class SessionTree {
  readonly #nodes = new Map<string, TreeNode>();
  /** Hidden event id → seq (to refuse them as targets and recognise replays). */
  readonly #hidden = new Map<string, number>();
  readonly #leaves = new Set<string>();
  #sorted = true;
  #lastSeq = -Infinity;

  /** Builds a tree from a log in any order (sorted by seq first, so parents precede children). */
  static fromEvents(events: Iterable<PersistentEvent>): SessionTree {
    const tree = new SessionTree();
    for (const event of [...events].sort((a, b) => a.seq - b.seq)) tree.add(event);
    return tree;
  }

  /**
   * Adds one event in O(1). Returns false for an event already present with the same seq (a
   * replay); throws `SessionTreeError` for a visible event whose parent is unknown or hidden.
   */
  add(event: PersistentEvent): boolean {
    const known = this.#nodes.get(event.id)?.event.seq ?? this.#hidden.get(event.id);
    if (known !== undefined) {
      if (known === event.seq) return false;
      throw new SessionTreeError("duplicate_id", event.id);
    }
    if (isHidden(event)) {
      this.#hidden.set(event.id, event.seq);
      return true;
    }
    const parent = event.parent_id === null ? undefined : this.#nodes.get(event.parent_id);
    if (event.parent_id !== null && parent === undefined) {
      throw new SessionTreeError(this.#hidden.has(event.parent_id) ? "hidden_parent" : "unknown_parent", event.id);
    }
    const target = navigationTarget(event);
    const node: TreeNode = { event, children: [], navigatedFrom: [], marker: target !== null };
    this.#nodes.set(event.id, node);
    if (event.seq < this.#lastSeq) this.#sorted = false;
    this.#lastSeq = Math.max(this.#lastSeq, event.seq);
    parent?.children.push(event);
    if (target !== null) this.#nodes.get(target)?.navigatedFrom.push(event);
    if (!node.marker) {
      this.#leaves.add(event.id);
      const above = this.#nearestNonMarker(parent);
      if (above !== undefined) this.#leaves.delete(above.event.id);
    }
    return true;
  }

  get size(): number {
    return this.#nodes.size;
  }

  get(id: string): VisibleEvent | undefined {
    return this.#nodes.get(id)?.event;
  }

  contains(id: string): boolean {
    return this.#nodes.has(id);
  }

  /** A hidden run fact the tree has seen (not a node). */
  isHiddenEvent(id: string): boolean {
    return this.#hidden.has(id);
  }

  /** A rewind/branch event: navigates elsewhere and is never a leaf. */
  isMarker(id: string): boolean {
    return this.#nodes.get(id)?.marker ?? false;
  }

  isLeaf(id: string): boolean {
    return this.#leaves.has(id);
  }

  /** Direct children in the order they were added (seq order when fed in seq order). */
  children(id: string): readonly VisibleEvent[] {
    return this.#nodes.get(id)?.children ?? [];
  }

  /** The rewind/branch events that navigated to `id`, oldest first. */
  navigationsTo(id: string): readonly VisibleEvent[] {
    return this.#nodes.get(id)?.navigatedFrom ?? [];
  }

  /** Tree leaves: visible events with no descendants other than markers; markers are never leaves. */
  leaves(): VisibleEvent[] {
    return [...this.#leaves].map((id) => this.#node(id).event).sort((a, b) => a.seq - b.seq);
  }

  /** Walks from `leafId` up to the root, lazily (stop early and pay only for what was read). */
  *ancestors(leafId: string | null): Generator<VisibleEvent, void, undefined> {
    let node = leafId === null ? undefined : this.#node(leafId);
    while (node !== undefined) {
      yield node.event;
      node = node.event.parent_id === null ? undefined : this.#nodes.get(node.event.parent_id);
    }
  }

  /** The path root → leaf (empty for a null leaf: a session with no events yet). O(depth). */
  pathToRoot(leafId: string | null): VisibleEvent[] {
    return [...this.ancestors(leafId)].reverse();
  }

  /** Every visible event in seq order. */
  events(): VisibleEvent[] {
    const all = [...this.#nodes.values()].map((node) => node.event);
    return this.#sorted ? all : all.sort((a, b) => a.seq - b.seq);
  }

  #node(id: string): TreeNode {
    const node = this.#nodes.get(id);
    if (node === undefined) throw new SessionTreeError("unknown_event", id);
    return node;
  }

  #nearestNonMarker(node: TreeNode | undefined): TreeNode | undefined {
    let current = node;
    while (current?.marker === true) {
      current = current.event.parent_id === null ? undefined : this.#nodes.get(current.event.parent_id);
    }
    return current;
  }
}

/** The active leaf after one more event: the pure fold the SessionDO applies to every event. */
export function activeLeafAfter(prevLeaf: string | null, event: PersistentEvent): string | null {
  return leafAfter(event) ?? prevLeaf;
}

/** The active leaf of a whole log (any order; folded by seq). */
export function foldActiveLeaf(events: Iterable<PersistentEvent>, start: string | null = null): string | null {
  return [...events].sort((a, b) => a.seq - b.seq).reduce(activeLeafAfter, start);
}

export type TargetRejection =
  /** No visible or hidden event has this id in this session. */
  | "not_found"
  /** A run fact: not part of the conversation. */
  | "hidden"
  /** A rewind/branch event: it points elsewhere and is not a place in the conversation. */
  | "marker"
  /** Branch only: the event has descendants (rewind to it instead). */
  | "not_a_leaf";

export type TargetCheck = { ok: true; event: VisibleEvent } | { ok: false; reason: TargetRejection };

function checkPlace(tree: SessionTree, id: string): TargetCheck {
  const event = tree.get(id);
  if (event === undefined) return { ok: false, reason: tree.isHiddenEvent(id) ? "hidden" : "not_found" };
  if (tree.isMarker(id)) return { ok: false, reason: "marker" };
  return { ok: true, event };
}

/** A rewind may go to any visible, non-marker event of the session (on any branch). */
export function validateRewindTarget(tree: SessionTree, id: string): TargetCheck {
  return checkPlace(tree, id);
}

/** A branch switch must land on a leaf. */
export function validateBranchTarget(tree: SessionTree, id: string): TargetCheck {
  const check = checkPlace(tree, id);
  if (check.ok && !tree.isLeaf(id)) return { ok: false, reason: "not_a_leaf" };
  return check;
}

/** A sentence for a 422 answer. */
export function describeRejection(reason: TargetRejection): string {
  switch (reason) {
    case "not_found":
      return "no event with this id in this session";
    case "hidden":
      return "the event is a run record, not part of the conversation";
    case "marker":
      return "the event is a rewind/branch marker, not a place in the conversation";
    case "not_a_leaf":
      return "the event is not a leaf; rewind to it instead";
  }
}
