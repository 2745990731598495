/**
 * The Candidates tab of the Skills area (docs/learning.md, "Candidates API"): every learning candidate
 * — plugin updates, improvements from down-rated or failing runs, new skills from recurring successful
 * runs — newest first, with its evidence runs linked to their conversations and the draft it became.
 * An admin can run the evidence pass now (`POST /api/candidates/run`) instead of waiting for the cron.
 */
import { useState } from "preact/hooks";
import { api } from "../api/client";
import { Empty, ErrorNote, Json, Link, Loading, Status, Time, useAction, useLoad } from "../ui";

const KINDS = ["plugin_skill_update", "skill_improvement", "new_skill"] as const;

interface CandidateView {
  id: string;
  kind: string;
  skill: string | null;
  status: string;
  plugin_id: string | null;
  merge_mode: string | null;
  evidence: Record<string, unknown>;
  evidence_runs: { run_id: string; session_id: string | null }[];
  draft_id: string | null;
  created_at: number;
}

/** Evidence runs as links to their conversations (a run whose receipt is gone shows as plain text). */
export function EvidenceRuns({ runs }: { runs: { run_id: string; session_id: string | null }[] }) {
  if (runs.length === 0) return <span class="muted">—</span>;
  return (
    <ul class="list small" aria-label="Evidence runs">
      {runs.map((r) => (
        <li key={r.run_id} class="mono">
          {r.session_id ? <Link href={`/chat/${encodeURIComponent(r.session_id)}`}>{r.run_id}</Link> : r.run_id}
        </li>
      ))}
    </ul>
  );
}

export function CandidatesTab() {
  const [kind, setKind] = useState("");
  const [tick, setTick] = useState(0);
  const candidates = useLoad(
    async () =>
      (await api("get", "/api/candidates", { query: { kind: (kind || undefined) as never, limit: 50 } }))
        .candidates as unknown as CandidateView[],
    [kind, tick],
  );
  const action = useAction();
  const [report, setReport] = useState<unknown>(null);
  return (
    <section class="panel" aria-label="Candidates">
      <div class="row spread">
        <h2>Candidates</h2>
        <button
          type="button"
          disabled={action.busy}
          onClick={() =>
            action.run(async () => {
              setReport(await api("post", "/api/candidates/run"));
              setTick((t) => t + 1);
            })
          }
        >
          Look for candidates now
        </button>
      </div>
      <ErrorNote error={action.error} />
      {report ? (
        <details>
          <summary>Last pass</summary>
          <Json value={report} />
        </details>
      ) : null}
      <div class="row filters">
        <label for="candidate-kind">Kind</label>
        <select id="candidate-kind" value={kind} onChange={(e) => setKind(e.currentTarget.value)}>
          <option value="">any</option>
          {KINDS.map((k) => (
            <option key={k} value={k}>
              {k}
            </option>
          ))}
        </select>
      </div>
      <Loading state={candidates}>
        {(list) =>
          list.length === 0 ? (
            <Empty>No candidates{kind ? " of this kind" : " yet"}.</Empty>
          ) : (
            <table>
              <thead>
                <tr>
                  <th>kind</th>
                  <th>skill</th>
                  <th>status</th>
                  <th>evidence</th>
                  <th>draft</th>
                  <th>created</th>
                </tr>
              </thead>
              <tbody>
                {list.map((c) => (
                  <tr key={c.id} data-testid="candidate-row" data-kind={c.kind}>
                    <td>
                      {c.kind}
                      {c.merge_mode ? ` · ${c.merge_mode}` : ""}
                      <div class="mono small muted">{c.id}</div>
                    </td>
                    <td>
                      {c.skill ? <Link href={`/skills/${encodeURIComponent(c.skill)}`}>{c.skill}</Link> : <span class="muted">new</span>}
                    </td>
                    <td>
                      <Status value={c.status} />
                    </td>
                    <td>
                      {c.evidence_runs.length > 0 ? (
                        <details>
                          <summary>{c.evidence_runs.length} runs</summary>
                          <EvidenceRuns runs={c.evidence_runs} />
                        </details>
                      ) : (
                        <span class="small muted">{c.plugin_id ? `plugin ${c.plugin_id}` : "—"}</span>
                      )}
                    </td>
                    <td class="mono small">
                      {c.draft_id ? <Link href={`/skills/~drafts/${encodeURIComponent(c.draft_id)}`}>{c.draft_id}</Link> : "—"}
                    </td>
                    <td>
                      <Time ts={c.created_at} />
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
