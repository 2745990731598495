/**
 * Skill drafts, the Drafts tab of the Skills area (docs/learning.md, "Review API", "Merge record"; docs/evaluation.md): the list
 * (`GET /api/drafts`, filtered by skill and status) and one draft for review — its diffs against the
 * current version and the upstream, the merge record (each change preserved / adopted / dropped with its
 * reason), the evidence runs linked to their conversations, the merge decisions, the preservation and safety reports — with
 * its replay evaluation (start, live progress read from the SSE stream with the bearer token, cancel,
 * the report) and the decisions: approve (or, with no passing evaluation, approve skipping it with a
 * reason), reject with a reason, regenerate.
 */
import { useEffect, useState } from "preact/hooks";
import { api, urlOf } from "../api/client";
import type { Schemas } from "../api/openapi";
import { readSse } from "../api/sse";
import { navigate } from "../router";
import { Empty, ErrorNote, Json, Link, Loading, Status, Time, useAction, useLoad } from "../ui";
import { EvidenceRuns } from "./candidates";

const STATUSES = ["pending_review", "merge_failed", "superseded", "published", "rejected"] as const;

interface DraftSummary {
  id: string;
  skill: string;
  status: string;
  proposal_kind: string;
  merge_mode: string | null;
  plugin_id: string | null;
  confidence: number | null;
  safety_level: string;
  failure: string | null;
  published_version: string | null;
  superseded_by: string | null;
  reviewed_by: string | null;
  review_reason: string | null;
  created_at: number;
}
interface FileDiff {
  path: string;
  change: "added" | "removed" | "modified";
  unified: string | null;
}
interface TreeDiff {
  files: FileDiff[];
  truncated: boolean;
}
interface MergeDecision {
  file: string;
  hunk: number;
  decision: string;
  reason: string;
  confidence: number;
  by: string;
}
interface MergeChange {
  side: "local" | "upstream";
  kind: string;
  text: string;
  label: "preserved" | "adopted" | "dropped";
  change_reason: string;
}
interface LearningUnit {
  kind: string;
  text: string;
  kept: "verbatim" | "reworded" | "lost";
}
type Evaluation = Schemas["Evaluation"];
interface EvaluationReport {
  verdict: string;
  reasons: string[];
  summary: Record<string, number | null>;
  cases: {
    index: number;
    prompt: string;
    state: string;
    baseline_score: number | null;
    candidate_score: number | null;
    winner: string | null;
    reason: string;
  }[];
  cost: Record<string, number>;
}
interface DraftDetailView extends DraftSummary {
  provenance: Record<string, unknown>;
  safety: { level: string; findings: { level: string; rule: string; path: string; line?: number; message: string }[] };
  merge: {
    resolver: unknown;
    confidence: number | null;
    resolver_calls: number;
    decisions: MergeDecision[];
    record?: MergeChange[];
    local_evidence?: { run_id: string; outcome: string; rating: string | null }[];
    merged_files: unknown[];
    unresolved_files: unknown[];
    failure: unknown;
  } | null;
  preservation: { local: LearningUnit[]; upstream: LearningUnit[]; lost_local: number; lost_upstream: number } | null;
  supporting_files: unknown;
  diffs: { current: TreeDiff & { version: string | null }; upstream: (TreeDiff & { tree_hash: string }) | null };
  evaluation: Evaluation | null;
}

/** The drafts list with its filters; each draft links to its review page. */
export function DraftsSection({ tick }: { tick: number }) {
  const [skill, setSkill] = useState("");
  const [status, setStatus] = useState("");
  const [filter, setFilter] = useState({ skill: "", status: "" });
  const drafts = useLoad(
    async () =>
      (await api("get", "/api/drafts", { query: { skill: filter.skill || undefined, status: filter.status || undefined, limit: 50 } }))
        .drafts as unknown as DraftSummary[],
    [filter.skill, filter.status, tick],
  );
  return (
    <section aria-label="Drafts">
      <h3>Drafts</h3>
      <form
        class="row filters"
        role="search"
        aria-label="Filter drafts"
        onSubmit={(e) => {
          e.preventDefault();
          setFilter({ skill: skill.trim(), status });
        }}
      >
        <label for="draft-skill">Skill</label>
        <input id="draft-skill" value={skill} onInput={(e) => setSkill(e.currentTarget.value)} placeholder="any" />
        <label for="draft-status">Status</label>
        <select id="draft-status" value={status} onChange={(e) => setStatus(e.currentTarget.value)}>
          <option value="">any</option>
          {STATUSES.map((s) => (
            <option key={s} value={s}>
              {s}
            </option>
          ))}
        </select>
        <button type="submit">Filter</button>
      </form>
      <Loading state={drafts}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No drafts{filter.skill || filter.status ? " match" : " yet"}.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>draft</th>
                  <th>skill</th>
                  <th>kind</th>
                  <th>status</th>
                  <th>safety</th>
                  <th>created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((d) => (
                  <tr key={d.id} data-testid="draft-row">
                    <td class="mono small">
                      <Link href={`/skills/~drafts/${encodeURIComponent(d.id)}`}>{d.id}</Link>
                    </td>
                    <td>{d.skill}</td>
                    <td>
                      {d.proposal_kind}
                      {d.merge_mode ? ` · ${d.merge_mode}` : ""}
                    </td>
                    <td>
                      <Status value={d.status} />
                      {d.published_version ? ` → ${d.published_version}` : ""}
                    </td>
                    <td>
                      <Status value={d.safety_level} />
                    </td>
                    <td>
                      <Time ts={d.created_at} />
                    </td>
                  </tr>
                ))}
              </tbody>
            </table>
          )
        }
      </Loading>
    </section>
  );
}

/** One draft for review, at /skills/~drafts/:id (the Drafts tab). */
export function DraftDetail({ id }: { id: string }) {
  const [tick, setTick] = useState(0);
  const draft = useLoad(async () => (await api("get", "/api/drafts/{id}", { params: { id } })) as unknown as DraftDetailView, [id, tick]);
  const [evaluation, setEvaluation] = useState<Evaluation | null | undefined>(undefined);
  return (
    <section class="panel" aria-label="Draft">
      <p>
        <Link href="/skills/~drafts">← Drafts</Link>
      </p>
      <Loading state={draft}>
        {(d) => {
          const current = evaluation === undefined ? d.evaluation : evaluation;
          return (
            <>
              <h2>
                Draft of {d.skill} <Status value={d.status} />
              </h2>
              <p class="small">
                <span class="mono">{d.id}</span> · {d.proposal_kind}
                {d.merge_mode ? ` · ${d.merge_mode}` : ""}
                {d.plugin_id ? ` · plugin ${d.plugin_id}` : ""} · confidence {d.confidence ?? "—"} · <Time ts={d.created_at} />
                {d.published_version ? (
                  <>
                    {" "}
                    · published as <Link href={`/skills/${encodeURIComponent(d.skill)}`}>{d.published_version}</Link>
                  </>
                ) : null}
                {d.superseded_by ? (
                  <>
                    {" "}
                    · superseded by <Link href={`/skills/~drafts/${encodeURIComponent(d.superseded_by)}`}>{d.superseded_by}</Link>
                  </>
                ) : null}
              </p>
              {d.failure ? <div class="error">{d.failure}</div> : null}
              {d.review_reason ? (
                <p class="small">
                  Review: {d.review_reason} ({d.reviewed_by ?? "—"})
                </p>
              ) : null}
              <section aria-label="Diff against the current version">
                <h3>Diff against the current version ({d.diffs.current.version ?? "none yet"})</h3>
                <UnifiedDiffs diff={d.diffs.current} empty="The draft has the current version's files." />
              </section>
              {d.diffs.upstream ? (
                <section aria-label="Diff against the upstream">
                  <h3>Diff against the plugin's upstream</h3>
                  <UnifiedDiffs diff={d.diffs.upstream} empty="The draft is the upstream's tree." />
                </section>
              ) : null}
              <EvidenceSection provenance={d.provenance} />
              <MergeRecordSection record={d.merge?.record ?? []} localEvidence={d.merge?.local_evidence ?? []} />
              <MergeSection merge={d.merge} />
              <PreservationSection report={d.preservation} />
              <SafetySection safety={d.safety} />
              <EvaluationSection
                draftId={d.id}
                evaluation={current}
                canStart={d.status === "pending_review"}
                onChange={setEvaluation}
                onFinished={() => setTick((t) => t + 1)}
              />
              <Decisions draft={d} evaluation={current} onDone={() => setTick((t) => t + 1)} />
              <details>
                <summary>Provenance</summary>
                <Json value={d.provenance} />
              </details>
            </>
          );
        }}
      </Loading>
    </section>
  );
}

function UnifiedDiffs({ diff, empty }: { diff: TreeDiff; empty: string }) {
  if (diff.files.length === 0) return <p class="muted">{empty}</p>;
  return (
    <div aria-label="Diff">
      {diff.files.map((f) => (
        <div key={f.path} class="diff" data-testid="draft-diff-file">
          <div class="diff-path">
            {f.path} ({f.change})
          </div>
          {f.unified === null ? (
            <p class="muted small">binary or too large to show</p>
          ) : (
            <pre tabIndex={0}>
              {f.unified.split("\n").map((line, i) => (
                <div
                  key={i}
                  class={
                    line.startsWith("+") && !line.startsWith("+++")
                      ? "add"
                      : line.startsWith("-") && !line.startsWith("---")
                        ? "del"
                        : undefined
                  }
                >
                  {line}
                </div>
              ))}
            </pre>
          )}
        </div>
      ))}
      {diff.truncated ? <p class="muted small">The diff was cut here (too long to show whole).</p> : null}
    </div>
  );
}

/** The runs an evidence draft (improvement, new skill) was written from, each linked to its conversation. */
function EvidenceSection({ provenance }: { provenance: Record<string, unknown> }) {
  const runs = provenance.evidence_runs as { run_id: string; session_id: string }[] | undefined;
  if (!Array.isArray(runs)) return null;
  return (
    <section aria-label="Evidence runs">
      <h3>Evidence runs ({runs.length})</h3>
      <p class="small muted">The runs this draft was written from; the evaluation replays their inputs.</p>
      <EvidenceRuns runs={runs} />
    </section>
  );
}

/** The merge record (docs/learning.md, "Merge record"): each change between local and upstream, labelled, with its reason. */
function MergeRecordSection({
  record,
  localEvidence,
}: {
  record: MergeChange[];
  localEvidence: { run_id: string; outcome: string; rating: string | null }[];
}) {
  if (record.length === 0 && localEvidence.length === 0) return null;
  return (
    <section aria-label="Merge record">
      <h3>Merge record</h3>
      {record.length > 0 ? (
        <table>
          <thead>
            <tr>
              <th>label</th>
              <th>from</th>
              <th>change</th>
              <th>change_reason</th>
            </tr>
          </thead>
          <tbody>
            {record.map((c, i) => (
              <tr key={i} data-testid="merge-change" data-label={c.label}>
                <td>
                  <span class={`badge ${c.label === "dropped" ? "bad" : ""}`}>{c.label}</span>
                </td>
                <td>
                  {c.side} {c.kind}
                </td>
                <td class="small">{c.text}</td>
                <td class="small">{c.change_reason}</td>
              </tr>
            ))}
          </tbody>
        </table>
      ) : (
        <p class="muted small">No change between the local version and the upstream needed recording.</p>
      )}
      {localEvidence.length > 0 ? (
        <p class="small">
          The merge was given the local version's evidence: runs{" "}
          {localEvidence.map((r) => `${r.run_id} (${r.outcome}${r.rating ? `, rated ${r.rating}` : ""})`).join(", ")}.
        </p>
      ) : null}
    </section>
  );
}

function MergeSection({ merge }: { merge: DraftDetailView["merge"] }) {
  return (
    <section aria-label="Merge decisions">
      <h3>Merge decisions</h3>
      {!merge ? (
        <p class="muted">No merge: this draft takes its files as they are (no three-way merge was needed).</p>
      ) : (
        <>
          <p class="small">
            resolver calls {merge.resolver_calls} · confidence {merge.confidence ?? "—"} · unresolved files {merge.unresolved_files.length}
          </p>
          {merge.failure ? <Json value={merge.failure} /> : null}
          {merge.decisions.length === 0 ? (
            <p class="muted small">No hunk needed deciding.</p>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>file</th>
                  <th>hunk</th>
                  <th>decision</th>
                  <th>by</th>
                  <th>confidence</th>
                  <th>reason</th>
                </tr>
              </thead>
              <tbody>
                {merge.decisions.map((m) => (
                  <tr key={`${m.file}:${m.hunk}`}>
                    <td>{m.file}</td>
                    <td>{m.hunk}</td>
                    <td>{m.decision}</td>
                    <td>{m.by}</td>
                    <td>{m.confidence}</td>
                    <td class="small">{m.reason}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          )}
        </>
      )}
    </section>
  );
}

function PreservationSection({ report }: { report: DraftDetailView["preservation"] }) {
  return (
    <section aria-label="Preservation report">
      <h3>Preservation report</h3>
      {!report ? (
        <p class="muted">No preservation report: only a three-way merge of SKILL.md checks that local learnings were kept.</p>
      ) : (
        <>
          <p>
            {report.lost_local === 0 ? "Every local learning kept" : `${report.lost_local} local learning(s) lost`} ·{" "}
            {report.lost_upstream === 0 ? "every upstream change kept" : `${report.lost_upstream} upstream change(s) lost`}
          </p>
          <ul class="small">
            {[...report.local.map((u) => ({ ...u, side: "local" })), ...report.upstream.map((u) => ({ ...u, side: "upstream" }))].map(
              (u, i) => (
                <li key={i}>
                  <span class={`badge ${u.kept === "lost" ? "bad" : ""}`}>{u.kept}</span> {u.side} {u.kind}: {u.text}
                </li>
              ),
            )}
          </ul>
        </>
      )}
    </section>
  );
}

function SafetySection({ safety }: { safety: DraftDetailView["safety"] }) {
  return (
    <section aria-label="Safety report">
      <h3>
        Safety report <Status value={safety.level} />
      </h3>
      {safety.findings.length === 0 ? (
        <p class="muted">No findings.</p>
      ) : (
        <ul class="small">
          {safety.findings.map((f, i) => (
            <li key={i}>
              <Status value={f.level} /> {f.rule} · {f.path}
              {f.line ? `:${f.line}` : ""} — {f.message}
            </li>
          ))}
        </ul>
      )}
    </section>
  );
}

/** The replay evaluation: start or restart, follow its SSE progress until `done`, cancel, the report. */
function EvaluationSection({
  draftId,
  evaluation,
  canStart,
  onChange,
  onFinished,
}: {
  draftId: string;
  evaluation: Evaluation | null;
  canStart: boolean;
  onChange: (e: Evaluation) => void;
  onFinished: () => void;
}) {
  const [concurrency, setConcurrency] = useState("");
  const action = useAction();
  const [streamError, setStreamError] = useState<unknown>(null);
  const running = evaluation?.status === "running";
  const runningId = running ? evaluation.id : null;
  useEffect(() => {
    if (!runningId) return;
    const abort = new AbortController();
    setStreamError(null);
    readSse(
      urlOf("/api/drafts/{id}/evaluation/stream", { id: draftId }),
      (frame) => {
        const data = frame.data as { type?: string; evaluation?: Evaluation };
        if (!data.evaluation) return;
        onChange(data.evaluation);
        if (data.type === "done") onFinished();
      },
      abort.signal,
    ).catch((err: unknown) => {
      if (!abort.signal.aborted) setStreamError(err);
    });
    return () => abort.abort();
  }, [draftId, runningId]);
  const report = (evaluation?.report ?? null) as EvaluationReport | null;
  return (
    <section aria-label="Evaluation">
      <h3>Evaluation {evaluation ? <Status value={evaluation.status} /> : null}</h3>
      {!evaluation ? <p class="muted">Not evaluated yet.</p> : null}
      <div class="row">
        {canStart && !running ? (
          <>
            <label for="eval-concurrency">Concurrency</label>
            <input
              id="eval-concurrency"
              class="narrow"
              type="number"
              min={1}
              max={8}
              placeholder="default"
              value={concurrency}
              onInput={(e) => setConcurrency(e.currentTarget.value)}
            />
            <button
              type="button"
              disabled={action.busy}
              onClick={() =>
                action.run(async () =>
                  onChange(
                    await api("post", "/api/drafts/{id}/evaluate", {
                      params: { id: draftId },
                      body: concurrency ? { concurrency: Number(concurrency) } : {},
                    }),
                  ),
                )
              }
            >
              {evaluation ? "Evaluate again" : "Start evaluation"}
            </button>
          </>
        ) : null}
        {running ? (
          <button
            type="button"
            class="danger"
            disabled={action.busy}
            onClick={() =>
              action.run(async () => onChange(await api("post", "/api/drafts/{id}/evaluation/cancel", { params: { id: draftId } })))
            }
          >
            Cancel evaluation
          </button>
        ) : null}
      </div>
      <ErrorNote error={action.error} />
      <ErrorNote error={streamError} />
      {evaluation ? (
        <>
          <div class="row" data-testid="evaluation-progress">
            <progress max={Math.max(evaluation.progress.total, 1)} value={evaluation.progress.finished} aria-label="Evaluation progress" />
            <span>
              {evaluation.progress.finished} of {evaluation.progress.total} cases finished · {evaluation.progress.running} running ·{" "}
              {evaluation.progress.pending} pending
            </span>
          </div>
          <p class="small">
            baseline {evaluation.baseline_version ?? "none"} vs {evaluation.candidate_version} · concurrency {evaluation.concurrency}
          </p>
          <table>
            <thead>
              <tr>
                <th>#</th>
                <th>prompt</th>
                <th>state</th>
                <th>baseline</th>
                <th>candidate</th>
                <th>judge</th>
              </tr>
            </thead>
            <tbody>
              {evaluation.cases.map((c) => {
                const judged = report?.cases.find((r) => r.index === c.index);
                return (
                  <tr key={c.index}>
                    <td>{c.index}</td>
                    <td class="small">{c.prompt}</td>
                    <td>
                      <Status value={c.state} />
                    </td>
                    <td>{c.baseline_score ?? "—"}</td>
                    <td>{c.candidate_score ?? "—"}</td>
                    <td class="small">{c.error ?? judged?.reason ?? ""}</td>
                  </tr>
                );
              })}
            </tbody>
          </table>
          {report ? (
            <div class="card" data-testid="evaluation-report">
              <strong>Verdict: {report.verdict}</strong>
              {report.reasons.length > 0 ? (
                <ul class="small">
                  {report.reasons.map((r) => (
                    <li key={r}>{r}</li>
                  ))}
                </ul>
              ) : null}
              <p class="small">
                mean score baseline {report.summary.baseline_mean ?? "—"} · candidate {report.summary.candidate_mean ?? "—"} · candidate
                wins {report.summary.candidate_wins} · baseline wins {report.summary.baseline_wins} · ties {report.summary.ties}
              </p>
              <p class="small">
                cost: {report.cost.model_calls} model calls ({report.cost.judge_calls} by the judge) · {report.cost.total_tokens} tokens
              </p>
            </div>
          ) : null}
        </>
      ) : null}
    </section>
  );
}

/** Approve (through the gates), reject with a reason, regenerate. */
function Decisions({ draft, evaluation, onDone }: { draft: DraftDetailView; evaluation: Evaluation | null; onDone: () => void }) {
  const action = useAction();
  const [skip, setSkip] = useState(false);
  const [skipReason, setSkipReason] = useState("");
  const [rejectReason, setRejectReason] = useState("");
  const [result, setResult] = useState<string | null>(null);
  if (draft.status !== "pending_review" && draft.status !== "merge_failed")
    return result ? (
      <section aria-label="Decision">
        <h3>Decision</h3>
        <p role="status">{result}</p>
      </section>
    ) : null;
  const passed = evaluation?.status === "passed";
  const running = evaluation?.status === "running";
  const pending = draft.status === "pending_review";
  return (
    <section aria-label="Decision">
      <h3>Decision</h3>
      {pending ? (
        <form
          class="card"
          aria-label="Approve the draft"
          onSubmit={(e) => {
            e.preventDefault();
            void action.run(async () => {
              const r = await api("post", "/api/drafts/{id}/approve", {
                params: { id: draft.id },
                body: skip ? { skip_evaluation: true, reason: skipReason.trim() } : {},
              });
              setResult(`Published ${String(r.skill)} as ${String(r.version)}.`);
              onDone();
            });
          }}
        >
          {passed ? (
            <p class="small">The evaluation passed: approving publishes the draft as the skill's next version.</p>
          ) : (
            <>
              <p class="small" role="note">
                {running
                  ? "The evaluation is still running: wait for its verdict, or approve without it."
                  : evaluation
                    ? `The evaluation ${evaluation.status === "failed" ? "failed" : "was cancelled"}: the gates will refuse an approval unless you skip it with a reason.`
                    : "No evaluation yet: the gates refuse an approval without one (evaluation_required) unless you skip it with a reason, which is recorded with the version."}
              </p>
              <label class="row">
                <input type="checkbox" checked={skip} onChange={(e) => setSkip(e.currentTarget.checked)} /> Skip the evaluation
              </label>
              {skip ? (
                <>
                  <label for="skip-reason">Reason for skipping the evaluation (required)</label>
                  <textarea id="skip-reason" rows={2} required value={skipReason} onInput={(e) => setSkipReason(e.currentTarget.value)} />
                </>
              ) : null}
            </>
          )}
          <button type="submit" disabled={action.busy || (skip && !skipReason.trim())}>
            {skip ? "Approve without evaluation" : "Approve and publish"}
          </button>
        </form>
      ) : null}
      <form
        class="card"
        aria-label="Reject the draft"
        onSubmit={(e) => {
          e.preventDefault();
          void action.run(async () => {
            await api("post", "/api/drafts/{id}/reject", { params: { id: draft.id }, body: { reason: rejectReason.trim() } });
            setResult("Rejected.");
            onDone();
          });
        }}
      >
        <label for="reject-reason">Reason for rejecting</label>
        <input id="reject-reason" required value={rejectReason} onInput={(e) => setRejectReason(e.currentTarget.value)} />
        <button type="submit" class="danger" disabled={action.busy || !rejectReason.trim()}>
          Reject
        </button>
      </form>
      {draft.merge_mode === "three_way" ? (
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              const r = (await api("post", "/api/drafts/{id}/regenerate", { params: { id: draft.id } })) as { draft?: { id?: string } };
              // The new draft supersedes this one: review it next.
              if (r.draft?.id) navigate(`/skills/~drafts/${encodeURIComponent(r.draft.id)}`);
              else onDone();
            })
          }
        >
          Regenerate (a new merge attempt)
        </button>
      ) : null}
      <ErrorNote error={action.error} />
      {result ? <p role="status">{result}</p> : null}
    </section>
  );
}
