/**
 * The live state of one session inside its SessionDO: the storage, the seq counter, the in-memory
 * event tree and active leaf, the live clients and the replicator. `append` is the only way a
 * persistent event comes to exist (storage first, then tree, broadcast and replication);
 * `emit` is the only way a transient one is sent. The tree is rebuilt from storage once per
 * activation and then grows incrementally: no turn re-reads the log.
 */
import type { NewPersistent, PersistentEvent, StreamFrame, TransientEvent } from "./events.ts";
import { isHidden } from "./events.ts";
import { newId } from "../../kernel/ids.ts";
import type { SessionInfo, SessionStorage } from "./do-storage.ts";
import { SeqCounter } from "./seq.ts";
import { SessionTree, activeLeafAfter } from "./tree.ts";
import type { LiveClients } from "./live-clients.ts";
import { InProgressMessage } from "./in-progress.ts";
import type { Replicator } from "./replicator.ts";

/** A transient event as the loop hands it over: the log adds seq, session, ts. */
export type TransientInput = TransientEvent extends infer T
  ? T extends TransientEvent
    ? Omit<T, "seq" | "session_id" | "ts" | "client_id"> & { client_id?: string }
    : never
  : never;

export const SERVER_CLIENT_ID = "beaver";

export interface AppendOptions {
  /**
   * `now`: start replication at once. Default: at once for events outside a run; for a run's events
   * within RUN_REPLICATION_DELAY_MS or at the run's end (replicator.ts `kickSoon`).
   */
  replicate?: "now";
}

export class SessionLog {
  readonly store: SessionStorage;
  readonly tree: SessionTree;
  readonly live: LiveClients;
  readonly replicator: Replicator;
  readonly inProgress = new InProgressMessage();
  readonly #seq: SeqCounter;
  #leaf: string | null;
  #session: SessionInfo;

  /** Told about every frame after the live clients (the extensions' subscribers; docs/extensions.md). */
  readonly #onFrame: ((frame: StreamFrame) => void) | undefined;

  constructor(
    store: SessionStorage,
    session: SessionInfo,
    live: LiveClients,
    replicator: Replicator,
    onFrame?: (frame: StreamFrame) => void,
  ) {
    this.store = store;
    this.#onFrame = onFrame;
    this.live = live;
    this.replicator = replicator;
    this.#session = session;
    this.tree = SessionTree.fromEvents(store.allEvents());
    this.#leaf = store.getMeta<string | null>("leaf");
    this.#seq = new SeqCounter(store.maxEventSeq(), store.getMeta<number>("seq_reserved") ?? 0, (reserved) =>
      store.setMeta("seq_reserved", reserved),
    );
  }

  get session(): SessionInfo {
    return this.#session;
  }

  get leaf(): string | null {
    return this.#leaf;
  }

  updateSession(patch: Partial<Pick<SessionInfo, "title" | "status" | "metadata" | "archived_at" | "forks" | "channel">>): void {
    this.#session = { ...this.#session, ...patch, updated_at: Date.now() };
    this.store.saveSession(this.#session);
  }

  /**
   * Persists events in one transaction (with `alsoWrite`, extra writes that must land with them),
   * then adds them to the tree, broadcasts them and starts replication. Visible events default to
   * the active leaf as parent; hidden run facts always get `parent_id: null`.
   *
   * A run's events go to D1 together, within a second or when the run ends (its executor flushes
   * before the result is reported), instead of one D1 batch per step; other events (session changes,
   * rewinds) at once (docs/performance.md, "Replication"). Durability does not change: the events
   * are in storage either way, and the alarm copies whatever an eviction left behind.
   */
  append(inputs: NewPersistent[], alsoWrite?: () => void, opts: AppendOptions = {}): PersistentEvent[] {
    // Seqs are taken outside the transaction: a rolled-back transaction must not roll back a
    // reservation the counter already relies on (it only leaves a gap).
    const seqs = inputs.map(() => this.#seq.take());
    const events = this.store.atomically(() => {
      const out: PersistentEvent[] = [];
      let leaf = this.#leaf;
      for (const [i, input] of inputs.entries()) {
        const hidden = isHidden(input);
        const event = {
          ...input,
          id: input.id ?? newId("evt"),
          parent_id: hidden ? null : input.parent_id === undefined ? leaf : input.parent_id,
          seq: seqs[i]!,
          session_id: this.#session.id,
          ts: Date.now(),
        } as PersistentEvent;
        this.store.insertEvent(event, hidden);
        leaf = activeLeafAfter(leaf, event);
        out.push(event);
      }
      if (leaf !== this.#leaf) this.store.setMeta("leaf", leaf);
      alsoWrite?.();
      // Only now: a failed transaction leaves memory untouched.
      this.#leaf = leaf;
      return out;
    });
    for (const event of events) {
      this.tree.add(event);
      this.#broadcast({ persistent: true, ...event });
    }
    if (opts.replicate === "now" || inputs.some((input) => input.run_id === null || input.run_id === undefined)) this.replicator.kick();
    else this.replicator.kickSoon();
    return events;
  }

  appendOne(input: NewPersistent, alsoWrite?: () => void, opts: AppendOptions = {}): PersistentEvent {
    return this.append([input], alsoWrite, opts)[0]!;
  }

  emit(input: TransientInput): TransientEvent {
    const event = {
      client_id: SERVER_CLIENT_ID,
      ...input,
      seq: this.#seq.take(),
      session_id: this.#session.id,
      ts: Date.now(),
    } as TransientEvent;
    this.#broadcast({ persistent: false, ...event });
    return event;
  }

  /** Persistent events after `lastSeq` (from storage), then the in-progress message so far; optionally one run's only. */
  replay(lastSeq: number, includeHidden: boolean, runId?: string): StreamFrame[] {
    const persisted: StreamFrame[] = this.store
      .eventsAfter(lastSeq, { includeHidden, ...(runId !== undefined ? { runId } : {}) })
      .map((e) => ({ persistent: true, ...e }));
    const inProgress: StreamFrame[] = this.inProgress.framesAfter(lastSeq).filter((f) => runId === undefined || f.run_id === runId);
    return [...persisted, ...inProgress];
  }

  #broadcast(frame: StreamFrame): void {
    this.inProgress.observe(frame);
    this.live.broadcast(frame);
    this.#onFrame?.(frame);
  }
}
