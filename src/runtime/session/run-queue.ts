/**
 * The session's durable run queue: a submitted run is a row in DO storage before the submit is
 * acknowledged; one pump executes open runs strictly one after another (so two runs' events never
 * interleave); a steer message joins the running run instead of queueing; waiters are told when a
 * run ends. After an eviction the pump is restarted by the DO alarm and resumes the open run.
 */
import type { RunResult, SubmitRunInput } from "./contract.ts";
import type { ConfigAndRevisionRow } from "../../storage/config/store.ts";
import type { RunRow } from "./do-storage.ts";
import { emptyUsage } from "./do-storage.ts";
import { RunExecutor, type RunDeps } from "./run-executor.ts";
import { withLogContext } from "../../kernel/log.ts";
import { AppError } from "../../kernel/errors.ts";
import { newId } from "../../kernel/ids.ts";

export interface SubmitOutcome {
  run_id: string;
  status: RunRow["status"];
  /** The same idempotency key was seen before: this is that run. */
  deduplicated: boolean;
  /** A steer message that joined the running run rather than starting one. */
  steered: boolean;
}

export interface RunQueueDeps extends RunDeps {
  /** Called once a run ended and its events had their chance to reach D1. */
  onRunEnded(runId: string): void;
}

export class RunQueue {
  readonly #deps: RunQueueDeps;
  #current: RunExecutor | null = null;
  #pump: Promise<void> | null = null;
  readonly #waiters = new Map<string, Set<(result: RunResult) => void>>();
  /**
   * The config row the edge read for the request that queued `runId` into an idle queue: that run
   * opens at once and uses it instead of reading D1 again. A run queued behind another reads afresh
   * when it opens, so a config saved while it waited applies to it (docs/performance.md, "The run's
   * config read beside its rate limits").
   */
  #preread: { runId: string; row: ConfigAndRevisionRow } | null = null;

  constructor(deps: RunQueueDeps) {
    this.#deps = deps;
  }

  get #store() {
    return this.#deps.log.store;
  }

  /** The run being executed in memory now, if any. */
  get current(): RunRow | null {
    return this.#current?.run ?? null;
  }

  get pumping(): boolean {
    return this.#pump !== null;
  }

  /**
   * Queues a new run, or joins a steer message to the running one. Repeated idempotency keys are the
   * caller's to catch. `preread`: the workspace's config row as the edge read it for this request.
   */
  submit(input: SubmitRunInput, preread?: ConfigAndRevisionRow): SubmitOutcome {
    const open = this.#store.openRuns();
    const running = open.find((r) => r.status === "running");
    if (input.source === "steer" && running) {
      this.#store.queueSteer(
        {
          run_id: running.id,
          client_id: input.client_id ?? "api",
          content: input.content,
          source: "steer",
          ...(input.channel ? { channel: input.channel } : {}),
        },
        input.idempotency_key,
        input.idempotency_fingerprint,
      );
      return { run_id: running.id, status: running.status, deduplicated: false, steered: true };
    }
    const run = this.#store.insertRun({
      id: newId("run"),
      status: "queued",
      idempotency_key: input.idempotency_key ?? null,
      input,
      state: { tool_iterations: 0, usage: emptyUsage(), provider: null, model: null, output_text: "", finish_reason: "" },
      result: null,
      created_at: Date.now(),
      started_at: null,
      ended_at: null,
    });
    this.#preread = preread && open.length === 0 && this.#pump === null ? { runId: run.id, row: preread } : null;
    return { run_id: run.id, status: run.status, deduplicated: false, steered: false };
  }

  /** Starts the pump unless it runs; resolves when the queue is empty. */
  wake(): Promise<void> {
    this.#pump ??= this.#drain().finally(() => {
      this.#pump = null;
    });
    return this.#pump;
  }

  /**
   * Cancels `runId` (default: the running run). A queued run ends at once without events; the
   * running one gets its step aborted and ends `cancelled`. The request is stored first, so a
   * run resumed after a restart ends too.
   */
  cancel(runId?: string): { run_id: string; status: RunRow["status"] } | null {
    const target = runId !== undefined ? this.#store.run(runId) : (this.#store.openRuns().find((r) => r.status === "running") ?? null);
    if (!target) {
      if (runId !== undefined) throw new AppError("not_found", "Run not found");
      return null;
    }
    if (target.status !== "queued" && target.status !== "running") return { run_id: target.id, status: target.status };
    if (target.status === "queued") {
      const result = this.#endQueued(target);
      this.#notify(target.id, result);
      this.#deps.onRunEnded(target.id);
      return { run_id: target.id, status: "cancelled" };
    }
    const live = this.#current?.run.id === target.id ? this.#current : null;
    const row = live?.run ?? target;
    row.state.cancel_requested = true;
    this.#store.updateRun(row);
    live?.cancel();
    return { run_id: target.id, status: "running" };
  }

  /** Cancels everything open (closing the session). */
  cancelAll(): void {
    for (const run of this.#store.openRuns()) this.cancel(run.id);
  }

  /** Resolves with the run's result when it ends, or its current state after `timeoutMs`. */
  waitFor(runId: string, timeoutMs: number): Promise<RunResult> {
    const run = this.#store.run(runId);
    if (!run) return Promise.reject(new AppError("not_found", "Run not found"));
    if (run.result) return Promise.resolve(run.result);
    return new Promise((resolve) => {
      const set = this.#waiters.get(runId) ?? new Set();
      this.#waiters.set(runId, set);
      const done = (result: RunResult) => {
        clearTimeout(timer);
        set.delete(done);
        resolve(result);
      };
      const timer = setTimeout(() => {
        set.delete(done);
        const now = this.#store.run(runId);
        resolve(now?.result ?? pendingResult(this.#deps.log.session.id, now ?? run));
      }, timeoutMs);
      set.add(done);
    });
  }

  async #drain(): Promise<void> {
    for (;;) {
      const run = this.#store.nextOpenRun();
      if (!run) return;
      if (run.status === "queued" && run.state.cancel_requested) {
        this.#notify(run.id, this.#endQueued(run));
        continue;
      }
      const preread = this.#preread?.runId === run.id ? this.#preread.row : undefined;
      this.#preread = null;
      const executor = new RunExecutor(this.#deps, run, preread);
      this.#current = executor;
      let result: RunResult;
      try {
        const session = this.#deps.log.session;
        result = await withLogContext({ workspace_id: session.workspace_id, session_id: session.id, run_id: run.id }, () =>
          executor.execute(),
        );
      } finally {
        this.#current = null;
      }
      this.#notify(run.id, result);
      this.#deps.onRunEnded(run.id);
    }
  }

  /**
   * Ends every queued run that has not started with `error` as its failure, read by whoever submitted
   * it (the session is stopping: docs/sessions.md, "Stop, close and retry"). The run in execution, if
   * any, is left alone. Answers the run it left (null when none).
   */
  failWaiting(error: { code: string; message: string }): RunRow | null {
    const inFlight = this.#current?.run ?? this.#store.openRuns().find((r) => r.status === "running") ?? null;
    for (const run of this.#store.openRuns()) {
      if (run.id === inFlight?.id) continue;
      const result = this.#endQueued(run, error);
      this.#notify(run.id, result);
      this.#deps.onRunEnded(run.id);
    }
    return inFlight;
  }

  #endQueued(run: RunRow, error?: { code: string; message: string }): RunResult {
    const status = error ? "failed" : "cancelled";
    const result: RunResult = {
      ...pendingResult(this.#deps.log.session.id, run),
      status,
      finish_reason: error ? "error" : "cancelled",
      ...(error ? { error } : {}),
    };
    run.status = status;
    run.ended_at = Date.now();
    run.result = result;
    this.#store.atomically(() => {
      this.#store.updateRun(run);
      this.#deps.recordEnd?.(run);
    });
    this.#deps.log.replicator.kick();
    return result;
  }

  #notify(runId: string, result: RunResult): void {
    const set = this.#waiters.get(runId);
    this.#waiters.delete(runId);
    for (const done of set ?? []) done(result);
  }
}

/** The result shape for a run that has not ended (status queued/running). */
export function pendingResult(sessionId: string, run: RunRow): RunResult {
  return {
    session_id: sessionId,
    run_id: run.id,
    status: run.status,
    output_text: run.state.output_text,
    finish_reason: run.state.finish_reason,
    tool_iterations: run.state.tool_iterations,
    provider: run.state.provider,
    model: run.state.model,
    usage: run.state.usage,
  };
}
