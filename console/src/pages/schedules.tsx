/**
 * Schedules (docs/schedules.md): the workspace's scheduled messages with their next run, last run and
 * last error; a new one at a time or on a cron expression — the helper shows the next runs as you type
 * (croner, the library the server uses, so both read the expression alike) — and cancel.
 */
import { useMemo, useState } from "preact/hooks";
import { Cron } from "croner";
import { api } from "../api/client";
import { Empty, ErrorNote, Loading, Time, useAction, useLoad } from "../ui";

const PRESETS: [string, string][] = [
  ["every hour", "0 * * * *"],
  ["every day at 09:00", "0 9 * * *"],
  ["weekdays at 08:30", "30 8 * * 1-5"],
  ["every Monday at 10:00", "0 10 * * 1"],
];

/** The next `n` times `expr` fires in `timezone`, or the reason it cannot be read. */
export function nextRuns(expr: string, timezone: string, n = 5): { runs: Date[]; error: string | null } {
  if (!expr.trim()) return { runs: [], error: null };
  try {
    const cron = new Cron(expr.trim(), { timezone: timezone || undefined, paused: true });
    return { runs: cron.nextRuns(n), error: null };
  } catch (err) {
    return { runs: [], error: err instanceof Error ? err.message : String(err) };
  }
}

export function SchedulesPage() {
  const [tick, setTick] = useState(0);
  const list = useLoad(() => api("get", "/api/schedules"), [tick]);
  const action = useAction();
  return (
    <section class="panel page" aria-label="Schedules">
      <h2>Schedules</h2>
      <NewSchedule onCreated={() => setTick((t) => t + 1)} />
      <h3>Scheduled</h3>
      <ErrorNote error={action.error} />
      <Loading state={list}>
        {(l) =>
          l.schedules.length === 0 ? (
            <Empty>No schedule yet: add one above.</Empty>
          ) : (
            <div class="table-wrap" tabIndex={0}>
              <table>
                <thead>
                  <tr>
                    <th>message</th>
                    <th>when</th>
                    <th>next run</th>
                    <th>last run</th>
                    <th>session</th>
                    <th></th>
                  </tr>
                </thead>
                <tbody>
                  {l.schedules.map((s) => (
                    <tr key={s.id} data-testid="schedule">
                      <td>{s.message}</td>
                      <td class="mono small">
                        {s.cron ?? s.at} <span class="muted">({s.timezone})</span>
                      </td>
                      <td>{s.next_run_at ? <Time ts={Date.parse(s.next_run_at)} /> : "—"}</td>
                      <td>
                        {s.last_fired_at ? <Time ts={Date.parse(s.last_fired_at)} /> : "—"}
                        {s.last_error ? <div class="error small">{s.last_error}</div> : null}
                      </td>
                      <td class="mono small">{s.session_id ?? "new each time"}</td>
                      <td>
                        <button
                          type="button"
                          class="danger small"
                          disabled={action.busy}
                          aria-label={`Cancel schedule: ${s.message.slice(0, 40)}`}
                          onClick={() =>
                            action.run(async () => {
                              await api("delete", "/api/schedules/{id}", { params: { id: s.id } });
                              setTick((t) => t + 1);
                            })
                          }
                        >
                          Cancel
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </div>
          )
        }
      </Loading>
    </section>
  );
}

function NewSchedule({ onCreated }: { onCreated: () => void }) {
  const [message, setMessage] = useState("");
  const [mode, setMode] = useState<"cron" | "at">("cron");
  const [cron, setCron] = useState("0 9 * * *");
  const [at, setAt] = useState("");
  const [timezone, setTimezone] = useState(() => Intl.DateTimeFormat().resolvedOptions().timeZone || "UTC");
  const [sessionId, setSessionId] = useState("");
  const action = useAction();
  const preview = useMemo(() => (mode === "cron" ? nextRuns(cron, timezone) : { runs: [], error: null }), [mode, cron, timezone]);
  const submit = (e: Event) => {
    e.preventDefault();
    void action.run(async () => {
      await api("post", "/api/schedules", {
        body: {
          message: message.trim(),
          timezone,
          ...(mode === "cron" ? { cron: cron.trim() } : { at: new Date(at).toISOString() }),
          ...(sessionId.trim() ? { session_id: sessionId.trim() } : {}),
        },
      });
      setMessage("");
      onCreated();
    });
  };
  return (
    <form class="grid wide" onSubmit={submit} aria-label="New schedule">
      <label for="schedule-message">Message to send</label>
      <textarea id="schedule-message" rows={2} value={message} onInput={(e) => setMessage(e.currentTarget.value)} required />
      <fieldset class="row">
        <legend>When</legend>
        <label class="check">
          <input type="radio" name="schedule-mode" checked={mode === "cron"} onChange={() => setMode("cron")} /> Repeating (cron)
        </label>
        <label class="check">
          <input type="radio" name="schedule-mode" checked={mode === "at"} onChange={() => setMode("at")} /> Once
        </label>
      </fieldset>
      {mode === "cron" ? (
        <>
          <label for="schedule-cron">Cron expression (minute hour day month weekday)</label>
          <input id="schedule-cron" class="mono" value={cron} onInput={(e) => setCron(e.currentTarget.value)} />
          <div class="row small">
            {PRESETS.map(([label, expr]) => (
              <button key={expr} type="button" class="secondary small" onClick={() => setCron(expr)}>
                {label}
              </button>
            ))}
          </div>
          <div class="small" aria-live="polite" data-testid="cron-preview">
            {preview.error ? (
              <span class="error">{preview.error}</span>
            ) : preview.runs.length > 0 ? (
              <>
                Next runs:
                <ul>
                  {preview.runs.map((d) => (
                    <li key={d.getTime()}>{d.toLocaleString(undefined, { timeZone: timezone || undefined })}</li>
                  ))}
                </ul>
              </>
            ) : null}
          </div>
        </>
      ) : (
        <>
          <label for="schedule-at">At</label>
          <input id="schedule-at" type="datetime-local" value={at} onInput={(e) => setAt(e.currentTarget.value)} required />
        </>
      )}
      <label for="schedule-tz">Time zone</label>
      <input id="schedule-tz" value={timezone} onInput={(e) => setTimezone(e.currentTarget.value)} />
      <label for="schedule-session">Session (blank: a new session each time)</label>
      <input id="schedule-session" value={sessionId} onInput={(e) => setSessionId(e.currentTarget.value)} />
      <button type="submit" disabled={action.busy || !message.trim() || (mode === "cron" && preview.error !== null)}>
        Add schedule
      </button>
      <ErrorNote error={action.error} />
    </form>
  );
}
