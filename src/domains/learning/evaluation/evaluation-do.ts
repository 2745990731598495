/**
 * One Durable Object per draft that runs its replay evaluation (docs/evaluation.md, "Durable
 * execution"). Why a Durable Object with an alarm rather than a Workflow: the evaluation is a small
 * work queue with live state (per-case progress read by GET and SSE many times a second, a cancel
 * that must reach running cases at once), which is what a DO's own SQLite and single-threaded
 * object give directly; the alarm is the crash/eviction safety net, and both run in `wrangler dev`
 * and in the vitest plugin (`runDurableObjectAlarm`, `abortAllDurableObjects`).
 *
 * Its SQLite holds the latest evaluation of the draft and one row per case. Up to `concurrency`
 * lanes each claim the next case, run it twice (baseline and candidate) in isolated dry-run
 * sessions, judge it, and persist the result in one statement before claiming another — so a
 * finished case is never run again. While the evaluation runs the alarm is re-armed every few
 * seconds: after an eviction or a crash it wakes the object and the lanes resume, taking over cases
 * left `running` (their session runs are keyed by idempotency keys, so a resumed case waits for the
 * same runs instead of starting new ones). Results cross RPC as `Outcome`s.
 */
import { DurableObject } from "cloudflare:workers";
import type { Env } from "../../../storage/env.ts";
import { AppError, notFound } from "../../../kernel/errors.ts";
import { attempt, attemptAsync, type Outcome } from "../../../kernel/outcome.ts";
import { errorFields, log } from "../../../kernel/log.ts";
import { migrate, type Migration } from "../../../storage/do-migrations.ts";
import type { ModelFactory, SkillOverride } from "../../../runtime/index.ts";
import type { CaseSource } from "./cases.ts";
import { buildReport, type CaseResult, type EvaluationReport } from "./report.ts";
import { armSessionId, runCase, stopSession, type CaseTarget, type CaseToRun } from "./run-case.ts";

export const EVALUATION_MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: "evaluation and its cases",
    up: (sql) => {
      sql.exec(`CREATE TABLE evaluation (
        id TEXT PRIMARY KEY,
        workspace_id TEXT NOT NULL,
        draft_id TEXT NOT NULL,
        skill_name TEXT NOT NULL,
        status TEXT NOT NULL,
        concurrency INTEGER NOT NULL,
        max_steps INTEGER NOT NULL,
        baseline_version TEXT,
        candidate TEXT NOT NULL,
        report TEXT,
        version INTEGER NOT NULL DEFAULT 0,
        created_at INTEGER NOT NULL,
        finished_at INTEGER
      )`);
      sql.exec(`CREATE TABLE eval_cases (
        evaluation_id TEXT NOT NULL,
        idx INTEGER NOT NULL,
        source TEXT NOT NULL,
        prompt TEXT NOT NULL,
        expect TEXT,
        state TEXT NOT NULL,
        result TEXT,
        started_at INTEGER,
        finished_at INTEGER,
        PRIMARY KEY (evaluation_id, idx)
      )`);
    },
  },
];

/** While an evaluation runs its alarm fires this often: a live object just goes on, an evicted one resumes. */
export const RESUME_CHECK_MS = 5_000;
const PROMPT_EXCERPT = 200;

export type EvaluationStatus = "running" | "passed" | "failed" | "cancelled";
export type CaseState = "pending" | "running" | "done" | "error" | "cancelled";

/** What `start` is given: the plan (plan.ts) and the new evaluation's id. */
export interface StartEvaluation {
  evaluationId: string;
  workspaceId: string;
  draftId: string;
  skillName: string;
  baselineVersion: string | null;
  candidate: SkillOverride;
  cases: { source: CaseSource; prompt: string; expect?: string }[];
  concurrency: number;
  maxSteps: number;
}

export interface CaseProgress {
  index: number;
  source: CaseSource;
  state: CaseState;
  prompt: string;
  baseline_score: number | null;
  candidate_score: number | null;
  error: string | null;
}

export interface EvaluationView {
  id: string;
  draft_id: string;
  skill: string;
  status: EvaluationStatus;
  baseline_version: string | null;
  candidate_version: string;
  concurrency: number;
  max_steps: number;
  progress: { total: number; finished: number; running: number; pending: number };
  cases: CaseProgress[];
  report: EvaluationReport | null;
  created_at: string;
  finished_at: string | null;
  /** Bumped on every change (live clients send a frame when it moves). */
  version: number;
}

export interface EvaluationObjectOptions {
  /** How the judge's model is built (the provider packages in production, mock models in tests). */
  modelFactory: ModelFactory;
  /**
   * Told once when an evaluation reaches a verdict (not when it is cancelled): where an auto-publish
   * decision plugs in (docs/evaluation.md, "After the verdict"). Its failure is logged, never fatal.
   */
  onFinished?: (
    env: Env,
    finished: { workspaceId: string; draftId: string; evaluationId: string; verdict: "passed" | "failed" },
  ) => Promise<void>;
}

interface EvaluationRow extends Record<string, SqlStorageValue> {
  id: string;
  workspace_id: string;
  draft_id: string;
  skill_name: string;
  status: EvaluationStatus;
  concurrency: number;
  max_steps: number;
  baseline_version: string | null;
  candidate: string;
  report: string | null;
  version: number;
  created_at: number;
  finished_at: number | null;
}

interface CaseRow extends Record<string, SqlStorageValue> {
  evaluation_id: string;
  idx: number;
  source: CaseSource;
  prompt: string;
  expect: string | null;
  state: CaseState;
  result: string | null;
  started_at: number | null;
  finished_at: number | null;
}

const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

const caseTarget = (row: EvaluationRow): CaseTarget => ({
  evaluationId: row.id,
  workspaceId: row.workspace_id,
  draftId: row.draft_id,
  skillName: row.skill_name,
  maxSteps: row.max_steps,
  candidate: JSON.parse(row.candidate) as SkillOverride,
});
const caseOf = (c: CaseRow): CaseToRun => ({ index: c.idx, prompt: c.prompt, ...(c.expect !== null ? { expect: c.expect } : {}) });

export { armSessionId };

export class EvaluationObject extends DurableObject<Env> {
  readonly #options: EvaluationObjectOptions;
  #pumping: Promise<void> | null = null;
  /** Cases a lane of this instance is working on (a `running` case not in here was left by a dead instance). */
  readonly #active = new Set<number>();
  #abort = new AbortController();

  constructor(ctx: DurableObjectState, env: Env, options: EvaluationObjectOptions) {
    super(ctx, env);
    this.#options = options;
    migrate(ctx.storage, EVALUATION_MIGRATIONS);
  }

  // ---- storage --------------------------------------------------------------------------------

  #evaluation(): EvaluationRow | null {
    return this.ctx.storage.sql.exec<EvaluationRow>(`SELECT * FROM evaluation LIMIT 1`).toArray()[0] ?? null;
  }

  #cases(evaluationId: string): CaseRow[] {
    return this.ctx.storage.sql.exec<CaseRow>(`SELECT * FROM eval_cases WHERE evaluation_id = ? ORDER BY idx`, evaluationId).toArray();
  }

  #bump(evaluationId: string): void {
    this.ctx.storage.sql.exec(`UPDATE evaluation SET version = version + 1 WHERE id = ?`, evaluationId);
  }

  #require(workspaceId: string): EvaluationRow {
    const row = this.#evaluation();
    if (!row || row.workspace_id !== workspaceId) throw notFound("Evaluation");
    return row;
  }

  #view(row: EvaluationRow): EvaluationView {
    const cases = this.#cases(row.id);
    const count = (...states: CaseState[]) => cases.filter((c) => states.includes(c.state)).length;
    return {
      id: row.id,
      draft_id: row.draft_id,
      skill: row.skill_name,
      status: row.status,
      baseline_version: row.baseline_version,
      candidate_version: (JSON.parse(row.candidate) as SkillOverride).version,
      concurrency: row.concurrency,
      max_steps: row.max_steps,
      progress: { total: cases.length, finished: count("done", "error"), running: count("running"), pending: count("pending") },
      cases: cases.map((c) => {
        const result = c.result === null ? null : (JSON.parse(c.result) as CaseResult);
        return {
          index: c.idx,
          source: c.source,
          state: c.state,
          prompt: c.prompt.length > PROMPT_EXCERPT ? `${c.prompt.slice(0, PROMPT_EXCERPT)}…` : c.prompt,
          baseline_score: result?.judgement?.baseline_score ?? null,
          candidate_score: result?.judgement?.candidate_score ?? null,
          error: result?.error ?? null,
        };
      }),
      report: row.report === null ? null : (JSON.parse(row.report) as EvaluationReport),
      created_at: iso(row.created_at)!,
      finished_at: iso(row.finished_at),
      version: row.version,
    };
  }

  // ---- RPC ------------------------------------------------------------------------------------

  /** Starts an evaluation; one still running for this draft is cancelled and replaced. */
  async start(input: StartEvaluation): Promise<Outcome<EvaluationView>> {
    return attemptAsync(async () => {
      const previous = this.#evaluation();
      if (previous && previous.workspace_id !== input.workspaceId) throw new AppError("conflict", "This evaluation object is taken");
      if (previous?.status === "running") await this.#cancelRunning(previous);
      const now = Date.now();
      this.ctx.storage.transactionSync(() => {
        this.ctx.storage.sql.exec(`DELETE FROM eval_cases`);
        this.ctx.storage.sql.exec(`DELETE FROM evaluation`);
        this.ctx.storage.sql.exec(
          `INSERT INTO evaluation (id, workspace_id, draft_id, skill_name, status, concurrency, max_steps, baseline_version, candidate, created_at)
           VALUES (?, ?, ?, ?, 'running', ?, ?, ?, ?, ?)`,
          input.evaluationId,
          input.workspaceId,
          input.draftId,
          input.skillName,
          input.concurrency,
          input.maxSteps,
          input.baselineVersion,
          JSON.stringify(input.candidate),
          now,
        );
        input.cases.forEach((c, idx) =>
          this.ctx.storage.sql.exec(
            `INSERT INTO eval_cases (evaluation_id, idx, source, prompt, expect, state) VALUES (?, ?, ?, ?, ?, 'pending')`,
            input.evaluationId,
            idx,
            c.source,
            c.prompt,
            c.expect ?? null,
          ),
        );
      });
      await this.ctx.storage.setAlarm(now + RESUME_CHECK_MS);
      this.#wake();
      return this.#view(this.#evaluation()!);
    }, "evaluation start");
  }

  /**
   * The latest evaluation of this draft (404 when there is none). Reading also wakes the lanes of a
   * running evaluation this instance is not working on (the first touch after a restart), so resuming
   * does not have to wait for the alarm.
   */
  view(workspaceId: string): Outcome<EvaluationView> {
    return attempt(() => {
      const row = this.#require(workspaceId);
      if (row.status === "running") this.#wake();
      return this.#view(row);
    }, "evaluation view");
  }

  /** Stops a running evaluation: its running cases' session runs are cancelled, nothing more is judged or reported. */
  async cancel(workspaceId: string): Promise<Outcome<EvaluationView>> {
    return attemptAsync(async () => {
      const row = this.#require(workspaceId);
      if (row.status !== "running") throw new AppError("conflict", `The evaluation is ${row.status}; only a running one can be cancelled`);
      await this.#cancelRunning(row);
      return this.#view(this.#evaluation()!);
    }, "evaluation cancel");
  }

  override async alarm(): Promise<void> {
    const row = this.#evaluation();
    if (row?.status !== "running") return;
    // Re-armed first: should this instance die while the lanes run, the next alarm resumes them.
    await this.ctx.storage.setAlarm(Date.now() + RESUME_CHECK_MS);
    this.#wake();
  }

  // ---- cancelling -----------------------------------------------------------------------------

  async #cancelRunning(row: EvaluationRow): Promise<void> {
    const running = this.#cases(row.id).filter((c) => c.state === "running");
    const now = Date.now();
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec(`UPDATE evaluation SET status = 'cancelled', finished_at = ? WHERE id = ?`, now, row.id);
      this.ctx.storage.sql.exec(
        `UPDATE eval_cases SET state = 'cancelled', finished_at = ? WHERE evaluation_id = ? AND state IN ('pending', 'running')`,
        now,
        row.id,
      );
      this.#bump(row.id);
    });
    this.#abort.abort(new AppError("conflict", "evaluation cancelled"));
    this.#abort = new AbortController();
    await this.ctx.storage.deleteAlarm();
    const sessions = running.flatMap((c) => (["baseline", "candidate"] as const).map((arm) => armSessionId(row.id, c.idx, arm)));
    await Promise.allSettled(sessions.map((id) => stopSession(this.env, row.workspace_id, id)));
  }

  /** True while `evaluationId` is the object's evaluation and still running. */
  #live(evaluationId: string): boolean {
    const row = this.#evaluation();
    return row !== null && row.id === evaluationId && row.status === "running";
  }

  // ---- the lanes ------------------------------------------------------------------------------

  #wake(): void {
    if (this.#pumping) return;
    const row = this.#evaluation();
    if (row?.status !== "running") return;
    const signal = this.#abort.signal;
    this.#pumping = (async () => {
      await Promise.all(Array.from({ length: Math.max(1, row.concurrency) }, () => this.#lane(row, signal)));
      if (this.#live(row.id)) await this.#finish(row);
    })()
      .catch((e: unknown) => log.error("evaluation lanes failed", { evaluation_id: row.id, ...errorFields(e) }))
      .finally(() => {
        this.#pumping = null;
        // A start that replaced the evaluation while these lanes wound down gets its own lanes now.
        const now = this.#evaluation();
        if (now?.status === "running" && now.id !== row.id) this.#wake();
      });
  }

  /** Takes the next case nobody here is working on (pending, or running but left by a dead instance). */
  #claim(evaluationId: string): CaseRow | null {
    const next = this.#cases(evaluationId).find((c) => c.state === "pending" || (c.state === "running" && !this.#active.has(c.idx)));
    if (!next) return null;
    this.#active.add(next.idx);
    if (next.state === "pending") {
      this.ctx.storage.sql.exec(
        `UPDATE eval_cases SET state = 'running', started_at = ? WHERE evaluation_id = ? AND idx = ?`,
        Date.now(),
        evaluationId,
        next.idx,
      );
      this.#bump(evaluationId);
    }
    return next;
  }

  async #lane(row: EvaluationRow, signal: AbortSignal): Promise<void> {
    while (this.#live(row.id) && !signal.aborted) {
      const c = this.#claim(row.id);
      if (!c) return;
      try {
        const result = await runCase(this.env, this.#options.modelFactory, caseTarget(row), caseOf(c), signal);
        if (!this.#live(row.id) || signal.aborted) return;
        // Persisted before the lane takes another case: a finished case is never run again.
        this.ctx.storage.transactionSync(() => {
          this.ctx.storage.sql.exec(
            `UPDATE eval_cases SET state = ?, result = ?, finished_at = ? WHERE evaluation_id = ? AND idx = ? AND state = 'running'`,
            result.error === undefined ? "done" : "error",
            JSON.stringify(result),
            Date.now(),
            row.id,
            c.idx,
          );
          this.#bump(row.id);
        });
      } catch (e) {
        if (signal.aborted || !this.#live(row.id)) return;
        throw e;
      } finally {
        this.#active.delete(c.idx);
      }
    }
  }

  async #finish(row: EvaluationRow): Promise<void> {
    const cases = this.#cases(row.id);
    if (cases.some((c) => c.state !== "done" && c.state !== "error")) return;
    const report = buildReport(
      cases.map((c) => ({
        index: c.idx,
        source: c.source,
        prompt: c.prompt,
        ...(c.expect !== null ? { expect: c.expect } : {}),
        result: JSON.parse(c.result!) as CaseResult,
      })),
    );
    this.ctx.storage.transactionSync(() => {
      this.ctx.storage.sql.exec(
        `UPDATE evaluation SET status = ?, report = ?, finished_at = ? WHERE id = ? AND status = 'running'`,
        report.verdict,
        JSON.stringify(report),
        Date.now(),
        row.id,
      );
      this.#bump(row.id);
    });
    await this.ctx.storage.deleteAlarm();
    log.info("evaluation finished", { evaluation_id: row.id, draft_id: row.draft_id, verdict: report.verdict, ...report.summary });
    if (this.#options.onFinished) {
      try {
        await this.#options.onFinished(this.env, {
          workspaceId: row.workspace_id,
          draftId: row.draft_id,
          evaluationId: row.id,
          verdict: report.verdict,
        });
      } catch (e) {
        log.error("evaluation: onFinished observer failed", { evaluation_id: row.id, ...errorFields(e) });
      }
    }
  }
}
