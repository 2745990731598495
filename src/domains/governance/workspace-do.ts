/**
 * One Durable Object per workspace: the write lock for skills, plugins and learning candidates
 * (docs/skills-and-plugins.md, "The workspace write lock"). Every mutation of skill versions, plugin
 * state and candidates runs here, one at a time; version numbers are allocated inside. Explicit
 * operations wait up to `lockWaitMs` and then answer `busy`; automatic ones (`mode: "try"`) never
 * wait. Slow work that needs no lock — upload parsing, hashing, R2 writes — happens in the Worker
 * before calling in. Results cross the RPC boundary as a tagged union (errors keep code and details).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { failure, success, toWire, type Outcome } from "../../kernel/outcome.ts";
import { verifyTreeStored } from "../../storage/blob/store.ts";
import { withR2WriteCounter } from "../../storage/blob/counting.ts";
import { WriteLock } from "./lock.ts";
import { executeOp, type OpKind, type OpResults, type WorkspaceOp } from "./ops.ts";
import { migrate, type Migration } from "../../storage/do-migrations.ts";

export type LockMode = "wait" | "try";

/** What an op returns, with the R2 writes it made (measured, for the benchmark and tests). */
export interface Measured<T> {
  value: T;
  r2Writes: number;
}

/** Seconds suggested to a client that met a busy lock. */
export const BUSY_RETRY_AFTER_SECONDS = 2;
const GC_EPOCH_KEY = "gc_epoch";

/**
 * The WorkspaceDO's schema history. Its only state is the `gc_epoch` key in the storage's key/value
 * API (kept by the platform in the same SQLite database), so migration 1 creates nothing: it names
 * that layout and records version 1, giving later changes a place to start. An object written before
 * versioning has the same key and no version, and so is simply marked as version 1.
 */
export const WORKSPACE_MIGRATIONS: readonly Migration[] = [
  { version: 1, name: "initial layout: gc_epoch in key/value storage", up: () => undefined },
];

export const WORKSPACE_SCHEMA_VERSION = WORKSPACE_MIGRATIONS.length;

/** How long explicit operations wait for the lock before answering `busy`. */
export const DEFAULT_LOCK_WAIT_MS = 10_000;

/** What the exported class may hand in (tests share the lock and shorten the wait; production takes the defaults). */
export interface WorkspaceObjectOptions {
  lock?: WriteLock;
  lockWaitMs?: () => number;
}

export class WorkspaceDO extends DurableObject<Env> {
  // JS-private (#), so nothing but `run` and `gcEpoch` is reachable over RPC.
  readonly #lock: WriteLock;
  readonly #lockWaitMs: () => number;
  #epoch: number | undefined;

  constructor(ctx: DurableObjectState, env: Env, options: WorkspaceObjectOptions = {}) {
    super(ctx, env);
    this.#lock = options.lock ?? new WriteLock();
    this.#lockWaitMs = options.lockWaitMs ?? (() => DEFAULT_LOCK_WAIT_MS);
    // Synchronous SQL in the constructor runs before any request is delivered, so no
    // blockConcurrencyWhile is needed to keep callers from seeing an unmigrated object.
    migrate(ctx.storage, WORKSPACE_MIGRATIONS);
  }

  /** The GC epoch: odd while the collector runs; read before storing content outside the lock. */
  async gcEpoch(): Promise<number> {
    this.#epoch ??= (await this.ctx.storage.get<number>(GC_EPOCH_KEY)) ?? 0;
    return this.#epoch;
  }

  async #bumpEpoch(): Promise<void> {
    this.#epoch = (await this.gcEpoch()) + 1;
    await this.ctx.storage.put(GC_EPOCH_KEY, this.#epoch);
  }

  async run<K extends OpKind>(
    workspaceId: string,
    op: Extract<WorkspaceOp, { kind: K }>,
    mode: LockMode = "wait",
  ): Promise<Outcome<Measured<OpResults[K]>>> {
    const counter = withR2WriteCounter(this.env);
    const waitMs = mode === "try" ? 0 : this.#lockWaitMs();
    const held = await this.#lock
      .run(waitMs, async () => {
        const isGc = op.kind === "collect_garbage";
        if (isGc) await this.#bumpEpoch();
        try {
          return (await executeOp(counter.env, workspaceId, op, (epoch) => this.#ensureStored(workspaceId, epoch))) as OpResults[K];
        } finally {
          if (isGc) await this.#bumpEpoch();
        }
      })
      .catch((e: unknown) => ({ failed: e }));
    if ("failed" in held) return failure(toWire("workspace op", held.failed));
    if (!held.acquired) {
      return failure({
        code: "busy",
        message:
          mode === "try"
            ? "The workspace is busy with another skill or plugin change; deferred"
            : `The workspace is busy with another skill or plugin change (waited ${waitMs} ms)`,
        details: { waited_ms: waitMs },
        retryAfter: BUSY_RETRY_AFTER_SECONDS,
      });
    }
    return success({ value: held.value, r2Writes: counter.writes() });
  }

  /** Content stored while the collector ran (or before it ran) is checked in R2 before it is published. */
  #ensureStored(workspaceId: string, callerEpoch: number | undefined) {
    return async (treeHash: string): Promise<void> => {
      if (callerEpoch === undefined) return;
      const now = await this.gcEpoch();
      if (callerEpoch === now && callerEpoch % 2 === 0) return;
      if (!(await verifyTreeStored(this.env, workspaceId, treeHash))) {
        throw new AppError("conflict", "Stored content was cleaned up while this request ran; send it again", {
          details: { tree_hash: treeHash },
        });
      }
    };
  }
}
