/**
 * One Durable Object per workspace: the write lock for skills, plugins and learning candidates
 * (docs/skills-and-plugins.md, "The workspace write lock"). Every mutation of skill versions, plugin
 * state and candidates runs here, one at a time; version numbers are allocated inside. Explicit
 * operations come with an absolute deadline from the caller (client.ts): one that arrives after it,
 * or gets the lock after it, runs nothing and answers `busy`; one that gets the lock in time asks the
 * caller, over RPC, whether it is still waiting before it runs, so nothing is written after the
 * caller answered busy. Automatic ones (`mode: "try"`) never wait. Slow work that needs no lock —
 * upload parsing, hashing, R2 writes — happens in the Worker before calling in. Results cross the
 * RPC boundary as a tagged union (errors keep code and details).
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../storage/env.ts";
import { AppError } from "../../kernel/errors.ts";
import { failure, success, toWire, type Outcome } from "../../kernel/outcome.ts";
import { verifyTreeStored } from "../../storage/blob/store.ts";
import { withR2WriteCounter } from "../../storage/blob/counting.ts";
import { withIoHook } from "../../storage/io-hook.ts";
import { busyError, WriteLock, type LockCall } from "./lock.ts";
import { executeOp, type OpKind, type OpResults, type WorkspaceOp } from "./ops.ts";
import { migrate, type Migration } from "../../storage/do-migrations.ts";

export type { LockCall, LockMode } from "./lock.ts";

/** What an op returns, with the R2 writes it made (measured, for the benchmark and tests). */
export interface Measured<T> {
  value: T;
  r2Writes: number;
}

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

/** What the exported class may hand in (tests share the lock; production takes the default). */
export interface WorkspaceObjectOptions {
  lock?: WriteLock;
}

export class WorkspaceDO extends DurableObject<Env> {
  // JS-private (#), so nothing but `run` and `gcEpoch` is reachable over RPC.
  readonly #lock: WriteLock;
  #epoch: number | undefined;

  constructor(ctx: DurableObjectState, env: Env, options: WorkspaceObjectOptions = {}) {
    super(ctx, env);
    this.#lock = options.lock ?? new WriteLock();
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
    call: LockCall = { mode: "try" },
  ): Promise<Outcome<Measured<OpResults[K]>>> {
    // Every D1 or R2 call of the op holding the lock refuses waiters whose deadline has passed, so
    // they are answered on time even when their timers cannot fire (lock.ts).
    const counter = withR2WriteCounter(withIoHook(this.env, () => this.#lock.expireOverdue()));
    // Delivered too late (the caller may already have answered busy): run nothing.
    if (call.mode === "wait" && Date.now() >= call.deadline) return failure(busyError(call));
    const acquired = call.mode === "try" ? await this.#lock.acquire(0) : await this.#lock.acquireBy(call.deadline);
    if (!acquired) return failure(busyError(call));
    try {
      // Held, but perhaps late (handed over after the deadline), or the caller stopped waiting.
      if (call.mode === "wait" && (Date.now() >= call.deadline || !(await this.#callerStillWaits(call)))) {
        return failure(busyError(call));
      }
      const isGc = op.kind === "collect_garbage";
      if (isGc) await this.#bumpEpoch();
      try {
        const value = (await executeOp(counter.env, workspaceId, op, (epoch) => this.#ensureStored(workspaceId, epoch))) as OpResults[K];
        return success({ value, r2Writes: counter.writes() });
      } finally {
        if (isGc) await this.#bumpEpoch();
      }
    } catch (e) {
      return failure(toWire("workspace op", e));
    } finally {
      this.#lock.release();
    }
  }

  /** The caller's answer to "still waiting?"; a caller that cannot be reached is not. */
  async #callerStillWaits(call: Extract<LockCall, { mode: "wait" }>): Promise<boolean> {
    try {
      return (await call.start()) === true;
    } catch {
      return false;
    }
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
